"""The storage objects kube-scheduler's volume plugins read, parsed into the records of vcore's volume store.

PersistentVolume, PersistentVolumeClaim, StorageClass (storage.k8s.io/v1), CSINode, CSIDriver, CSIStorageCapacity and
VolumeAttachment, as API-shaped dicts or ``kubernetes.client`` models. Each parser checks the fields the plugins read
(an error names the object and the field: ``persistentvolume pv-1: spec.capacity.storage: invalid quantity 'x'``),
resolves what Kubernetes resolves when it reads them (the beta storage-class annotation before the field, the zones
of a PV's topology labels, an in-tree PV translated to CSI) and returns a :class:`Parsed`: the native record
(``spec``, the dict ``vcore._native._core.volumes_put`` reads), the object's key and resourceVersion, and the API
dict itself (what an adapter writes back at PreBind).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from vcore._native import _convert
from vcore.validation import LABEL_KEY, fail, fail_type, optional_list, optional_mapping, type_name
from vcore.volumes import translation

if TYPE_CHECKING:
    from vcore._native._convert import SelectorTerm

__all__ = [
    "KINDS",
    "Kind",
    "Parsed",
    "parse",
    "storage_size",
    "BETA_STORAGE_CLASS",
    "SELECTED_NODE",
    "BIND_COMPLETED",
    "BOUND_BY_CONTROLLER",
    "MIGRATED_PLUGINS",
]

#: A kind of storage object, by the lower-case singular name vcore's messages use.
Kind = Literal[
    "persistentvolume",
    "persistentvolumeclaim",
    "storageclass",
    "csinode",
    "csidriver",
    "csistoragecapacity",
    "volumeattachment",
]
PERSISTENT_VOLUME: Final = "persistentvolume"
CLAIM: Final = "persistentvolumeclaim"
STORAGE_CLASS: Final = "storageclass"
CSI_NODE: Final = "csinode"
CSI_DRIVER: Final = "csidriver"
CAPACITY: Final = "csistoragecapacity"
ATTACHMENT: Final = "volumeattachment"
#: Every kind the volume store holds.
KINDS: tuple[Kind, ...] = (PERSISTENT_VOLUME, CLAIM, STORAGE_CLASS, CSI_NODE, CSI_DRIVER, CAPACITY, ATTACHMENT)
#: The kinds that live in a namespace (keyed namespace/name); the others are keyed by name.
NAMESPACED = frozenset((CLAIM, CAPACITY))

BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"

ACCESS_MODES = {"ReadWriteOnce": 1, "ReadOnlyMany": 2, "ReadWriteMany": 4, "ReadWriteOncePod": 8}
VOLUME_MODES = ("Filesystem", "Block")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
# The topology labels VolumeZone reads off a PV, in its order, with the GA label a node may carry instead.
ZONE_LABELS = (
    (translation.ZONE_BETA, translation.ZONE_GA),
    (translation.REGION_BETA, translation.REGION_GA),
    (translation.ZONE_GA, translation.ZONE_GA),
    (translation.REGION_GA, translation.REGION_GA),
)
_LABEL_VALUE_MAX = 63


@dataclass(frozen=True)
class Parsed:
    """One storage object as the volume store keeps it."""

    kind: str
    key: str  # name, or namespace/name for a namespaced kind
    resource_version: str
    spec: dict[str, Any]  # the native record
    obj: dict[str, Any]  # the API dict


class _Reader:
    """Field access on one object's API dict, with errors that name the object and the field."""

    def __init__(self, kind: str, obj: Any) -> None:
        self.kind = kind
        self.d = dict(_convert.api_dict(obj, kind))
        meta = self.d.get("metadata")
        if meta is not None and not isinstance(meta, Mapping):
            raise TypeError(f"{kind} <unnamed>: metadata: must be a mapping, got {type_name(meta)}")
        self.meta: Mapping[str, Any] = meta or {}
        name = self.meta.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{kind} <unnamed>: metadata.name: required")
        self.name = name
        namespace = self.meta.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise TypeError(f"{kind} {name}: metadata.namespace: must be a string, got {type_name(namespace)}")
        self.namespace = namespace or "default"
        self.key = f"{self.namespace}/{name}" if kind in NAMESPACED else name
        self.where = f"{kind} {self.key}"

    def error(self, path: str, problem: str) -> ValueError:
        return fail(ValueError, f"{self.where}: {path}", problem)

    def type_error(self, path: str, problem: str) -> TypeError:
        return fail_type(ValueError, f"{self.where}: {path}", problem)  # type: ignore[return-value]

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        return optional_mapping(value, f"{self.where}: {path}")

    def sequence(self, value: Any, path: str) -> list[Any]:
        return list(optional_list(value, f"{self.where}: {path}"))

    def string(self, value: Any, path: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.type_error(path, f"must be a string, got {type_name(value)}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.type_error(path, f"must be true or false, got {type_name(value)}")
        return value

    def strings(self, value: Any, path: str) -> dict[str, str]:
        m = self.mapping(value, path)
        for k, v in m.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise self.type_error(f"{path}.{k}", f"must map strings to strings, got {type_name(v)}")
        return dict(m)

    @property
    def labels(self) -> dict[str, str]:
        return self.strings(self.meta.get("labels"), "metadata.labels")

    @property
    def annotations(self) -> dict[str, str]:
        return self.strings(self.meta.get("annotations"), "metadata.annotations")

    @property
    def resource_version(self) -> str:
        return self.string(self.meta.get("resourceVersion"), "metadata.resourceVersion")

    @property
    def deleting(self) -> bool:
        return self.meta.get("deletionTimestamp") is not None

    def access_modes(self, value: Any, path: str) -> int:
        bits = 0
        for i, mode in enumerate(self.sequence(value, path)):
            if mode not in ACCESS_MODES:
                raise self.error(f"{path}[{i}]", f"unsupported access mode {mode!r} (one of {', '.join(ACCESS_MODES)})")
            bits |= ACCESS_MODES[mode]
        return bits

    def block(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if value not in VOLUME_MODES:
            raise self.error(path, f"must be Filesystem or Block, got {value!r}")
        return value == "Block"

    def size(self, value: Any, path: str) -> tuple[int, int]:
        return storage_size(value, self.where, path)

    def selector(self, value: Any, path: str) -> list[Any] | None:
        parsed = _convert.label_selector(value, self.where, path)
        return None if parsed is None else parsed["requirements"]

    def controller_uid(self) -> str | None:
        """The uid of the ownerReference marked controller (None without one)."""
        for i, ref in enumerate(self.sequence(self.meta.get("ownerReferences"), "metadata.ownerReferences")):
            ref = self.mapping(ref, f"metadata.ownerReferences[{i}]")
            if ref.get("controller") is True:
                return self.string(ref.get("uid"), f"metadata.ownerReferences[{i}].uid")
        return None


def storage_size(value: Any, obj: str, field: str) -> tuple[int, int]:
    """A storage quantity as the native store compares it: (bytes rounded up, thousandths within the last byte)."""
    whole = _convert.parse_quantity(value, obj=obj, field=field)
    if whole == 0:
        return (0, 0)
    try:
        milli = _convert.parse_quantity(value, milli=True)
    except ValueError:  # past int64 in milli-units: whole bytes decide
        return (whole, 1000)
    return (whole, milli - (whole - 1) * 1000)


def _node_terms(r: _Reader, required: Any, path: str) -> list[SelectorTerm] | None:
    """spec.nodeAffinity.required.nodeSelectorTerms as the core's terms (None when nothing is required)."""
    if required is None:
        return None
    required = r.mapping(required, path)
    terms = r.sequence(required.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")
    return [_convert.node_selector_term(t, r.where, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)]


def _storage_class(r: _Reader, spec: Mapping[str, Any]) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation, else spec.storageClassName."""
    annotations = r.annotations
    if BETA_STORAGE_CLASS in annotations:
        return annotations[BETA_STORAGE_CLASS]
    return r.string(spec.get("storageClassName"), "spec.storageClassName")


def _zones(labels: Mapping[str, str]) -> list[tuple[str, str, list[str]]]:
    """VolumeZone's topology labels of a PV: (key, GA key, allowed values), a value split at "__" into zones; a label
    naming an empty zone is ignored, as LabelZonesToSet's error is."""
    out = []
    for key, ga_key in ZONE_LABELS:
        if key not in labels:
            continue
        zones = [z.strip() for z in labels[key].split(translation.MULTI_ZONE)]
        if any(not z for z in zones):
            continue
        out.append((key, ga_key, sorted(set(zones))))
    return out


def _persistent_volume(r: _Reader) -> dict[str, Any]:
    spec = r.mapping(r.d.get("spec"), "spec")
    status = r.mapping(r.d.get("status"), "status")
    capacity = r.mapping(spec.get("capacity"), "spec.capacity")
    labels = r.labels
    affinity = r.mapping(spec.get("nodeAffinity"), "spec.nodeAffinity")
    terms = _node_terms(r, affinity.get("required"), "spec.nodeAffinity.required")
    out: dict[str, Any] = {
        "name": r.name,
        "resource_version": r.resource_version,
        "labels": sorted(labels.items()),
        "storage_class": _storage_class(r, spec),
        "capacity": r.size(capacity["storage"], "spec.capacity.storage") if "storage" in capacity else (0, 0),
        "access_modes": r.access_modes(spec.get("accessModes"), "spec.accessModes"),
        "block": r.block(spec.get("volumeMode"), "spec.volumeMode"),
        "attributes_class": r.string(spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"),
        "available": status.get("phase") == "Available",
        "deleting": r.deleting,
        "affinity": terms,
        "zones": _zones(labels),
    }
    ref = spec.get("claimRef")
    if ref is not None:
        ref = r.mapping(ref, "spec.claimRef")
        out["claim_ref"] = (
            r.string(ref.get("namespace"), "spec.claimRef.namespace"),
            r.string(ref.get("name"), "spec.claimRef.name"),
            r.string(ref.get("uid"), "spec.claimRef.uid"),
        )
    csi = spec.get("csi")
    if csi is not None:
        csi = r.mapping(csi, "spec.csi")
        out["csi"] = (
            r.string(csi.get("driver"), "spec.csi.driver"),
            r.string(csi.get("volumeHandle"), "spec.csi.volumeHandle"),
        )
        return out
    for source in translation.MIGRATED_DRIVERS:
        volume = spec.get(source)
        if volume is None:
            continue
        t = translation.translate_pv(source, r.mapping(volume, f"spec.{source}"), labels, terms)
        out["migration"] = {
            "plugin": t.plugin,
            "driver": t.driver,
            "handle": t.handle,
            "error": t.error,
            "affinity": t.affinity,
        }
        break
    return out


def _claim(r: _Reader) -> dict[str, Any]:
    spec = r.mapping(r.d.get("spec"), "spec")
    status = r.mapping(r.d.get("status"), "status")
    annotations = r.annotations
    requests = r.mapping(r.mapping(spec.get("resources"), "spec.resources").get("requests"), "spec.resources.requests")
    out: dict[str, Any] = {
        "namespace": r.namespace,
        "name": r.name,
        "uid": r.string(r.meta.get("uid"), "metadata.uid"),
        "storage_class": _storage_class(r, spec),
        "volume_name": r.string(spec.get("volumeName"), "spec.volumeName"),
        "bind_completed": BIND_COMPLETED in annotations,
        "lost": status.get("phase") == "Lost",
        "deleting": r.deleting,
        "selected_node": annotations.get(SELECTED_NODE),
        "access_modes": r.access_modes(spec.get("accessModes"), "spec.accessModes"),
        "block": r.block(spec.get("volumeMode"), "spec.volumeMode"),
        "attributes_class": r.string(spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"),
        "request": (r.size(requests["storage"], "spec.resources.requests.storage") if "storage" in requests else None),
        "selector": r.selector(spec.get("selector"), "spec.selector"),
        "controller_uid": r.controller_uid(),
    }
    return out


def _label_value_ok(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > _LABEL_VALUE_MAX:
        return False
    return value == "" or (
        value[0].isalnum() and value[-1].isalnum() and value.isascii() and all(c.isalnum() or c in "-_." for c in value)
    )


def _storage_class_record(r: _Reader) -> dict[str, Any]:
    mode = r.d.get("volumeBindingMode")
    if mode is not None and mode not in BINDING_MODES:
        raise r.error("volumeBindingMode", f"must be Immediate or WaitForFirstConsumer, got {mode!r}")
    terms = []
    for i, term in enumerate(r.sequence(r.d.get("allowedTopologies"), "allowedTopologies")):
        term = r.mapping(term, f"allowedTopologies[{i}]")
        path = f"allowedTopologies[{i}].matchLabelExpressions"
        requirements = []
        valid = True
        for j, expr in enumerate(r.sequence(term.get("matchLabelExpressions"), path)):
            expr = r.mapping(expr, f"{path}[{j}]")
            key = r.string(expr.get("key"), f"{path}[{j}].key")
            values = [
                r.string(v, f"{path}[{j}].values[{k}]")
                for k, v in enumerate(r.sequence(expr.get("values"), f"{path}[{j}].values"))
            ]
            # TopologySelectorRequirementsAsSelector: a key or value labels cannot hold, or no value, makes the term
            # select nothing.
            try:
                LABEL_KEY(key, "")
            except ValueError:
                valid = False
            valid = valid and bool(values) and all(_label_value_ok(v) for v in values)
            requirements.append((key, values))
        terms.append(requirements if valid else [])
    return {
        "name": r.name,
        "provisioner": r.string(r.d.get("provisioner"), "provisioner"),
        "binding_mode": mode or "",
        "allowed_topologies": terms,
    }


def _csi_node(r: _Reader) -> dict[str, Any]:
    spec = r.mapping(r.d.get("spec"), "spec")
    limits: dict[str, int] = {}
    for i, driver in enumerate(r.sequence(spec.get("drivers"), "spec.drivers")):
        driver = r.mapping(driver, f"spec.drivers[{i}]")
        name = r.string(driver.get("name"), f"spec.drivers[{i}].name")
        allocatable = r.mapping(driver.get("allocatable"), f"spec.drivers[{i}].allocatable")
        count = allocatable.get("count")
        if count is None:
            limits.pop(name, None)  # a later entry of the same driver replaces an earlier one
            continue
        if isinstance(count, bool) or not isinstance(count, int):
            raise r.type_error(f"spec.drivers[{i}].allocatable.count", f"must be an integer, got {type_name(count)}")
        if count < 0:
            raise r.error(f"spec.drivers[{i}].allocatable.count", f"must be >= 0, got {count}")
        limits[name] = count
    migrated = r.annotations.get(MIGRATED_PLUGINS, "")
    return {"name": r.name, "limits": sorted(limits.items()), "migrated": migrated.split(",") if migrated else []}


def _csi_driver(r: _Reader) -> dict[str, Any]:
    spec = r.mapping(r.d.get("spec"), "spec")
    return {"name": r.name, "storage_capacity": r.boolean(spec.get("storageCapacity"), "spec.storageCapacity")}


def _capacity(r: _Reader) -> dict[str, Any]:
    limit = r.d.get("maximumVolumeSize")
    path = "maximumVolumeSize"
    if limit is None:
        limit, path = r.d.get("capacity"), "capacity"
    return {
        "key": r.key,
        "storage_class": r.string(r.d.get("storageClassName"), "storageClassName"),
        "limit": None if limit is None else _convert.parse_quantity(limit, obj=r.where, field=path),
        "topology": r.selector(r.d.get("nodeTopology"), "nodeTopology"),
    }


def _attachment(r: _Reader) -> dict[str, Any]:
    spec = r.mapping(r.d.get("spec"), "spec")
    source = r.mapping(spec.get("source"), "spec.source")
    pv = source.get("persistentVolumeName")
    return {
        "name": r.name,
        "node": r.string(spec.get("nodeName"), "spec.nodeName"),
        "attacher": r.string(spec.get("attacher"), "spec.attacher"),
        "pv": None if pv is None else r.string(pv, "spec.source.persistentVolumeName"),
    }


_PARSERS: dict[str, Callable[[_Reader], dict[str, Any]]] = {
    PERSISTENT_VOLUME: _persistent_volume,
    CLAIM: _claim,
    STORAGE_CLASS: _storage_class_record,
    CSI_NODE: _csi_node,
    CSI_DRIVER: _csi_driver,
    CAPACITY: _capacity,
    ATTACHMENT: _attachment,
}


def parse(kind: str, obj: Any) -> Parsed:
    """Parse one storage object of ``kind`` (one of :data:`KINDS`)."""
    r = _Reader(kind, obj)
    return Parsed(kind, r.key, r.resource_version, _PARSERS[kind](r), r.d)


def key_of(kind: str, obj: Any) -> str:
    """The key of an object (or the key itself, given a string)."""
    if isinstance(obj, str):
        return obj
    return _Reader(kind, obj).key
