"""vcore._native._convert.parse_quantity: Kubernetes resource.Quantity semantics, exactly.

The conformance table is apimachinery's own TestQuantityParse input list (pkg/api/resource/quantity_test.go);
the expected numbers are what Quantity.Value() and Quantity.MilliValue() return for each input (both round
up). Kubernetes saturates values beyond int64 ("9Ei"); the vcore contract rejects them instead, so those
inputs are in the overflow table.
"""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from vcore._native import _convert

parse_quantity = _convert.parse_quantity

INT64_MAX = 2**63 - 1
OVERFLOW = object()

# (input, Value(), MilliValue()) -- inputs from apimachinery's TestQuantityParse.
PUBLISHED = [
    ("0", 0, 0),
    ("0n", 0, 0),
    ("0u", 0, 0),
    ("0m", 0, 0),
    ("0Ki", 0, 0),
    ("0k", 0, 0),
    ("0Mi", 0, 0),
    ("0M", 0, 0),
    ("0Gi", 0, 0),
    ("0G", 0, 0),
    ("0Ti", 0, 0),
    ("0T", 0, 0),
    ("1", 1, 1000),
    ("1Ki", 1024, 1024000),
    ("8Ki", 8192, 8192000),
    ("7Mi", 7340032, 7340032000),
    ("6Gi", 6442450944, 6442450944000),
    ("5Ti", 5497558138880, 5497558138880000),
    ("4Pi", 4503599627370496, 4503599627370496000),
    ("3Ei", 3458764513820540928, OVERFLOW),
    ("10Ti", 10995116277760, 10995116277760000),
    ("100Ti", 109951162777600, 109951162777600000),
    ("5n", 1, 1),
    ("4u", 1, 1),
    ("3m", 1, 3),
    ("9", 9, 9000),
    ("8k", 8000, 8000000),
    ("50k", 50000, 50000000),
    ("7M", 7000000, 7000000000),
    ("6G", 6000000000, 6000000000000),
    ("5T", 5000000000000, 5000000000000000),
    ("40T", 40000000000000, 40000000000000000),
    ("300T", 300000000000000, 300000000000000000),
    ("2P", 2000000000000000, 2000000000000000000),
    ("1E", 1000000000000000000, OVERFLOW),
    ("1E-3", 1, 1),
    ("1e3", 1000, 1000000),
    ("1E6", 1000000, 1000000000),
    ("1e9", 1000000000, 1000000000000),
    ("1E12", 1000000000000, 1000000000000000),
    ("1e15", 1000000000000000, 1000000000000000000),
    ("1E18", 1000000000000000000, OVERFLOW),
    ("1e14", 100000000000000, 100000000000000000),
    ("1e13", 10000000000000, 10000000000000000),
    ("100.035k", 100035, 100035000),
    ("0.001", 1, 1),
    ("0.0005k", 1, 500),
    ("0.005", 1, 5),
    ("0.05", 1, 50),
    ("0.5", 1, 500),
    ("0.00050k", 1, 500),
    ("0.00500", 1, 5),
    ("0.05000", 1, 50),
    ("0.50000", 1, 500),
    ("0.5e0", 1, 500),
    ("0.5e-1", 1, 50),
    ("0.5e-2", 1, 5),
    ("10.035M", 10035000, 10035000000),
    ("1.2e3", 1200, 1200000),
    ("1.3E+6", 1300000, 1300000000),
    ("1.40e9", 1400000000, 1400000000000),
    ("1.53E12", 1530000000000, 1530000000000000),
    ("1.6e15", 1600000000000000, 1600000000000000000),
    ("1.7E18", 1700000000000000000, OVERFLOW),
    ("9.01", 10, 9010),
    ("8.1k", 8100, 8100000),
    ("7.123456M", 7123456, 7123456000),
    ("6.987654321G", 6987654321, 6987654321000),
    ("5.444T", 5444000000000, 5444000000000000),
    ("40.1T", 40100000000000, 40100000000000000),
    ("300.2T", 300200000000000, 300200000000000000),
    ("2.5P", 2500000000000000, 2500000000000000000),
    ("1.01E", 1010000000000000000, OVERFLOW),
    ("3.001n", 1, 1),
    ("1.1E-9", 1, 1),
    ("0.0000000001", 1, 1),
    ("0.0000000005", 1, 1),
    ("0.00000000050", 1, 1),
    ("0.5e-9", 1, 1),
    ("0.9n", 1, 1),
    ("0.00000012345", 1, 1),
    ("0.00000012354", 1, 1),
    ("100.035Ki", 102436, 102435840),
    ("0.5Mi", 524288, 524288000),
    ("0.05Gi", 53687092, 53687091200),
    ("0.025Ti", 27487790695, 27487790694400),
    ("0.000000000001Ki", 1, 1),
    (".001", 1, 1),
    (".0001k", 1, 100),
    ("1.", 1, 1000),
    ("1.G", 1000000000, 1000000000000),
]


