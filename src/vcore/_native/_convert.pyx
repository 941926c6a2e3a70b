# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kubernetes resource quantities and v1 Node/Pod objects -> the flat, integer-only inputs of vcore's core.

This module owns:

* ``parse_quantity``: the exact ``k8s.io/apimachinery/pkg/api/resource`` quantity grammar, evaluated with
  integer arithmetic only and rounded up like ``Quantity.Value()`` / ``Quantity.MilliValue()``.
* ``node_spec`` / ``pod_spec`` / ``pod_specs``: validation and conversion of API-shaped dicts (or the official
  ``kubernetes`` client's ``V1Node`` / ``V1Pod`` models) into the flat dicts of the interface contract, with the
  effective pod request computed exactly as kube-scheduler's ``resourcehelper.PodRequests``.

Canonical units: cpu in milli-cores, every other resource in whole units (bytes, devices, pods).
Every error is a ValueError or TypeError whose message starts with the object ("pod ns/name", "node name")
and the field path, so a user can find the offending line in their manifest.

Nothing here imports vcore: ``_native`` sits at the bottom of the dependency graph.
"""

from libc.stdint cimport int64_t, uint64_t

cdef extern from "Python.h":
    # A quantity is pure ASCII, so the parser reads the string's compact 1-byte buffer directly.
    bint PyUnicode_IS_ASCII(object o)
    void *PyUnicode_DATA(object o)

import datetime
import math
import operator
import re

__all__ = ["api_dict", "parse_quantity", "node_spec", "pod_spec", "pod_specs", "label_selector", "node_selector_term"]

cdef int64_t INT64_MAX = 9223372036854775807
cdef uint64_t UINT64_MAX = 18446744073709551615ULL
cdef object PY_INT64_MAX = 9223372036854775807

# 10**0 .. 10**19 all fit in uint64.
cdef uint64_t POW10[20]
POW10[0] = 1
for _i in range(1, 20):
    POW10[_i] = POW10[_i - 1] * 10

# Result codes of the quantity kernel; the caller turns them into messages (errors are rare, so the kernel
# itself never formats strings).
cdef enum:
    Q_EXACT = 0       # value * 10**scale was an integer
    Q_ROUNDED = 1     # rounded up to the next integer
    Q_MALFORMED = -1
    Q_NEGATIVE = -2
    Q_OVERFLOW = -3
    Q_BADTYPE = -4    # neither str, int nor float
    Q_NULL = -5       # None or bool: a YAML slip (``cpu: null``, ``cpu: yes``), reported as a bad value

# Decimal scale that turns a quantity into canonical units (MilliValue for cpu, Value otherwise), and the
# nano scale every quantity is exact in after Kubernetes' own parse (it rounds up to 1e-9 when parsing).
cdef enum:
    SCALE_UNIT = 0
    SCALE_MILLI = 3
    SCALE_NANO = 9

# kube-scheduler's defaults for a container that does not request cpu / memory (NonZero accounting):
# DefaultMilliCPURequest = 100 (0.1 core), DefaultMemoryRequest = 200 * 1024 * 1024.
cdef object NONZERO_CPU_MILLI = 100
cdef object NONZERO_MEM_BYTES = 209715200

cdef str CPU = "cpu"
cdef str MEMORY = "memory"


# ----------------------------------------------------------------------------------------------------------
# Quantity kernel
# ----------------------------------------------------------------------------------------------------------

cdef inline bint _is_digit(Py_UCS4 c) noexcept:
    return c >= 48 and c <= 57   # '0'..'9' only: str.isdigit() would also accept non-ASCII digits


cdef inline object _pow10(int64_t k):
    cdef object ko = k          # a Python int: C ``10 ** k`` would be a double
    return 10 ** ko


cdef object _scale_exact(str s, Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t f0, Py_ssize_t f1, int64_t k,
                         int bexp, bint check, int *status):
    """Arbitrary-precision path: ceil(digits * 10**k * 2**bexp) for mantissas or exponents the uint64 path
    cannot hold. Python ints keep it exact; the guards keep it from building astronomically large ints."""
    cdef str digits = s[i0:i1] + s[f0:f1]
    cdef object n = int(digits)
    cdef object den, num, r
    if n == 0:
        status[0] = Q_EXACT
        return 0
    if k >= 0:
        if check and k > 40:      # n >= 1, so the result is >= 10**41
            status[0] = Q_OVERFLOW
            return None
        r = (n * _pow10(k)) << bexp
        status[0] = Q_EXACT
    elif -k > len(digits) + 40:
        # n * 2**bexp < 10**len(digits) * 2**60 < 10**(len(digits)+19): the value is a positive fraction < 1
        status[0] = Q_ROUNDED
        return 1
    else:
        den = _pow10(-k)
        num = n << bexp
        r = -((-num) // den)
        status[0] = Q_EXACT if num % den == 0 else Q_ROUNDED
    if check and r > PY_INT64_MAX:
        status[0] = Q_OVERFLOW
        return None
    return r


cdef inline Py_ssize_t _scan_digits(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, uint64_t *mant, int *sig,
                                    bint *big) noexcept:
    """Accumulate the decimal digits from p[i] into *mant (at most 19 significant ones, which fit in uint64;
    *big flags more); returns the index of the first non-digit."""
    cdef unsigned char c
    while i < n:
        c = p[i]
        if not _is_digit(c):
            break
        if sig[0] < 19:
            if mant[0] != 0 or c != 48:   # leading zeros are not significant
                mant[0] = mant[0] * 10 + (<int>c - 48)
                sig[0] += 1
        else:
            big[0] = True
        i += 1
    return i


cdef object _quantity_str(str s, int scale, bint check, int *status):
    """ceil(q * 10**scale) for the quantity string ``s``, or None with a Q_* error in ``status``.

    Grammar (apimachinery's parseQuantityString + suffixer): [+-]? digits [. digits] suffix, at least one
    digit in the number, suffix one of "" n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E)[+-]?digits.
    """
    cdef Py_ssize_t n = len(s)
    cdef Py_ssize_t i = 0, i0, i1, f0, f1, j
    cdef bint neg = False
    cdef unsigned char c, c2
    cdef const unsigned char *p
    cdef uint64_t mant = 0, x, d, r
    cdef int sig = 0           # significant mantissa digits accumulated into ``mant``
    cdef bint big = False      # mantissa does not fit the uint64 fast path
    cdef int64_t dexp = 0, e = 0, k
    cdef int bexp = 0
    cdef bint eneg = False

    if n == 0 or not PyUnicode_IS_ASCII(s):   # any non-ASCII character is outside the grammar
        status[0] = Q_MALFORMED
        return None
    p = <const unsigned char *>PyUnicode_DATA(s)
    c = p[0]
    if c == 43 or c == 45:    # '+' '-'
        neg = c == 45
        i = 1
    i0 = i
    i = _scan_digits(p, i, n, &mant, &sig, &big)
    i1 = i
    f0 = f1 = i
    if i < n and p[i] == 46:   # '.'
        i += 1
        f0 = i
        i = _scan_digits(p, i, n, &mant, &sig, &big)
        f1 = i
    if i1 == i0 and f1 == f0:  # "", ".", "+", "Ki": Kubernetes' regexp needs a digit in the number
        status[0] = Q_MALFORMED
        return None

    # suffix
    j = n - i
    if j == 0:
        pass
    elif j == 1:
        c = p[i]
        if c == 109: dexp = -3          # m
        elif c == 107: dexp = 3         # k
        elif c == 77: dexp = 6          # M
        elif c == 71: dexp = 9          # G
        elif c == 84: dexp = 12         # T
        elif c == 80: dexp = 15         # P
        elif c == 69: dexp = 18         # E (exa, not an exponent: "1E" == 10**18)
        elif c == 117: dexp = -6        # u
        elif c == 110: dexp = -9        # n
        else:
            status[0] = Q_MALFORMED
            return None
    else:
        c = p[i]
        c2 = p[i + 1]
        if j == 2 and c2 == 105:        # ?i
            if c == 75: bexp = 10       # Ki
            elif c == 77: bexp = 20
            elif c == 71: bexp = 30
            elif c == 84: bexp = 40
            elif c == 80: bexp = 50
            elif c == 69: bexp = 60     # Ei
            else:
                status[0] = Q_MALFORMED
                return None
        elif c == 101 or c == 69:       # e/E exponent
            i += 1
            c = p[i]
            if c == 43 or c == 45:
                eneg = c == 45
                i += 1
            if i == n:
                status[0] = Q_MALFORMED
                return None
            while i < n:
                c = p[i]
                if not _is_digit(c):
                    status[0] = Q_MALFORMED
                    return None
                if e < 1000000:         # clamp: any larger exponent already over/underflows
                    e = e * 10 + (<int>c - 48)
                i += 1
            dexp = -e if eneg else e
        else:
            status[0] = Q_MALFORMED
            return None

    if mant == 0 and not big:
        status[0] = Q_EXACT            # "-0" and "0Ki" are zero, not negative
        return 0
    if neg:
        status[0] = Q_NEGATIVE
        return None

    # value = digits * 10**(dexp - fraction_digits) * 2**bexp; we want ceil(value * 10**scale)
    k = dexp - (f1 - f0) + scale
    if big or not check:
        return _scale_exact(s, i0, i1, f0, f1, k, bexp, check, status)
    # digits dropped as leading zeros were not counted in ``sig``, but trailing integer zeros were; the
    # exponent arithmetic above stays correct because ``mant`` is the exact integer of all digits.
    if k >= 0:
        if k > 19:
            status[0] = Q_OVERFLOW
            return None
        r = mant
        if r > <uint64_t>INT64_MAX // POW10[k]:
            status[0] = Q_OVERFLOW
            return None
        r *= POW10[k]
        if bexp:
            if r > (<uint64_t>INT64_MAX >> bexp):
                status[0] = Q_OVERFLOW
                return None
            r <<= bexp
        status[0] = Q_EXACT
        return <int64_t>r
    if -k > 19:
        return _scale_exact(s, i0, i1, f0, f1, k, bexp, check, status)
    x = mant
    if bexp:
        if x > (UINT64_MAX >> bexp):
            return _scale_exact(s, i0, i1, f0, f1, k, bexp, check, status)
        x <<= bexp
    d = POW10[-k]
    r = x // d
    if x % d:
        r += 1
        status[0] = Q_ROUNDED
    else:
        status[0] = Q_EXACT
    if r > <uint64_t>INT64_MAX:
        status[0] = Q_OVERFLOW
        return None
    return <int64_t>r


cdef object _quantity(object v, int scale, bint check, int *status):
    """Dispatch on the Python type: str (the API form), int (whole units), float (via its repr, exact)."""
    cdef object r
    if type(v) is str:
        return _quantity_str(<str>v, scale, check, status)
    if isinstance(v, bool) or v is None:
        status[0] = Q_NULL
        return None
    if isinstance(v, int):
        if v < 0:
            status[0] = Q_NEGATIVE
            return None
        r = int(v) * _pow10(scale)
        if check and r > PY_INT64_MAX:
            status[0] = Q_OVERFLOW
            return None
        status[0] = Q_EXACT
        return r
    if isinstance(v, float):
        if not math.isfinite(v):
            status[0] = Q_MALFORMED
            return None
        if v < 0:
            status[0] = Q_NEGATIVE
            return None
        # repr() is the shortest string that round-trips, so 0.5 stays exactly 1/2 and 0.1 stays 1/10.
        return _quantity_str(repr(float(v)), scale, check, status)
    if isinstance(v, str):
        return _quantity_str(str(v), scale, check, status)
    if hasattr(type(v), "__index__"):
        # integer types that are not int subclasses (numpy.int64): whole units, like int
        return _quantity(operator.index(v), scale, check, status)
    status[0] = Q_BADTYPE
    return None


cdef str _where(str obj, str field):
    if obj and field:
        return f"{obj}: {field}: "
    if obj or field:
        return f"{obj or field}: "
    return ""


cdef int _raise_quantity(int status, object v, str obj, str field) except -1:
    cdef str where = _where(obj, field)
    if status == Q_NEGATIVE:
        raise ValueError(f"{where}quantity {v!r} must not be negative")
    if status == Q_OVERFLOW:
        raise ValueError(f"{where}quantity {v!r} is too large (canonical value exceeds 2**63-1)")
    if status == Q_BADTYPE:
        raise TypeError(f"{where}quantity must be a string or a number, got {type(v).__name__}")
    raise ValueError(f"{where}invalid quantity {v!r}")


def parse_quantity(value, *, bint milli=False, str obj="", str field=""):
    """Parse a Kubernetes quantity into an int: ``MilliValue()`` if ``milli`` else ``Value()`` (both ceil).

    ``value`` is a quantity string ("100m", "1.5Gi", "1e3", "1E" = 10**18), an int (whole units) or a finite
    non-negative float. Malformed, negative, None/bool, or > 2**63-1 raises ValueError naming ``obj`` and
    ``field``; other types raise TypeError.
    """
    cdef int status = 0
    cdef object r = _quantity(value, SCALE_MILLI if milli else SCALE_UNIT, True, &status)
    if status < 0:
        _raise_quantity(status, value, obj, field)
    return r


# ----------------------------------------------------------------------------------------------------------
# Shared helpers for objects
# ----------------------------------------------------------------------------------------------------------

cdef object _api_client = None


cdef dict _to_api_dict(object o, str kind):
    """A dict as is; a kubernetes client model (it has ``attribute_map``) serialized to its API shape."""
    global _api_client
    if type(o) is dict:
        return <dict>o
    if isinstance(o, dict):
        return dict(o)
    if hasattr(o, "attribute_map"):
        if _api_client is None:
            # Imported lazily: the client is heavy and most callers hand us dicts.
            from kubernetes.client import ApiClient
            _api_client = ApiClient()
        d = _api_client.sanitize_for_serialization(o)
        if type(d) is dict:
            return <dict>d
    raise TypeError(f"{kind}: expected a dict in API shape or a kubernetes V1{kind.capitalize()}, "
                    f"got {type(o).__name__}")


def api_dict(o, str kind):
    """A Kubernetes object as a dict in API shape: a dict as is, a kubernetes client model (V1Node, V1Pod, ...)
    serialized; anything else -> TypeError naming the expected kind ("node", "pod")."""
    return _to_api_dict(o, kind)


cdef int _fail(str ctx, str path, str problem, bint type_error=False) except -1:
    if type_error:
        raise TypeError(f"{ctx}: {path}: {problem}")
    raise ValueError(f"{ctx}: {path}: {problem}")


# A field path is passed around as (base, index, tail), e.g. ("spec.containers", 0, ".resources"), and only
# joined into a string when an error is raised: building paths eagerly cost more than the conversion itself.
cdef str _path(str base, Py_ssize_t idx, str tail):
    if idx < 0:
        return base + tail
    return f"{base}[{idx}]{tail}"


cdef inline dict _opt_dict(object v, str ctx, str base, Py_ssize_t idx=-1, str tail=""):
    """A mapping field that may be absent (None -> None)."""
    if v is None or type(v) is dict:
        return <dict>v
    if isinstance(v, dict):
        return dict(v)
    _fail(ctx, _path(base, idx, tail), f"expected an object, got {type(v).__name__}", True)


cdef inline dict _req_dict(object v, str ctx, str base, Py_ssize_t idx=-1, str tail=""):
    """A mapping field that must be present."""
    if v is None:
        _fail(ctx, _path(base, idx, tail), "expected an object, got NoneType", True)
    return _opt_dict(v, ctx, base, idx, tail)


cdef inline list _opt_list(object v, str ctx, str base, Py_ssize_t idx=-1, str tail=""):
    if v is None or type(v) is list:
        return <list>v
    if isinstance(v, tuple):
        return list(v)
    _fail(ctx, _path(base, idx, tail), f"expected a list, got {type(v).__name__}", True)


cdef inline str _opt_str(object v, str ctx, str base, Py_ssize_t idx=-1, str tail=""):
    """A string field that may be absent; absent and None both read as ""."""
    if type(v) is str:
        return <str>v
    if v is None:
        return ""
    if isinstance(v, str):
        return str(v)
    _fail(ctx, _path(base, idx, tail), f"expected a string, got {type(v).__name__}", True)


cdef list _string_pairs(dict d, str ctx, str path):
    """A str->str map (labels, nodeSelector) as a list of (key, value) in the map's order."""
    cdef list out = []
    for k, v in d.items():
        if type(k) is not str:
            _fail(ctx, path, f"key {k!r} is not a string", True)
        if type(v) is not str:
            if v is None:
                v = ""
            else:
                _fail(ctx, f"{path}.{k}", f"expected a string, got {type(v).__name__}", True)
        out.append((k, v))
    return out


# ----------------------------------------------------------------------------------------------------------
# Node
# ----------------------------------------------------------------------------------------------------------

cdef frozenset TAINT_EFFECTS = frozenset(("NoSchedule", "PreferNoSchedule", "NoExecute"))
cdef frozenset TOLERATION_EFFECTS = frozenset(("", "NoSchedule", "PreferNoSchedule", "NoExecute"))


cdef dict _resource_list(dict rl, str ctx, str base, Py_ssize_t idx, str tail, int mode, int *inexact):
    """Parse a ResourceList: mode 0 -> canonical units (cpu milli), mode 1 -> nano units for every resource.
    ``inexact`` is set when a canonical value had to be rounded up."""
    cdef dict out = {}
    cdef int status = 0
    cdef int scale
    for k, v in rl.items():
        if type(k) is not str:
            _fail(ctx, _path(base, idx, tail), f"resource name {k!r} is not a string", True)
        if mode:
            scale = SCALE_NANO
        elif <str>k == CPU:
            scale = SCALE_MILLI
        else:
            scale = SCALE_UNIT
        r = _quantity(v, scale, not mode, &status)
        if status < 0:
            _raise_quantity(status, v, ctx, f"{_path(base, idx, tail)}.{k}")
        if status == Q_ROUNDED:
            inexact[0] = 1
        out[k] = r
    return out


cdef int DNS1123_SUBDOMAIN_MAX = 253


cdef str _dns1123_subdomain_problem(str name):
    """None when ``name`` is a DNS-1123 subdomain (Kubernetes' IsDNS1123Subdomain, which ValidateNodeName applies):
    at most 253 characters, '.'-separated parts of lowercase letters, digits and '-' that start and end with a letter
    or digit. Otherwise the problem. Runs for every node, so it reads the string's ASCII buffer directly."""
    cdef Py_ssize_t n = len(name), i
    cdef const unsigned char *p
    cdef unsigned char c, prev = 46  # '.': the start of a part
    if n > DNS1123_SUBDOMAIN_MAX:
        return f"must be at most {DNS1123_SUBDOMAIN_MAX} characters, got {n}"
    if PyUnicode_IS_ASCII(name):
        p = <const unsigned char *>PyUnicode_DATA(name)
        for i in range(n):
            c = p[i]
            if (97 <= c <= 122) or (48 <= c <= 57):  # a-z, 0-9
                pass
            elif c == 45:  # '-': never first in a part
                if prev == 46:
                    break
            elif c == 46:  # '.': never after '.' (an empty part) or '-' (a part ending in '-')
                if prev == 46 or prev == 45:
                    break
            else:
                break
            prev = c
        else:
            if prev != 46 and prev != 45:  # ends with a letter or digit (an empty name ends at '.')
                return None
    return (f"{name!r} is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', with a letter or digit "
            "at both ends of each '.'-separated part)")


cdef dict _node_spec(object node_in):
    cdef dict node = _to_api_dict(node_in, "node")
    cdef dict meta = _opt_dict(node.get("metadata"), "node <unnamed>", "metadata")
    cdef str name = _opt_str(meta.get("name") if meta is not None else None, "node <unnamed>", "metadata.name")
    if not name:
        raise ValueError("node <unnamed>: metadata.name: required")
    cdef str problem = _dns1123_subdomain_problem(name)
    if problem is not None:
        shown = name if len(name) <= 80 else f"{name[:60]}... ({len(name)} characters)"
        raise ValueError(f"node {shown}: metadata.name: {problem}")
    cdef str ctx = "node " + name
    cdef dict spec = _opt_dict(node.get("spec"), ctx, "spec")
    cdef dict status = _opt_dict(node.get("status"), ctx, "status")
    cdef dict labels = _opt_dict(meta.get("labels"), ctx, "metadata.labels")
    cdef dict alloc = None
    cdef list taints_in = None
    cdef list taints = []
    cdef object unsched = None
    cdef int inexact = 0
    cdef Py_ssize_t i
    cdef dict t
    cdef str key, value, effect

    if status is not None:
        alloc = _opt_dict(status.get("allocatable"), ctx, "status.allocatable")
    if spec is not None:
        taints_in = _opt_list(spec.get("taints"), ctx, "spec.taints")
        unsched = spec.get("unschedulable")
        if unsched is not None and type(unsched) is not bool:
            _fail(ctx, "spec.unschedulable", f"expected a bool, got {type(unsched).__name__}", True)
    if taints_in:
        for i in range(len(taints_in)):
            t = _req_dict(taints_in[i], ctx, "spec.taints", i)
            key = _opt_str(t.get("key"), ctx, "spec.taints", i, ".key")
            if not key:
                _fail(ctx, _path("spec.taints", i, ".key"), "required")
            value = _opt_str(t.get("value"), ctx, "spec.taints", i, ".value")
            effect = _opt_str(t.get("effect"), ctx, "spec.taints", i, ".effect")
            if effect not in TAINT_EFFECTS:
                _fail(ctx, _path("spec.taints", i, ".effect"),
                      f"unsupported effect {effect!r} (must be NoSchedule, PreferNoSchedule or NoExecute)")
            taints.append((key, value, effect))
    cdef dict out = {
        "name": name,
        "labels": _string_pairs(labels, ctx, "metadata.labels") if labels else [],
        "allocatable": _resource_list(alloc, ctx, "status.allocatable", -1, "", 0, &inexact) if alloc else {},
        "taints": taints,
        "unschedulable": unsched is True,
    }
    if _may_have_gpus(out["allocatable"], labels):
        out["may_have_gpus"] = True
    if status is not None and status.get("images"):
        out["images"] = _node_images(_opt_list(status.get("images"), ctx, "status.images"), ctx)
    return out


cdef list _node_images(list images, str ctx):
    """status.images as [(names, sizeBytes)] (ImageLocality)."""
    cdef list out = []
    cdef dict image
    cdef Py_ssize_t i
    for i in range(len(images)):
        image = _req_dict(images[i], ctx, "status.images", i)
        size = image.get("sizeBytes")
        if size is None:
            size = 0
        elif type(size) is not int:
            _fail(ctx, f"status.images[{i}].sizeBytes", f"expected an integer, got {type(size).__name__}", True)
        elif not 0 <= size <= PY_INT64_MAX:
            _fail(ctx, f"status.images[{i}].sizeBytes", f"must be between 0 and 2**63-1, got {size}")
        out.append((_label_keys(image.get("names"), ctx, f"status.images[{i}].names"), size))
    return out


cdef bint _may_have_gpus(dict alloc, object labels):
    """GPUs in allocatable (nvidia.com/gpu, nvidia.com/mig-*, Volcano's device plugin's volcano.sh/gpu-number) or
    GPU feature discovery labels."""
    if "volcano.sh/gpu-number" in alloc:
        return True
    for k in alloc:
        if (<str>k).startswith("nvidia.com/"):
            return True
    return bool(labels) and ("nvidia.com/gpu.product" in labels or "nvidia.com/gpu.count" in labels)


def node_spec(node):
    """Convert a v1 Node (API-shaped dict or kubernetes ``V1Node``) into the core's flat node dict.

    Returns ``{"name", "labels": [(k, v)], "allocatable": {resource: int}, "taints": [(key, value, effect)],
    "unschedulable": bool}`` with cpu in milli-cores and everything else in whole units (ceil). ``metadata.name``
    must be a DNS-1123 subdomain of at most 253 characters, as Kubernetes requires of a node's name.
    """
    return _node_spec(node)


# ----------------------------------------------------------------------------------------------------------
# Pod: effective requests (resourcehelper.PodRequests)
# ----------------------------------------------------------------------------------------------------------

cdef inline void _add_into(dict acc, dict d):
    for k, v in d.items():
        prev = acc.get(k)
        acc[k] = v if prev is None else prev + v


cdef inline void _max_into(dict acc, dict d):
    for k, v in d.items():
        prev = acc.get(k)
        if prev is None or v > prev:
            acc[k] = v


cdef dict _aggregate(list conts, list inits, list sidecar):
    """AggregateContainerRequests: sum of containers and sidecars, then the per-resource max with every
    init container's view (a regular init container runs next to the sidecars started before it)."""
    cdef dict result = {}
    cdef dict side, imax, tmp, d
    cdef Py_ssize_t j
    for d in conts:
        _add_into(result, d)
    if inits:
        side = {}
        imax = {}
        for j in range(len(inits)):
            d = <dict>inits[j]
            if sidecar[j]:
                _add_into(result, d)
                _add_into(side, d)
                _max_into(imax, side)
            else:
                tmp = dict(d)
                _add_into(tmp, side)
                _max_into(imax, tmp)
        _max_into(result, imax)
    return result


cdef object _aggregate_one(list conts, list inits, list sidecar, str res, object missing):
    """The same formula for one resource, a container without a request counting ``missing``."""
    cdef object total = 0, side = 0, imax = 0, v, cand
    cdef Py_ssize_t j
    cdef dict d
    for d in conts:
        v = d.get(res)
        total += missing if v is None else v
    for j in range(len(inits)):
        d = <dict>inits[j]
        v = d.get(res)
        if v is None:
            v = missing
        if sidecar[j]:
            total += v
            side += v
            cand = side
        else:
            cand = v + side
        if cand > imax:
            imax = cand
    return total if total >= imax else imax


cdef dict _container_requests(dict c, str ctx, str base, Py_ssize_t i, int mode, int *inexact):
    """A container's requests after API-server defaulting: a resource with a limit but no request
    requests its limit."""
    cdef dict res = _opt_dict(c.get("resources"), ctx, base, i, ".resources")
    cdef dict req, lim, out
    if res is None:
        return {}
    req = _opt_dict(res.get("requests"), ctx, base, i, ".resources.requests")
    lim = _opt_dict(res.get("limits"), ctx, base, i, ".resources.limits")
    out = _resource_list(req, ctx, base, i, ".resources.requests", mode, inexact) if req else {}
    if lim:
        lim = _resource_list(lim, ctx, base, i, ".resources.limits", mode, inexact)
        for k, v in lim.items():
            if k not in out:
                out[k] = v
    return out


cdef bint _pod_level_resource(str name):
    # resourcehelper.IsSupportedPodLevelResource
    return name == CPU or name == MEMORY or name.startswith("hugepages-")


cdef class _PodResources:
    """Everything PodRequests reads, parsed in one unit mode."""
    cdef list conts
    cdef list inits
    cdef list sidecar
    cdef dict overhead
    cdef dict pod_req
    cdef dict pod_lim


cdef _PodResources _collect(dict spec, str ctx, int mode, int *inexact):
    cdef _PodResources pr = _PodResources.__new__(_PodResources)
    cdef list cl = _opt_list(spec.get("containers"), ctx, "spec.containers")
    cdef list il = _opt_list(spec.get("initContainers"), ctx, "spec.initContainers")
    cdef dict c, oh, pres
    cdef Py_ssize_t i
    cdef str rp
    pr.conts = []
    pr.inits = []
    pr.sidecar = []
    if cl:
        for i in range(len(cl)):
            c = _req_dict(cl[i], ctx, "spec.containers", i)
            pr.conts.append(_container_requests(c, ctx, "spec.containers", i, mode, inexact))
    if il:
        for i in range(len(il)):
            c = _req_dict(il[i], ctx, "spec.initContainers", i)
            pr.inits.append(_container_requests(c, ctx, "spec.initContainers", i, mode, inexact))
            rp = _opt_str(c.get("restartPolicy"), ctx, "spec.initContainers", i, ".restartPolicy")
            pr.sidecar.append(rp == "Always")
    oh = _opt_dict(spec.get("overhead"), ctx, "spec.overhead")
    pr.overhead = _resource_list(oh, ctx, "spec.overhead", -1, "", mode, inexact) if oh else None
    pr.pod_req = None
    pr.pod_lim = None
    pres = _opt_dict(spec.get("resources"), ctx, "spec.resources")
    if pres:
        oh = _opt_dict(pres.get("requests"), ctx, "spec.resources.requests")
        if oh:
            pr.pod_req = _resource_list(oh, ctx, "spec.resources.requests", -1, "", mode, inexact)
        oh = _opt_dict(pres.get("limits"), ctx, "spec.resources.limits")
        if oh:
            pr.pod_lim = _resource_list(oh, ctx, "spec.resources.limits", -1, "", mode, inexact)
    return pr


cdef dict _pod_level_requests(_PodResources pr, dict aggregated):
    """Pod-level requests (PodLevelResources) after API-server defaulting, restricted to the supported
    resources; None when the pod sets none. A pod-level limit without a request defaults the request to the
    limit only if no container requests that resource, otherwise to the containers' aggregate."""
    cdef dict eff = {}
    cdef bint any_container
    cdef dict d
    if pr.pod_req:
        for k, v in pr.pod_req.items():
            if _pod_level_resource(k):
                eff[k] = v
    if pr.pod_lim:
        for k, v in pr.pod_lim.items():
            if k in eff or not _pod_level_resource(k):
                continue
            any_container = False
            for d in pr.conts:
                if k in d:
                    any_container = True
                    break
            if not any_container:
                for d in pr.inits:
                    if k in d:
                        any_container = True
                        break
            eff[k] = aggregated.get(k, 0) if any_container else v
    return eff if eff else None


cdef object _ceil_div(object a, object b):
    return -((-a) // b)


cdef tuple _pod_requests(dict spec, str ctx):
    """(requests dict in canonical units without zeros, nonzero cpu milli, nonzero memory bytes, score cpu milli,
    score memory bytes).

    The two non-zero pairs are kube-scheduler's two readings of a pod with a container that does not ask for cpu or
    memory (DefaultMilliCPURequest 100m, DefaultMemoryRequest 200Mi stand in for it):

    * nonzero: what the pod adds to its node's NonZeroRequested once bound (PodInfo.CalculateResource): each
      container without a request counts the default, except that a pod with pod-level requests takes the default
      only for a resource it requests nowhere (not at pod level, in no container, not in its overhead); pod-level
      requests replace the containers' sum;
    * score: what NodeResourcesFit's scorer adds for the pod being placed (resourceAllocationScorer leaves pod-level
      resources out): the containers' requests with the defaults, plus the overhead. It differs from the first
      only for a pod with pod-level requests.
    """
    cdef int inexact = 0
    cdef _PodResources pr = _collect(spec, ctx, 0, &inexact)
    cdef int mode = 0
    cdef object nz_cpu_default = NONZERO_CPU_MILLI, nz_mem_default = NONZERO_MEM_BYTES
    cdef dict reqs, podlevel = None, out
    cdef object nz_cpu, nz_mem, score_cpu, score_mem, v
    if inexact:
        # Kubernetes adds quantities exactly and rounds only the pod total (MilliValue/Value of the sum), so
        # sub-unit requests ("0.5m" cpu, "100m" memory) are redone in nano units, where every parsed
        # Kubernetes quantity is exact, and rounded once at the end.
        mode = 1
        pr = _collect(spec, ctx, 1, &inexact)
        nz_cpu_default = NONZERO_CPU_MILLI * 1000000
        nz_mem_default = NONZERO_MEM_BYTES * 1000000000
    nz_cpu = _aggregate_one(pr.conts, pr.inits, pr.sidecar, CPU, nz_cpu_default)
    nz_mem = _aggregate_one(pr.conts, pr.inits, pr.sidecar, MEMORY, nz_mem_default)
    if not pr.inits and len(pr.conts) == 1:
        reqs = <dict>pr.conts[0]     # built by _collect for this call only, so it may become the result
    else:
        reqs = _aggregate(pr.conts, pr.inits, pr.sidecar)
    if pr.pod_req is not None or pr.pod_lim is not None:
        podlevel = _pod_level_requests(pr, reqs)
        if podlevel is not None:
            reqs.update(podlevel)
    if pr.overhead is not None:
        _add_into(reqs, pr.overhead)
        v = pr.overhead.get(CPU)
        if v is not None:
            nz_cpu += v
        v = pr.overhead.get(MEMORY)
        if v is not None:
            nz_mem += v
    score_cpu, score_mem = nz_cpu, nz_mem
    if podlevel is not None:
        # A key in the requests, even at zero, means the pod asks for the resource somewhere: no default then.
        v = reqs.get(CPU)
        if v is not None:
            nz_cpu = v
        v = reqs.get(MEMORY)
        if v is not None:
            nz_mem = v
    if mode:
        out = {}
        for k, v in reqs.items():
            out[k] = _ceil_div(v, 1000000 if k == CPU else 1000000000)
        reqs = out
    cdef bint has_zero = False
    for k, v in reqs.items():
        if v > PY_INT64_MAX:
            _fail(ctx, "spec", f"effective request of {k!r} exceeds 2**63-1")
        if not v:
            has_zero = True
    if has_zero:
        out = {k: v for k, v in reqs.items() if v}
    else:
        out = reqs
    if mode:
        nz_cpu = _ceil_div(nz_cpu, 1000000)
        nz_mem = _ceil_div(nz_mem, 1000000000)
        score_cpu = _ceil_div(score_cpu, 1000000)
        score_mem = _ceil_div(score_mem, 1000000000)
    if max(nz_cpu, nz_mem, score_cpu, score_mem) > PY_INT64_MAX:
        _fail(ctx, "spec", "effective cpu/memory request exceeds 2**63-1")
    return out, nz_cpu, nz_mem, score_cpu, score_mem


# ----------------------------------------------------------------------------------------------------------
# Pod: node affinity, tolerations
# ----------------------------------------------------------------------------------------------------------

cdef frozenset SET_OPS = frozenset(("In", "NotIn"))
cdef frozenset EXIST_OPS = frozenset(("Exists", "DoesNotExist"))
cdef frozenset CMP_OPS = frozenset(("Gt", "Lt"))


cdef bint _is_int64(str s):
    """strconv.ParseInt(s, 10, 64) succeeds: optional sign, ASCII digits, in range (int() alone would also
    take spaces, underscores and non-ASCII digits)."""
    cdef Py_ssize_t n = len(s), i = 0
    if n and (s[0] == 43 or s[0] == 45):
        i = 1
    if i == n:
        return False
    while i < n:
        if not _is_digit(s[i]):
            return False
        i += 1
    v = int(s)
    return -9223372036854775808 <= v <= 9223372036854775807


cdef list _requirement_values(dict r, str ctx, str path):
    cdef list vals = _opt_list(r.get("values"), ctx, path + ".values")
    cdef list out = []
    cdef Py_ssize_t i
    if not vals:
        return out
    for i in range(len(vals)):
        v = vals[i]
        if type(v) is not str:
            _fail(ctx, f"{path}.values[{i}]", f"expected a string, got {type(v).__name__}", True)
        out.append(v)
    return out


cdef dict _selector_term(object t_in, str ctx, str path):
    cdef dict t = _opt_dict(t_in, ctx, path)
    cdef list exprs_in, fields_in, exprs = [], fields = [], vals
    cdef dict r
    cdef str rpath, key, op
    cdef Py_ssize_t i
    if t is None:
        _fail(ctx, path, "expected an object, got None", True)
    exprs_in = _opt_list(t.get("matchExpressions"), ctx, path + ".matchExpressions")
    fields_in = _opt_list(t.get("matchFields"), ctx, path + ".matchFields")
    if exprs_in:
        for i in range(len(exprs_in)):
            rpath = f"{path}.matchExpressions[{i}]"
            r = _opt_dict(exprs_in[i], ctx, rpath)
            if r is None:
                _fail(ctx, rpath, "expected an object, got None", True)
            key = _opt_str(r.get("key"), ctx, rpath + ".key")
            if not key:
                _fail(ctx, rpath + ".key", "required")
            op = _opt_str(r.get("operator"), ctx, rpath + ".operator")
            vals = _requirement_values(r, ctx, rpath)
            if op in SET_OPS:
                if not vals:
                    _fail(ctx, rpath + ".values", f"must be specified when `operator` is '{op}'")
            elif op in EXIST_OPS:
                if vals:
                    _fail(ctx, rpath + ".values", f"may not be specified when `operator` is '{op}'")
            elif op in CMP_OPS:
                if len(vals) != 1:
                    _fail(ctx, rpath + ".values", f"must be specified single value when `operator` is '{op}'")
                if not _is_int64(<str>vals[0]):
                    _fail(ctx, rpath + ".values[0]", f"must be an integer, got {vals[0]!r}")
            else:
                _fail(ctx, rpath + ".operator", f"not a valid selector operator: {op!r}")
            exprs.append((key, op, vals))
    if fields_in:
        for i in range(len(fields_in)):
            rpath = f"{path}.matchFields[{i}]"
            r = _opt_dict(fields_in[i], ctx, rpath)
            if r is None:
                _fail(ctx, rpath, "expected an object, got None", True)
            key = _opt_str(r.get("key"), ctx, rpath + ".key")
            if key != "metadata.name":
                _fail(ctx, rpath + ".key", f"not a valid field selector key: {key!r} (only metadata.name)")
            op = _opt_str(r.get("operator"), ctx, rpath + ".operator")
            if op not in SET_OPS:
                _fail(ctx, rpath + ".operator", f"not a valid selector operator: {op!r} (In or NotIn)")
            vals = _requirement_values(r, ctx, rpath)
            if len(vals) != 1:
                _fail(ctx, rpath + ".values", "must be only one value when `operator` is 'In' or 'NotIn' "
                      "for node field selector")
            fields.append((key, op, vals))
    return {"expressions": exprs, "fields": fields}


cdef tuple _node_affinity(dict spec, str ctx):
    """(required_terms or None, preferred_terms) from spec.affinity.nodeAffinity."""
    cdef dict aff = _opt_dict(spec.get("affinity"), ctx, "spec.affinity")
    cdef dict na, req
    cdef list terms_in, pref_in, required = None, preferred = []
    cdef str base = "spec.affinity.nodeAffinity"
    cdef str path
    cdef dict p
    cdef Py_ssize_t i
    if aff is None:
        return None, preferred
    na = _opt_dict(aff.get("nodeAffinity"), ctx, base)
    if na is None:
        return None, preferred
    req = _opt_dict(na.get("requiredDuringSchedulingIgnoredDuringExecution"), ctx,
                    base + ".requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        path = base + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms_in = _opt_list(req.get("nodeSelectorTerms"), ctx, path)
        if not terms_in:
            _fail(ctx, path, "must have at least one node selector term")
        required = [_selector_term(terms_in[i], ctx, f"{path}[{i}]") for i in range(len(terms_in))]
    pref_in = _opt_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"), ctx,
                        base + ".preferredDuringSchedulingIgnoredDuringExecution")
    if pref_in:
        for i in range(len(pref_in)):
            path = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            p = _opt_dict(pref_in[i], ctx, path)
            if p is None:
                _fail(ctx, path, "expected an object, got None", True)
            w = p.get("weight")
            if type(w) is not int:
                _fail(ctx, path + ".weight", f"expected an integer, got {type(w).__name__}", True)
            if not 1 <= w <= 100:
                _fail(ctx, path + ".weight", f"must be in the range 1-100, got {w}")
            if p.get("preference") is None:
                _fail(ctx, path + ".preference", "required")
            preferred.append((w, _selector_term(p.get("preference"), ctx, path + ".preference")))
    return required, preferred


cdef list _tolerations(dict spec, str ctx):
    cdef list tl = _opt_list(spec.get("tolerations"), ctx, "spec.tolerations")
    cdef list out = []
    cdef dict t
    cdef str key, op, value, effect
    cdef Py_ssize_t i
    if not tl:
        return out
    for i in range(len(tl)):
        t = _req_dict(tl[i], ctx, "spec.tolerations", i)
        key = _opt_str(t.get("key"), ctx, "spec.tolerations", i, ".key")
        op = _opt_str(t.get("operator"), ctx, "spec.tolerations", i, ".operator")
        value = _opt_str(t.get("value"), ctx, "spec.tolerations", i, ".value")
        effect = _opt_str(t.get("effect"), ctx, "spec.tolerations", i, ".effect")
        if not op:
            op = "Equal"   # the API server's default
        if op == "Exists":
            if value:
                _fail(ctx, _path("spec.tolerations", i, ".value"), "must be empty when `operator` is 'Exists'")
        elif op != "Equal":
            _fail(ctx, _path("spec.tolerations", i, ".operator"),
                  f"unsupported operator {op!r} (must be Equal or Exists)")
        if not key and op != "Exists":
            _fail(ctx, _path("spec.tolerations", i, ".operator"),
                  "must be Exists when `key` is empty, which means \"match all values and all keys\"")
        if effect not in TOLERATION_EFFECTS:
            _fail(ctx, _path("spec.tolerations", i, ".effect"),
                  f"unsupported effect {effect!r} (must be NoSchedule, PreferNoSchedule or NoExecute)")
        secs = t.get("tolerationSeconds")
        if secs is not None:
            if type(secs) is not int:
                _fail(ctx, _path("spec.tolerations", i, ".tolerationSeconds"),
                      f"expected an integer, got {type(secs).__name__}", True)
            if effect != "NoExecute":
                _fail(ctx, _path("spec.tolerations", i, ".effect"),
                      "must be 'NoExecute' when `tolerationSeconds` is set")
        out.append((key, op, value, effect))
    return out


# ----------------------------------------------------------------------------------------------------------
# Pod: inter-pod affinity and topology spread (InterPodAffinity, PodTopologySpread)
# ----------------------------------------------------------------------------------------------------------

cdef frozenset LABEL_SELECTOR_OPS = frozenset(("In", "NotIn", "Exists", "DoesNotExist"))
cdef frozenset NODE_INCLUSION_POLICIES = frozenset(("Honor", "Ignore"))
# Kubernetes' label syntax (apimachinery's IsQualifiedName, IsValidLabelValue), which metav1.LabelSelectorAsSelector
# checks of every selector key and value: kube-scheduler refuses a pod whose selector breaks it ("parsing pod").
# Fixed patterns of vcore's own, never a user's: the stdlib engine is fine here.
cdef object _LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
cdef object _LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
cdef int LABEL_NAME_MAX = 63


cdef int _check_label_key(str key, str ctx, str path) except -1:
    cdef str prefix = "", name = key
    cdef Py_ssize_t slash = key.rfind("/")
    if slash >= 0:
        prefix, name = key[:slash], key[slash + 1:]
    if (len(name) > LABEL_NAME_MAX or _LABEL_NAME.fullmatch(name) is None
            or (slash >= 0 and (not prefix or _dns1123_subdomain_problem(prefix) is not None))):
        _fail(ctx, path, f"{key!r} is not a valid label key (an optional DNS subdomain prefix and '/', then at most "
              "63 alphanumerics, '-', '_' or '.', alphanumeric at both ends)")
    return 0


cdef int _check_label_value(str value, str ctx, str path) except -1:
    if len(value) > LABEL_NAME_MAX or _LABEL_VALUE.fullmatch(value) is None:
        _fail(ctx, path, f"{value!r} is not a valid label value (empty, or at most 63 alphanumerics, '-', '_' or "
              "'.', alphanumeric at both ends)")
    return 0


cdef object _label_selector(object sel_in, str ctx, str path):
    """A metav1.LabelSelector as {"requirements": [(key, op, values)]} (matchLabels as In of one value), or None
    for a nil selector, which matches nothing; an empty one matches everything."""
    cdef dict sel = _opt_dict(sel_in, ctx, path)
    cdef list reqs = [], exprs
    cdef dict r
    cdef str rpath, key, op
    cdef Py_ssize_t i, j
    if sel is None:
        return None
    labels = _opt_dict(sel.get("matchLabels"), ctx, path + ".matchLabels")
    if labels:
        for key, value in _string_pairs(labels, ctx, path + ".matchLabels"):
            _check_label_key(key, ctx, f"{path}.matchLabels")
            _check_label_value(value, ctx, f"{path}.matchLabels[{key}]")
            reqs.append((key, "In", [value]))
    exprs = _opt_list(sel.get("matchExpressions"), ctx, path + ".matchExpressions")
    if exprs:
        for i in range(len(exprs)):
            rpath = f"{path}.matchExpressions[{i}]"
            r = _req_dict(exprs[i], ctx, rpath)
            key = _opt_str(r.get("key"), ctx, rpath + ".key")
            if not key:
                _fail(ctx, rpath + ".key", "required")
            _check_label_key(key, ctx, rpath + ".key")
            op = _opt_str(r.get("operator"), ctx, rpath + ".operator")
            if op not in LABEL_SELECTOR_OPS:
                _fail(ctx, rpath + ".operator", f"not a valid selector operator: {op!r} "
                      "(In, NotIn, Exists or DoesNotExist)")
            vals = _requirement_values(r, ctx, rpath)
            if op in SET_OPS and not vals:
                _fail(ctx, rpath + ".values", f"must be specified when `operator` is '{op}'")
            if op in EXIST_OPS and vals:
                _fail(ctx, rpath + ".values", f"may not be specified when `operator` is '{op}'")
            for j in range(len(vals)):
                _check_label_value(vals[j], ctx, f"{rpath}.values[{j}]")
            reqs.append((key, op, vals))
    return {"requirements": reqs}


def node_selector_term(term, str ctx, str path):
    """A v1.NodeSelectorTerm (API-shaped dict) as the core reads it: {"expressions": [...], "fields": [...]}, checked
    as node affinity terms are; errors name ``ctx`` and ``path``."""
    return _selector_term(term, ctx, path)


def label_selector(selector, str ctx, str path):
    """A metav1.LabelSelector (API-shaped dict) as the core reads it: {"requirements": [(key, op, values)]}, or None
    for a nil selector; errors name ``ctx`` and ``path``."""
    return _label_selector(selector, ctx, path)


cdef list _label_keys(object keys_in, str ctx, str path):
    cdef list keys = _opt_list(keys_in, ctx, path)
    cdef Py_ssize_t i
    if not keys:
        return []
    for i in range(len(keys)):
        if type(keys[i]) is not str:
            _fail(ctx, f"{path}[{i}]", f"expected a string, got {type(keys[i]).__name__}", True)
    return keys


cdef void _merge_label_keys(object selector, list keys, str op, dict labels):
    """The API server's merge of matchLabelKeys (In) / mismatchLabelKeys (NotIn) into a non-nil selector: each key
    the pod has a label for becomes a requirement on that label's value (merging twice changes nothing)."""
    if selector is None:
        return
    for key in keys:
        if key in labels:
            (<list>selector["requirements"]).append((key, op, [labels[key]]))


cdef dict _affinity_term(object t_in, str ctx, str path, dict labels, int64_t weight):
    cdef dict t = _req_dict(t_in, ctx, path)
    cdef str topology_key = _opt_str(t.get("topologyKey"), ctx, path + ".topologyKey")
    if not topology_key:
        _fail(ctx, path + ".topologyKey", "required")
    selector = _label_selector(t.get("labelSelector"), ctx, path + ".labelSelector")
    cdef list match_keys = _label_keys(t.get("matchLabelKeys"), ctx, path + ".matchLabelKeys")
    cdef list mismatch_keys = _label_keys(t.get("mismatchLabelKeys"), ctx, path + ".mismatchLabelKeys")
    cdef set both = set(match_keys) & set(mismatch_keys)
    if both:
        _fail(ctx, path + ".matchLabelKeys", f"{sorted(both)[0]!r} is also in mismatchLabelKeys")
    _merge_label_keys(selector, match_keys, "In", labels)
    _merge_label_keys(selector, mismatch_keys, "NotIn", labels)
    cdef list namespaces = _label_keys(t.get("namespaces"), ctx, path + ".namespaces")
    cdef dict out = {"selector": selector, "topology_key": topology_key, "namespaces": namespaces,
                     "weight": weight}
    ns_sel = t.get("namespaceSelector")
    if ns_sel is not None:
        out["namespace_selector"] = _label_selector(ns_sel, ctx, path + ".namespaceSelector")
    return out


cdef dict _pod_affinity(dict aff, str ctx, dict labels):
    """spec.affinity.podAffinity / podAntiAffinity as the four term lists of the core, or None without any term."""
    cdef dict out = {}, part, w
    cdef list items, terms
    cdef str kind, name, base
    cdef Py_ssize_t i
    for kind, name in (("podAffinity", "affinity"), ("podAntiAffinity", "anti_affinity")):
        part = _opt_dict(aff.get(kind), ctx, "spec.affinity." + kind)
        if part is None:
            continue
        base = f"spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
        items = _opt_list(part.get("requiredDuringSchedulingIgnoredDuringExecution"), ctx, base)
        if items:
            out["required_" + name] = [_affinity_term(items[i], ctx, f"{base}[{i}]", labels, 0)
                                       for i in range(len(items))]
        base = f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution"
        items = _opt_list(part.get("preferredDuringSchedulingIgnoredDuringExecution"), ctx, base)
        if items:
            terms = []
            for i in range(len(items)):
                w = _req_dict(items[i], ctx, base, i)
                weight = w.get("weight")
                if type(weight) is not int:
                    _fail(ctx, f"{base}[{i}].weight", f"expected an integer, got {type(weight).__name__}", True)
                if not 1 <= weight <= 100:
                    _fail(ctx, f"{base}[{i}].weight", f"must be in the range 1-100, got {weight}")
                terms.append(_affinity_term(w.get("podAffinityTerm"), ctx, f"{base}[{i}].podAffinityTerm", labels,
                                            weight))
            out["preferred_" + name] = terms
    return out or None


cdef list _spread_constraints(list items, str ctx, dict labels):
    """spec.topologySpreadConstraints with the defaults kube-scheduler applies (minDomains 1, nodeAffinityPolicy
    Honor, nodeTaintsPolicy Ignore) and matchLabelKeys merged into the selector."""
    cdef list out = []
    cdef dict c
    cdef str path, when, key
    cdef set seen = set()
    cdef Py_ssize_t i
    for i in range(len(items)):
        path = f"spec.topologySpreadConstraints[{i}]"
        c = _req_dict(items[i], ctx, path)
        skew = c.get("maxSkew")
        if type(skew) is not int:
            _fail(ctx, path + ".maxSkew", f"expected an integer, got {type(skew).__name__}", True)
        if not 1 <= skew <= 2147483647:
            _fail(ctx, path + ".maxSkew", f"must be greater than zero, got {skew}")
        key = _opt_str(c.get("topologyKey"), ctx, path + ".topologyKey")
        if not key:
            _fail(ctx, path + ".topologyKey", "required")
        when = _opt_str(c.get("whenUnsatisfiable"), ctx, path + ".whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            _fail(ctx, path + ".whenUnsatisfiable", f"unsupported value {when!r} (DoNotSchedule or ScheduleAnyway)")
        if (key, when) in seen:
            _fail(ctx, path, f"duplicate {{{key!r}, {when!r}}} pair")
        seen.add((key, when))
        min_domains = c.get("minDomains")
        if min_domains is None:
            min_domains = 1
        elif type(min_domains) is not int:
            _fail(ctx, path + ".minDomains", f"expected an integer, got {type(min_domains).__name__}", True)
        elif when != "DoNotSchedule":
            _fail(ctx, path + ".minDomains", "can only be set when whenUnsatisfiable is DoNotSchedule")
        elif not 1 <= min_domains <= 2147483647:
            _fail(ctx, path + ".minDomains", f"must be greater than zero, got {min_domains}")
        policies = []
        for field, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            policy = _opt_str(c.get(field), ctx, path + "." + field) or default
            if policy not in NODE_INCLUSION_POLICIES:
                _fail(ctx, path + "." + field, f"unsupported value {policy!r} (Honor or Ignore)")
            policies.append(policy == "Honor")
        selector = _label_selector(c.get("labelSelector"), ctx, path + ".labelSelector")
        _merge_label_keys(selector, _label_keys(c.get("matchLabelKeys"), ctx, path + ".matchLabelKeys"), "In",
                          labels)
        out.append({"max_skew": skew, "topology_key": key, "hard": when == "DoNotSchedule", "selector": selector,
                    "min_domains": min_domains, "honor_node_affinity": policies[0],
                    "honor_taints": policies[1]})
    return out


# ----------------------------------------------------------------------------------------------------------
# Pod: hard constraints vcore does not evaluate (the guard), scheduling gates, spec.nodeName
# ----------------------------------------------------------------------------------------------------------

# Volume sources kube-scheduler's volume plugins act on: PVCs and generic ephemeral volumes (VolumeBinding,
# VolumeZone, NodeVolumeLimits, VolumeRestrictions' ReadWriteOncePod), the in-tree disks NodeVolumeLimits counts
# once migrated to CSI, and those VolumeRestrictions checks for conflicts (gcePersistentDisk, awsElasticBlockStore,
# rbd, iscsi). vcore's volume plugins honor them all: a pod with any is marked ``may_use_volumes`` and
# vcore.volumes.pods reads its volumes.
cdef tuple SCHEDULED_VOLUME_SOURCES = (
    "persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi",
    "azureDisk", "azureFile", "cinder", "vsphereVolume", "portworxVolume")
# Of those, the ones vcore cannot evaluate exactly: a pod using one is refused (none today).
cdef tuple UNHONORED_VOLUME_SOURCES = ()


cdef bint _nonempty(object v, str ctx, str path) except -1:
    """Whether an optional list field has items (a wrong type is an error naming it)."""
    if v is None:
        return False
    if type(v) is list or isinstance(v, tuple):
        return len(v) > 0
    _fail(ctx, path, f"expected a list, got {type(v).__name__}", True)


cdef frozenset PROTOCOLS = frozenset(("TCP", "UDP", "SCTP"))


cdef void _host_ports(list containers, str base, str ctx, bint host_network, bint sidecars_only, list out) except *:
    """The host ports containers take (NodePorts): (host IP, protocol, port) of each port with hostPort > 0, the IP
    0.0.0.0 and the protocol TCP when unset. A hostNetwork pod's ports default their hostPort to the containerPort
    (the API server's defaulting). Of init containers only sidecars (restartPolicy Always) hold their ports."""
    cdef Py_ssize_t i, j
    cdef dict c, p
    cdef list ports
    cdef str where, protocol, ip
    for i in range(len(containers)):
        c = _req_dict(containers[i], ctx, base, i)
        if sidecars_only and c.get("restartPolicy") != "Always":
            continue
        ports = _opt_list(c.get("ports"), ctx, base, i, ".ports")
        if not ports:
            continue
        for j in range(len(ports)):
            where = f"{base}[{i}].ports[{j}]"
            p = _req_dict(ports[j], ctx, where)
            host = p.get("hostPort")
            if host is not None and (type(host) is not int or isinstance(host, bool)):
                _fail(ctx, where + ".hostPort", f"expected an integer, got {type(host).__name__}", True)
            if host is not None and not 0 <= host <= 65535:
                _fail(ctx, where + ".hostPort", f"must be between 0 and 65535, got {host}")
            if not host and host_network:
                host = p.get("containerPort")
                if type(host) is not int or isinstance(host, bool) or not 1 <= host <= 65535:
                    _fail(ctx, where + ".containerPort", f"must be an integer between 1 and 65535, got {host!r}")
            if not host:
                continue
            protocol = _opt_str(p.get("protocol"), ctx, where + ".protocol") or "TCP"
            if protocol not in PROTOCOLS:
                _fail(ctx, where + ".protocol", f"unsupported value {protocol!r} (TCP, UDP or SCTP)")
            ip = _opt_str(p.get("hostIP"), ctx, where + ".hostIP") or "0.0.0.0"
            out.append((ip, protocol, host))


cdef list _images(list inits, list containers, str ctx):
    """Each container's image (init containers first), normalized as ImageLocality looks them up: a name without a
    tag gets ":latest"."""
    cdef list out = []
    cdef str image
    cdef bint named = False
    cdef Py_ssize_t i
    for base, items in (("spec.initContainers", inits), ("spec.containers", containers)):
        if not items:
            continue
        for i in range(len(items)):
            image = _opt_str(_req_dict(items[i], ctx, base, i).get("image"), ctx, base, i, ".image")
            named |= len(image) > 0
            if image.rfind(":") <= image.rfind("/"):
                image += ":latest"
            out.append(image)
    return out if named else []


cdef tuple _unhonored(dict spec, str ctx):
    """The fields of a pod that make nodes infeasible in kube-scheduler and that vcore does not evaluate: such a
    pod is refused (never placed) with these paths as its reason. Empty for almost every pod."""
    cdef list out = []
    cdef dict term
    cdef list items
    cdef Py_ssize_t i
    cdef str kind
    items = _opt_list(spec.get("volumes"), ctx, "spec.volumes")
    if items:
        for i in range(len(items)):
            term = _req_dict(items[i], ctx, "spec.volumes", i)
            for kind in UNHONORED_VOLUME_SOURCES:
                if term.get(kind) is not None:
                    out.append(f"spec.volumes[{i}].{kind}")
    if _nonempty(spec.get("resourceClaims"), ctx, "spec.resourceClaims"):
        out.append("spec.resourceClaims")
    return tuple(out)


cdef bint _uses_volumes(dict spec):
    """Whether a pod has a volume the volume plugins look at (its spec.volumes were checked by _unhonored)."""
    volumes = spec.get("volumes")
    if not volumes:
        return False
    for v in volumes:
        for kind in SCHEDULED_VOLUME_SOURCES:
            if (<dict>v).get(kind) is not None:
                return True
    return False


cdef tuple _scheduling_gates(dict spec, str ctx):
    """Names of spec.schedulingGates: a pod that has any is not attempted until they are all removed."""
    cdef list gates = _opt_list(spec.get("schedulingGates"), ctx, "spec.schedulingGates")
    cdef list names = []
    cdef Py_ssize_t i
    if not gates:
        return ()
    for i in range(len(gates)):
        names.append(_opt_str(_req_dict(gates[i], ctx, "spec.schedulingGates", i).get("name"), ctx,
                              "spec.schedulingGates", i, ".name"))
    return tuple(names)


cdef dict _pod_spec(object pod_in):
    cdef dict pod = _to_api_dict(pod_in, "pod")
    cdef dict meta = _opt_dict(pod.get("metadata"), "pod <unnamed>", "metadata")
    cdef str ns = "", name = ""
    if meta is not None:
        ns = _opt_str(meta.get("namespace"), "pod <unnamed>", "metadata.namespace")
        name_v = meta.get("name")
        if type(name_v) is str:
            name = <str>name_v
        else:
            name = _opt_str(name_v, f"pod {ns or 'default'}/<unnamed>", "metadata.name")
    if not ns:
        ns = "default"
    if not name:
        raise ValueError(f"pod {ns}/<unnamed>: metadata.name: required")
    cdef str key = ns + "/" + name
    cdef str ctx = "pod " + key
    cdef dict spec = _opt_dict(pod.get("spec"), ctx, "spec")
    if spec is None:
        spec = {}
    cdef tuple rq = _pod_requests(spec, ctx)
    cdef dict sel = _opt_dict(spec.get("nodeSelector"), ctx, "spec.nodeSelector")
    cdef tuple aff = _node_affinity(spec, ctx)
    prio = spec.get("priority")
    if prio is None:
        prio = 0
    elif type(prio) is not int:
        _fail(ctx, "spec.priority", f"expected an integer, got {type(prio).__name__}", True)
    elif not -2147483648 <= prio <= 2147483647:
        _fail(ctx, "spec.priority", f"must fit in int32, got {prio}")
    cdef dict out = {
        "key": key,
        "requests": rq[0],
        "nonzero_cpu_milli": rq[1],
        "nonzero_mem_bytes": rq[2],
        "node_selector": _string_pairs(sel, ctx, "spec.nodeSelector") if sel else [],
        "required_terms": aff[0],
        "preferred_terms": aff[1],
        "tolerations": _tolerations(spec, ctx),
        "priority": prio,
    }
    if rq[3] != rq[1] or rq[4] != rq[2]:  # only a pod with pod-level requests reads differently when scored
        out["score_cpu_milli"] = rq[3]
        out["score_mem_bytes"] = rq[4]
    if _may_use_gpus(rq[0], meta):
        out["may_use_gpus"] = True
    cdef dict labels = None
    if meta is not None:
        labels = _opt_dict(meta.get("labels"), ctx, "metadata.labels")
        if labels:
            out["labels"] = _string_pairs(labels, ctx, "metadata.labels")
        if meta.get("deletionTimestamp") is not None:
            out["deleting"] = True
        controller = _controller(meta, ctx)
        if controller is not None:
            out["controller"] = controller
    cdef dict aff_spec = _opt_dict(spec.get("affinity"), ctx, "spec.affinity")
    if aff_spec is not None and ("podAffinity" in aff_spec or "podAntiAffinity" in aff_spec):
        pod_affinity = _pod_affinity(aff_spec, ctx, labels or {})
        if pod_affinity is not None:
            out["pod_affinity"] = pod_affinity
    cdef list spread = _opt_list(spec.get("topologySpreadConstraints"), ctx, "spec.topologySpreadConstraints")
    if spread:
        out["spread"] = _spread_constraints(spread, ctx, labels or {})
    host_network = spec.get("hostNetwork")
    if host_network is not None and type(host_network) is not bool:
        _fail(ctx, "spec.hostNetwork", f"expected a bool, got {type(host_network).__name__}", True)
    cdef list containers = _opt_list(spec.get("containers"), ctx, "spec.containers")
    cdef list inits = _opt_list(spec.get("initContainers"), ctx, "spec.initContainers")
    cdef list host_ports = []
    if inits:
        _host_ports(inits, "spec.initContainers", ctx, host_network is True, True, host_ports)
    if containers:
        _host_ports(containers, "spec.containers", ctx, host_network is True, False, host_ports)
    if host_ports:
        out["host_ports"] = host_ports
    cdef list images = _images(inits, containers, ctx)
    if images:
        out["images"] = images
        out["n_containers"] = len(images)
    policy = _opt_str(spec.get("preemptionPolicy"), ctx, "spec.preemptionPolicy")
    if policy == "Never":
        out["preemption_policy"] = policy
    elif policy not in ("", "PreemptLowerPriority"):
        _fail(ctx, "spec.preemptionPolicy", f"unsupported value {policy!r} (PreemptLowerPriority or Never)")
    status = _opt_dict(pod.get("status"), ctx, "status")
    if status is not None:
        if status.get("startTime") is not None:
            out["start_time"] = _timestamp(status.get("startTime"), ctx, "status.startTime")
        nominated = _opt_str(status.get("nominatedNodeName"), ctx, "status.nominatedNodeName")
        if nominated:
            out["nominated_node"] = nominated
        if out.get("deleting") and _preempted(status, ctx):
            out["preempted"] = True
    cdef tuple unhonored = _unhonored(spec, ctx)
    if unhonored:
        out["unhonored"] = unhonored
    if _uses_volumes(spec):
        out["may_use_volumes"] = True
    cdef tuple gates = _scheduling_gates(spec, ctx)
    if gates:
        out["scheduling_gates"] = gates
    cdef str node_name = _opt_str(spec.get("nodeName"), ctx, "spec.nodeName")
    if node_name:
        out["node_name"] = node_name
    return out


cdef bint _preempted(dict status, str ctx) except -1:
    """A DisruptionTarget condition from the scheduler's preemption (kube-scheduler's podTerminatingByPreemption)."""
    cdef list conditions = _opt_list(status.get("conditions"), ctx, "status.conditions")
    if not conditions:
        return False
    for c in conditions:
        if type(c) is dict and c.get("type") == "DisruptionTarget" and c.get("status") == "True" \
                and c.get("reason") == "PreemptionByScheduler":
            return True
    return False


cdef object _timestamp(object value, str ctx, str path):
    """An RFC 3339 timestamp (metav1.Time) as whole Unix seconds."""
    if isinstance(value, datetime.datetime):
        when = value
    elif type(value) is str:
        try:
            when = datetime.datetime.fromisoformat(value)
        except ValueError:
            _fail(ctx, path, f"not an RFC 3339 timestamp: {value!r}")
    else:
        _fail(ctx, path, f"expected a timestamp string, got {type(value).__name__}", True)
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return int(when.timestamp())


cdef tuple _controller(dict meta, str ctx):
    """(apiVersion, kind, name) of the owner reference marked controller, or None."""
    cdef list owners = _opt_list(meta.get("ownerReferences"), ctx, "metadata.ownerReferences")
    cdef dict o
    cdef Py_ssize_t i
    if not owners:
        return None
    for i in range(len(owners)):
        o = _req_dict(owners[i], ctx, "metadata.ownerReferences", i)
        if o.get("controller") is True:
            return (_opt_str(o.get("apiVersion"), ctx, "metadata.ownerReferences", i, ".apiVersion"),
                    _opt_str(o.get("kind"), ctx, "metadata.ownerReferences", i, ".kind"),
                    _opt_str(o.get("name"), ctx, "metadata.ownerReferences", i, ".name"))
    return None


cdef bint _may_use_gpus(dict requests, dict meta):
    """A cheap superset of the pods with a GPU request (vcore.gpu.requests parses those in Python)."""
    for k in requests:
        if (<str>k).startswith(("nvidia.com/", "volcano.sh/")):
            return True
    if meta is None:
        return False
    ann = meta.get("annotations")
    return type(ann) is dict and ("gpu-fraction" in ann or "gpu-memory" in ann
                                  or "volcano.sh/numa-topology-policy" in ann)


def pod_spec(pod):
    """Convert a v1 Pod (API-shaped dict or kubernetes ``V1Pod``) into the core's flat pod dict.

    ``requests`` is the effective request of kube-scheduler (resourcehelper.PodRequests: containers and
    sidecars summed, max with each init container's view, pod-level requests, plus overhead), nonzero entries
    only; ``nonzero_cpu_milli`` / ``nonzero_mem_bytes`` count a missing container cpu / memory request as
    100m / 200Mi like the scheduler's NonZero accounting of a bound pod; ``score_cpu_milli`` / ``score_mem_bytes``
    (present only for a pod with pod-level requests, where they differ) are the same pair as NodeResourcesFit's
    scorer reads the pod it places: containers only, pod-level requests left out. ``may_use_gpus`` (present only when True) marks pods
    that may have a GPU request (a device resource or a KAI GPU annotation), so only those are parsed further.
    """
    return _pod_spec(pod)


def pod_specs(pods):
    """``pod_spec`` over a sequence; an error message is prefixed with the list index ("pods[3]: ...")."""
    cdef list out = []
    cdef Py_ssize_t i = 0
    for p in pods:
        try:
            out.append(_pod_spec(p))
        except (ValueError, TypeError) as e:
            raise type(e)(f"pods[{i}]: {e}") from e
        i += 1
    return out