@pytest.mark.parametrize("text,value,milli", PUBLISHED, ids=[c[0] for c in PUBLISHED])
def test_published_quantities(text, value, milli):
    for want, as_milli in ((value, False), (milli, True)):
        if want is OVERFLOW:
            with pytest.raises(ValueError, match="too large"):
                parse_quantity(text, milli=as_milli)
        else:
            got = parse_quantity(text, milli=as_milli)
            assert got == want and type(got) is int
    # apimachinery also checks every table entry with an explicit "+" sign
    if value is not OVERFLOW:
        assert parse_quantity("+" + text) == value


# The brief's headline examples, named by what they pin down.
HEADLINE = [
    ("100m", True, 100, "cpu-milli"),
    ("0.5", True, 500, "half-core"),
    ("1.5Gi", False, 1610612736, "fractional-binary"),
    ("2Ki", False, 2048, "kibi"),
    ("1e3", False, 1000, "decimal-exponent"),
    ("1E-3", True, 1, "negative-exponent"),
    ("10M", False, 10000000, "mega"),
    ("1E", False, 10**18, "lone-E-is-exa"),
    ("100m", False, 1, "milli-memory-rounds-up"),
    ("1n", True, 1, "nano-cpu-rounds-up"),
    ("12e-1", False, 2, "1.2-rounds-up"),
    ("1.2e3", False, 1200, "fraction-times-exponent"),
    ("4", True, 4000, "whole-cores"),
    ("32Gi", False, 34359738368, "32Gi"),
    ("63235788Ki", False, 64753446912, "node-memory"),
    ("95491281146", False, 95491281146, "node-ephemeral"),
    ("-0", False, 0, "negative-zero-is-zero"),
    ("+0.5", True, 500, "explicit-plus"),
    ("0.000000000000000000000000000001", False, 1, "tiny-rounds-to-one"),
    ("1e-99999999999", False, 1, "huge-negative-exponent"),
    ("0e99999999999", False, 0, "zero-with-huge-exponent"),
    ("1234567890123456789012e-10", False, 123456789013, "mantissa-beyond-uint64"),
    ("9223372036854775807", False, INT64_MAX, "int64-max"),
    ("9223372036854775807m", True, INT64_MAX, "int64-max-milli"),
    ("7Ei", False, 7 * 2**60, "7Ei-fits"),
]


@pytest.mark.parametrize("text,milli,want", [c[:3] for c in HEADLINE], ids=[c[3] for c in HEADLINE])
def test_headline_quantities(text, milli, want):
    assert parse_quantity(text, milli=milli) == want


MALFORMED = [
    # apimachinery's invalid list
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    " 1",
    "1 ",
    # the contract's list
    "",
    ".",
    "1x",
    "1.2.3",
    "Ki",
    "1e",
    "--1",
    # more shapes the grammar rejects
    "+",
    "-",
    "e3",
    "1e3.5",
    "1Kii",
    "1ki",
    "1KiB",
    "1E+",
    "1e3e3",
    "1.5.Gi",
    "0x10",
    "1_000",
    "١",
    "\uff11",
    "1\n",
    "1Gi ",
    "Infinity",
    "nan",
]


@pytest.mark.parametrize("text", MALFORMED, ids=[repr(t) for t in MALFORMED])
def test_malformed_strings(text):
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity(text)


# Kubernetes saturates these at int64 max; the contract makes them errors.
TOO_LARGE = [
    ("9Ei", False),
    ("9223372036854775807Ki", False),
    ("12E", False),
    ("9223372036854775808", False),
    ("1e19", False),
    ("1e99999999999", False),
    ("9223372036854775807", True),
    ("9223372036854775.808", True),
    ("1E", True),
    ("8Ei", False),
]


@pytest.mark.parametrize("text,milli", TOO_LARGE, ids=[f"{t}-{'milli' if m else 'value'}" for t, m in TOO_LARGE])
def test_too_large(text, milli):
    with pytest.raises(ValueError, match="too large"):
        parse_quantity(text, milli=milli)


@pytest.mark.parametrize("value", ["-1", "-100m", "-0.001", "-1Ki", "-1e-20", -1, -0.5, -1e300], ids=lambda v: repr(v))
def test_negative(value):
    with pytest.raises(ValueError, match="must not be negative"):
        parse_quantity(value)


def test_int_and_float_inputs():
    assert parse_quantity(4) == 4
    assert parse_quantity(4, milli=True) == 4000
    assert parse_quantity(0) == 0
    assert parse_quantity(INT64_MAX) == INT64_MAX
    assert parse_quantity(0.5, milli=True) == 500  # via repr: exact, not 499.99..
    assert parse_quantity(0.1, milli=True) == 100
    assert parse_quantity(0.5) == 1
    assert parse_quantity(2.0) == 2
    assert parse_quantity(1e-7) == 1
    assert parse_quantity(1.5e9) == 1500000000
    assert parse_quantity(-0.0) == 0
    for bad in (INT64_MAX + 1, 10**30, 1e19):
        with pytest.raises(ValueError, match="too large"):
            parse_quantity(bad)
    with pytest.raises(ValueError, match="too large"):
        parse_quantity(INT64_MAX // 1000 + 1, milli=True)
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError, match="invalid quantity"):
            parse_quantity(bad)


class _StrSubclass(str):
    pass


def test_str_subclass_is_a_string():
    assert parse_quantity(_StrSubclass("2Ki")) == 2048


@pytest.mark.parametrize("value", [True, False, None], ids=repr)
def test_bool_and_none_are_value_errors(value):
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity(value, obj="pod default/p1", field="spec.containers[0].resources.requests.cpu")


@pytest.mark.parametrize("value", [[1], b"1", {"a": 1}, object(), 1j], ids=lambda v: type(v).__name__)
def test_other_types_are_type_errors(value):
    with pytest.raises(TypeError, match=r"^pod default/p1: spec\.x: quantity must be a string or a number"):
        parse_quantity(value, obj="pod default/p1", field="spec.x")


@pytest.mark.parametrize(
    "value,problem",
    [
        ("1x", "invalid quantity '1x'"),
        ("-1", "quantity '-1' must not be negative"),
        ("9Ei", "quantity '9Ei' is too large"),
        (None, "invalid quantity None"),
    ],
    ids=["malformed", "negative", "too-large", "none"],
)
def test_errors_name_object_and_field(value, problem):
    with pytest.raises(ValueError) as ei:
        parse_quantity(value, milli=True, obj="pod default/p1", field="spec.containers[0].resources.requests.cpu")
    assert str(ei.value).startswith("pod default/p1: spec.containers[0].resources.requests.cpu: " + problem)


def test_error_prefix_without_obj_or_field():
    with pytest.raises(ValueError, match=r"^invalid quantity '1x'$"):
        parse_quantity("1x")
    with pytest.raises(ValueError, match=r"^status\.allocatable\.cpu: invalid quantity"):
        parse_quantity("1x", field="status.allocatable.cpu")


def test_keyword_only_options():
    with pytest.raises(TypeError):
        parse_quantity("1", True)


# ---------------------------------------------------------------------------------------------------------
# Property: the result is the exact rational ceil (fractions.Fraction), for any digits and any suffix.
# ---------------------------------------------------------------------------------------------------------

DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def _reference(int_digits, frac_digits, suffix, exponent, scale):
    """ceil(quantity * 10**scale) with Fractions; None when it does not fit int64."""
    mantissa = Fraction(
        int(int_digits or "0") * 10 ** len(frac_digits) + int(frac_digits or "0"), 10 ** len(frac_digits)
    )
    if suffix.startswith("exp"):
        factor = Fraction(10) ** exponent
    elif suffix in DECIMAL:
        factor = Fraction(10) ** DECIMAL[suffix]
    else:
        factor = Fraction(2 ** BINARY[suffix])
    v = mantissa * factor * 10**scale
    r = -((-v.numerator) // v.denominator)
    return r if r <= INT64_MAX else None


quantity_parts = st.tuples(
    st.one_of(st.integers(0, 10**6).map(str), st.integers(0, 10**25).map(str), st.just("")),
    st.one_of(st.just(None), st.text("0123456789", max_size=12)),
    st.sampled_from([*DECIMAL, *BINARY, "exp-e", "exp-E"]),  # exp-*: a decimal exponent
    st.integers(-30, 30),
    st.booleans(),
).filter(lambda p: p[0] != "" or (p[1] is not None and p[1] != ""))


@settings(max_examples=400, deadline=None)
@given(quantity_parts)
def test_matches_exact_rational_ceil(parts):
    int_digits, frac, suffix, exponent, milli = parts
    text = int_digits + ("" if frac is None else "." + frac)
    if suffix.startswith("exp"):
        letter = suffix[-1]
        text += f"{letter}{exponent:+d}" if exponent < 0 or exponent % 2 else f"{letter}{exponent}"
    else:
        text += suffix
    want = _reference(int_digits, frac or "", suffix, exponent, 3 if milli else 0)
    if want is None:
        with pytest.raises(ValueError, match="too large"):
            parse_quantity(text, milli=milli)
    else:
        assert parse_quantity(text, milli=milli) == want


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**70), st.booleans())
def test_ints_are_whole_units(n, milli):
    want = n * (1000 if milli else 1)
    if want > INT64_MAX:
        with pytest.raises(ValueError):
            parse_quantity(n, milli=milli)
    else:
        assert parse_quantity(n, milli=milli) == want
        assert parse_quantity(str(n), milli=milli) == want


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e15, allow_nan=False), st.booleans())
def test_floats_are_exact_via_repr(x, milli):
    v = Fraction(repr(x)) * (1000 if milli else 1)
    assert parse_quantity(x, milli=milli) == -((-v.numerator) // v.denominator)


def test_numpy_scalars():
    np = pytest.importorskip("numpy")
    assert parse_quantity(np.int64(3), milli=True) == 3000
    assert parse_quantity(np.float64(0.25), milli=True) == 250
    with pytest.raises(ValueError, match="must not be negative"):
        parse_quantity(np.int32(-1))
