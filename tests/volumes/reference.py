"""A plain-Python reference of kube-scheduler v1.34's volume plugins (VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone) over API-shaped objects, written from the Go sources, against which the native plugins
are compared on random clusters (test_reference.py).

It reads the objects as they are (dicts), walks the pod's volumes and the nodes the way the Go code does, and keeps
VolumeBinding's assumptions as kube-scheduler's assume cache does (``assume``). Only the in-tree to CSI translation
is shared with vcore (vcore.volumes.translation, a data transformation with tables of its own in test_translation.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from vcore.volumes import translation

HOSTNAME = "kubernetes.io/hostname"
TOPOLOGY_LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
GA = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
MIGRATABLE = {
    "kubernetes.io/aws-ebs",
    "kubernetes.io/gce-pd",
    "kubernetes.io/azure-disk",
    "kubernetes.io/cinder",
    "kubernetes.io/portworx-volume",
}
IN_TREE_DRIVERS = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
}
INLINE_MIGRATABLE = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cinder",
    "vsphereVolume",
    "portworxVolume",
)
SUFFIX = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "m": Fraction(1, 1000),
    "": 1,
}

DISK = "node(s) had no available disk"
RWOP = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
EXCEEDED = "node(s) exceed max volume count"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ZONE_CONFLICT = "node(s) had no available volume zone"


def quantity(q: Any) -> Fraction:
    """A test quantity ("10Gi", "500m", 5) exactly (the generator writes only these forms)."""
    if isinstance(q, int):
        return Fraction(q)
    for suffix in sorted(SUFFIX, key=len, reverse=True):
        if suffix and q.endswith(suffix):
            return Fraction(q[: -len(suffix)]) * SUFFIX[suffix]
    return Fraction(q)


def _meta(o: Mapping) -> Mapping:
    return o.get("metadata") or {}


def _spec(o: Mapping) -> Mapping:
    return o.get("spec") or {}


def claim_class(claim: Mapping) -> str:
    ann = _meta(claim).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in ann:
        return ann["volume.beta.kubernetes.io/storage-class"]
    return _spec(claim).get("storageClassName") or ""


def pv_class(pv: Mapping) -> str:
    ann = _meta(pv).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in ann:
        return ann["volume.beta.kubernetes.io/storage-class"]
    return _spec(pv).get("storageClassName") or ""


def _requirement_ok(labels: Mapping[str, str], key: str, op: str, values: Sequence[str]) -> bool:
    has = key in labels
    if op == "In":
        return has and labels[key] in values
    if op == "NotIn":
        return not has or labels[key] not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        try:
            value, bound = int(labels[key]), int(values[0])
        except (KeyError, ValueError):
            return False
        return value > bound if op == "Gt" else value < bound
    raise AssertionError(op)


def node_terms_match(required: Mapping | None, labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: the node given by its labels only (no name for matchFields)."""
    if required is None:
        return True
    for term in required.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if not all(_requirement_ok({}, "metadata.name", f["operator"], f.get("values") or []) for f in fields):
            continue
        if all(_requirement_ok(labels, e["key"], e["operator"], e.get("values") or []) for e in exprs):
            return True
    return False


def selector_match(selector: Mapping | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector (nil handled by the caller)."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    return all(
        _requirement_ok(labels, e["key"], e["operator"], e.get("values") or [])
        for e in selector.get("matchExpressions") or []
    )


@dataclass
class World:
    """The objects of a cluster, and the pods bound to each node."""

    nodes: dict[str, dict] = field(default_factory=dict)
    pvs: dict[str, dict] = field(default_factory=dict)
    pvcs: dict[str, dict] = field(default_factory=dict)  # namespace/name
    classes: dict[str, dict] = field(default_factory=dict)
    csi_nodes: dict[str, dict] = field(default_factory=dict)
    csi_drivers: dict[str, dict] = field(default_factory=dict)
    capacities: list[dict] = field(default_factory=list)
    attachments: list[dict] = field(default_factory=list)
    bound: dict[str, list[dict]] = field(default_factory=dict)  # node -> pods
    # VolumeBinding's assume cache: PV name -> claimRef it is assumed bound to; claim key -> selected node.
    assumed_refs: dict[str, dict] = field(default_factory=dict)
    assumed_nodes: dict[str, str] = field(default_factory=dict)

    def claim(self, ns: str, name: str) -> dict | None:
        return self.pvcs.get(f"{ns}/{name}")

    def labels(self, node: str) -> dict[str, str]:
        return _meta(self.nodes[node]).get("labels") or {}

    def migrated(self, node: str) -> set[str]:
        csi = self.csi_nodes.get(node)
        if csi is None:
            return set()
        value = (_meta(csi).get("annotations") or {}).get("storage.alpha.kubernetes.io/migrated-plugins", "")
        return set(value.split(",")) if value else set()

    def claim_ref(self, pv: dict) -> dict | None:
        name = _meta(pv)["name"]
        if name in self.assumed_refs:
            return self.assumed_refs[name]
        return _spec(pv).get("claimRef")

    def selected_node(self, claim: dict) -> str | None:
        key = f"{_meta(claim)['namespace']}/{_meta(claim)['name']}"
        if key in self.assumed_nodes:
            return self.assumed_nodes[key]
        return (_meta(claim).get("annotations") or {}).get("volume.kubernetes.io/selected-node")


@dataclass
class Result:
    rejection: str | None = None
    error: str | None = None
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _pod_ns_name(pod: Mapping) -> tuple[str, str]:
    meta = _meta(pod)
    return meta.get("namespace") or "default", meta["name"]


def _claim_name(pod: Mapping, volume: Mapping) -> tuple[str, bool] | None:
    if volume.get("persistentVolumeClaim") is not None:
        return volume["persistentVolumeClaim"].get("claimName") or "", False
    if volume.get("ephemeral") is not None:
        return f"{_pod_ns_name(pod)[1]}-{volume.get('name', '')}", True
    return None


def _owned(pod: Mapping, claim: Mapping) -> bool:
    for ref in _meta(claim).get("ownerReferences") or []:
        if ref.get("controller") is True:
            return (ref.get("uid") or "") == (_meta(pod).get("uid") or "")
    return False


# --- VolumeRestrictions ------------------------------------------------------------------------------------


def _conflict(v: Mapping, e: Mapping) -> bool:
    if v.get("gcePersistentDisk") is not None and e.get("gcePersistentDisk") is not None:
        a, b = v["gcePersistentDisk"], e["gcePersistentDisk"]
        return a.get("pdName") == b.get("pdName") and not (a.get("readOnly") and b.get("readOnly"))
    if v.get("awsElasticBlockStore") is not None and e.get("awsElasticBlockStore") is not None:
        return v["awsElasticBlockStore"].get("volumeID") == e["awsElasticBlockStore"].get("volumeID")
    if v.get("iscsi") is not None and e.get("iscsi") is not None:
        a, b = v["iscsi"], e["iscsi"]
        return a.get("iqn") == b.get("iqn") and not (a.get("readOnly") and b.get("readOnly"))
    if v.get("rbd") is not None and e.get("rbd") is not None:
        a, b = v["rbd"], e["rbd"]
        overlap = bool(set(a.get("monitors") or []) & set(b.get("monitors") or []))
        return (
            overlap
            and a.get("pool", "") == b.get("pool", "")
            and a.get("image") == b.get("image")
            and not (a.get("readOnly") and b.get("readOnly"))
        )
    return False


def volume_restrictions(w: World, pod: Mapping) -> tuple[str | None, dict[str, str | None]]:
    ns, _ = _pod_ns_name(pod)
    volumes = _spec(pod).get("volumes") or []
    rwop = set()
    for v in volumes:
        if v.get("persistentVolumeClaim") is None:
            continue
        name = v["persistentVolumeClaim"].get("claimName") or ""
        claim = w.claim(ns, name)
        if claim is None:
            return f'persistentvolumeclaim "{name}" not found', {}
        if "ReadWriteOncePod" in (_spec(claim).get("accessModes") or []):
            rwop.add(name)
    users: dict[str, int] = {}
    for pods in w.bound.values():
        for p in pods:
            pns = _pod_ns_name(p)[0]
            for v in _spec(p).get("volumes") or []:
                if v.get("persistentVolumeClaim") is not None:
                    key = f"{pns}/{v['persistentVolumeClaim'].get('claimName') or ''}"
                    users[key] = users.get(key, 0) + 1
    in_use = any(users.get(f"{ns}/{name}", 0) > 0 for name in rwop)
    out: dict[str, str | None] = {}
    for node in w.nodes:
        reason = None
        for v in volumes:
            if any(_conflict(v, e) for p in w.bound.get(node, []) for e in _spec(p).get("volumes") or []):
                reason = DISK
                break
        if reason is None and in_use:
            reason = RWOP
        out[node] = reason
    return None, out


# --- NodeVolumeLimits --------------------------------------------------------------------------------------


class _Error(Exception):
    pass


class _Status(Exception):
    pass


def _csi_driver_of_claim(w: World, node: str, claim: Mapping) -> tuple[str, str]:
    migrated = w.migrated(node)
    has_csi_node = node in w.csi_nodes

    def from_class() -> tuple[str, str]:
        name = claim_class(claim)
        if not name or name not in w.classes:
            return "", ""
        handle = f"\x01unbound-{_meta(claim)['namespace']}/{_meta(claim)['name']}"
        provisioner = w.classes[name].get("provisioner") or ""
        if provisioner in IN_TREE_DRIVERS:
            if provisioner not in MIGRATABLE or not has_csi_node or provisioner not in migrated:
                return "", ""
            return IN_TREE_DRIVERS[provisioner], handle
        return provisioner, handle

    pv_name = _spec(claim).get("volumeName") or ""
    if not pv_name or pv_name not in w.pvs:
        return from_class()
    pv = w.pvs[pv_name]
    spec = _spec(pv)
    if spec.get("csi") is not None:
        return spec["csi"].get("driver") or "", spec["csi"].get("volumeHandle") or ""
    for source in translation.MIGRATED_DRIVERS:
        if spec.get(source) is not None:
            t = translation.translate_pv(source, spec[source], _meta(pv).get("labels") or {}, None)
            if not has_csi_node or t.plugin not in migrated or t.error:
                return "", ""
            return t.driver, t.handle
    return "", ""


def _attachable(w: World, node: str, pod: Mapping, new: bool) -> dict[str, str]:
    ns, name = _pod_ns_name(pod)
    out: dict[str, str] = {}
    migrated = w.migrated(node) if node in w.csi_nodes else set()
    for v in _spec(pod).get("volumes") or []:
        claim_of = _claim_name(pod, v)
        if claim_of is not None:
            claim_name, ephemeral = claim_of
            if not claim_name:
                raise _Error("PersistentVolumeClaim had no name")
            claim = w.claim(ns, claim_name)
            if claim is None:
                if new:
                    raise _Status(f'looking up PVC {ns}/{claim_name}: persistentvolumeclaim "{claim_name}" not found')
                continue
            if ephemeral and not _owned(pod, claim):
                raise _Error(f"PVC {ns}/{claim_name} was not created for pod {ns}/{name} (pod is not owner)")
            driver, handle = _csi_driver_of_claim(w, node, claim)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
            continue
        source = next((s for s in INLINE_MIGRATABLE if v.get(s) is not None), None)
        if source is None or source not in translation.MIGRATED_DRIVERS:
            continue
        plugin = translation.inline_plugin(source)
        if plugin not in migrated:
            continue
        t = translation.translate_inline(source, v[source])
        if t.error:
            raise _Error(f"converting volume({v.get('name', '')}) from inline to csi: {t.error}")
        out[f"{t.driver}/{t.handle}"] = t.driver
    return out


def node_volume_limits(w: World, pod: Mapping) -> tuple[str | None, dict[str, str | None]]:
    volumes = _spec(pod).get("volumes") or []
    if not any(
        _claim_name(pod, v) is not None or any(v.get(s) is not None for s in INLINE_MIGRATABLE) for v in volumes
    ):
        return None, {n: None for n in w.nodes}
    out: dict[str, str | None] = {}
    for node in w.nodes:
        try:
            fresh = _attachable(w, node, pod, True)
            csi = w.csi_nodes.get(node)
            limits = (
                {
                    d["name"]: d["allocatable"]["count"]
                    for d in _spec(csi).get("drivers") or []
                    if (d.get("allocatable") or {}).get("count") is not None
                }
                if csi
                else {}
            )
            if not fresh or not limits:
                out[node] = None
                continue
            attached: dict[str, str] = {}
            for p in w.bound.get(node, []):
                attached.update(_attachable(w, node, p, False))
        except _Status as e:
            out[node] = str(e)
            continue
        except _Error as e:
            return "filter-error:" + f'running "NodeVolumeLimits" filter plugin: {e}', {}
        in_use: dict[str, int] = {}
        for unique, driver in attached.items():
            fresh.pop(unique, None)
            in_use[driver] = in_use.get(driver, 0) + 1
        for va in w.attachments:
            s = _spec(va)
            pv_name = (s.get("source") or {}).get("persistentVolumeName")
            if s.get("nodeName") != node or not s.get("attacher") or pv_name is None or pv_name not in w.pvs:
                continue
            csi_source = _spec(w.pvs[pv_name]).get("csi")
            if csi_source is None:
                continue
            if f"{s['attacher']}/{csi_source.get('volumeHandle') or ''}" not in attached:
                in_use[s["attacher"]] = in_use.get(s["attacher"], 0) + 1
        wanted: dict[str, int] = {}
        for driver in fresh.values():
            wanted[driver] = wanted.get(driver, 0) + 1
        exceeds = any(d in limits and in_use.get(d, 0) + n > limits[d] for d, n in wanted.items())
        out[node] = EXCEEDED if exceeds else None
    return None, out


# --- VolumeZone --------------------------------------------------------------------------------------------


def volume_zone(w: World, pod: Mapping) -> tuple[str | None, dict[str, str | None]]:
    ns, _ = _pod_ns_name(pod)
    topologies: list[tuple[str, set[str]]] = []
    for v in _spec(pod).get("volumes") or []:
        if v.get("persistentVolumeClaim") is None:
            continue
        name = v["persistentVolumeClaim"].get("claimName") or ""
        if not name:
            return "PersistentVolumeClaim had no name", {}
        claim = w.claim(ns, name)
        if claim is None:
            return f'persistentvolumeclaim "{name}" not found', {}
        pv_name = _spec(claim).get("volumeName") or ""
        if not pv_name:
            sc_name = claim_class(claim)
            if not sc_name:
                return "PersistentVolumeClaim had no pv name and storageClass name", {}
            if sc_name not in w.classes:
                return f'storageclass.storage.k8s.io "{sc_name}" not found', {}
            mode = w.classes[sc_name].get("volumeBindingMode")
            if mode is None:
                return f'VolumeBindingMode not set for StorageClass "{sc_name}"', {}
            if mode == "WaitForFirstConsumer":
                continue
            return "PersistentVolume had no name", {}
        if pv_name not in w.pvs:
            return f'persistentvolume "{pv_name}" not found', {}
        labels = _meta(w.pvs[pv_name]).get("labels") or {}
        for key in TOPOLOGY_LABELS:
            if key in labels:
                zones = [z.strip() for z in labels[key].split("__")]
                if all(zones):
                    topologies.append((key, set(zones)))
    out: dict[str, str | None] = {}
    for node in w.nodes:
        labels = w.labels(node)
        if not any(k in labels for k in TOPOLOGY_LABELS):
            out[node] = None
            continue
        ok = True
        for key, zones in topologies:
            value = labels.get(key, labels.get(GA.get(key, key)))
            if value is None or value not in zones:
                ok = False
                break
        out[node] = None if ok else ZONE_CONFLICT
    return None, out


# --- VolumeBinding -----------------------------------------------------------------------------------------


def _size(claim: Mapping) -> Fraction:
    q = ((_spec(claim).get("resources") or {}).get("requests") or {}).get("storage")
    return Fraction(0) if q is None else quantity(q)


def _capacity(pv: Mapping) -> Fraction:
    q = (_spec(pv).get("capacity") or {}).get("storage")
    return Fraction(0) if q is None else quantity(q)


def _bound_to(ref: Mapping | None, claim: Mapping) -> bool:
    if ref is None:
        return False
    m = _meta(claim)
    if ref.get("name") != m["name"] or ref.get("namespace") != m["namespace"]:
        return False
    return not ref.get("uid") or ref.get("uid") == m.get("uid", "")


def _fully_bound(claim: Mapping) -> bool:
    return bool(_spec(claim).get("volumeName")) and "pv.kubernetes.io/bind-completed" in (
        _meta(claim).get("annotations") or {}
    )


def _binding_prefilter(w: World, pod: Mapping):
    ns, name = _pod_ns_name(pod)
    claims = []
    for v in _spec(pod).get("volumes") or []:
        claim_of = _claim_name(pod, v)
        if claim_of is None:
            continue
        claim_name, ephemeral = claim_of
        claim = w.claim(ns, claim_name)
        if claim is None:
            if ephemeral:
                return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim_name}"'
            return f'persistentvolumeclaim "{claim_name}" not found'
        if (claim.get("status") or {}).get("phase") == "Lost":
            return (
                f'persistentvolumeclaim "{claim_name}" bound to non-existent persistentvolume '
                f'"{_spec(claim).get("volumeName") or ""}"'
            )
        if _meta(claim).get("deletionTimestamp") is not None:
            return f'persistentvolumeclaim "{claim_name}" is being deleted'
        if ephemeral and not _owned(pod, claim):
            return f"PVC {ns}/{claim_name} was not created for pod {ns}/{name} (pod is not owner)"
        claims.append(claim)
    if not claims:
        return None
    bound, delayed, immediate = [], [], []
    for claim in claims:
        if _fully_bound(claim):
            bound.append(claim)
            continue
        sc = w.classes.get(claim_class(claim)) if claim_class(claim) else None
        delay = False
        if sc is not None:
            if sc.get("volumeBindingMode") is None:
                return (
                    'error:running PreFilter plugin "VolumeBinding": VolumeBindingMode not set for '
                    f'StorageClass "{_meta(sc)["name"]}"'
                )
            delay = sc["volumeBindingMode"] == "WaitForFirstConsumer"
        if delay and not _spec(claim).get("volumeName"):
            delayed.append(claim)
        else:
            immediate.append(claim)
    if immediate:
        return "pod has unbound immediate PersistentVolumeClaims"
    return bound, delayed


def _find_matching(w: World, claim: Mapping, node: str, chosen: set[str]) -> dict | None:
    sc = claim_class(claim)
    request = _size(claim)
    claim_mode = _spec(claim).get("volumeMode") or "Filesystem"
    selector = _spec(claim).get("selector")
    best, best_size = None, None
    for name in sorted(n for n, pv in w.pvs.items() if pv_class(pv) == sc):  # vcore's order: by name
        if name in chosen:
            continue
        pv = w.pvs[name]
        ref = w.claim_ref(pv)
        if ref is not None and not _bound_to(ref, claim):
            continue
        if _capacity(pv) < request:
            continue
        if (_spec(pv).get("volumeMode") or "Filesystem") != claim_mode:
            continue
        if (_spec(pv).get("volumeAttributesClassName") or "") != (_spec(claim).get("volumeAttributesClassName") or ""):
            continue
        if _meta(pv).get("deletionTimestamp") is not None:
            continue
        fits = node_terms_match((_spec(pv).get("nodeAffinity") or {}).get("required"), w.labels(node))
        if _bound_to(ref, claim):
            return pv if fits else None
        if (pv.get("status") or {}).get("phase") != "Available":
            continue
        if selector is not None and not selector_match(selector, _meta(pv).get("labels") or {}):
            continue
        if not fits:
            continue
        if not set(_spec(claim).get("accessModes") or []) <= set(_spec(pv).get("accessModes") or []):
            continue
        if best is None or best_size > _capacity(pv):
            best, best_size = pv, _capacity(pv)
    return best


def _allowed(sc: Mapping, labels: Mapping[str, str]) -> bool:
    terms = sc.get("allowedTopologies") or []
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if not exprs or any(not e.get("values") for e in exprs):
            continue
        if all(labels.get(e["key"]) in e["values"] for e in exprs):
            return True
    return False


def find_pod_volumes(w: World, bound: list, delayed: list, node: str):
    """(reasons, bindings [(pv, claim)], provisions [claim]) on one node."""
    labels = w.labels(node)
    reasons: list[str] = []
    for claim in bound:
        pv = w.pvs.get(_spec(claim)["volumeName"])
        if pv is None:
            reasons.append(PV_NOT_EXIST)
            break
        required = (_spec(pv).get("nodeAffinity") or {}).get("required")
        for source in translation.MIGRATED_DRIVERS:
            if _spec(pv).get(source) is not None and translation.inline_plugin(source) in w.migrated(node):
                terms = (
                    [
                        {
                            "expressions": [
                                (e["key"], e["operator"], e.get("values") or [])
                                for e in t.get("matchExpressions") or []
                            ],
                            "fields": [],
                        }
                        for t in (required or {}).get("nodeSelectorTerms") or []
                    ]
                    if required is not None
                    else None
                )
                t = translation.translate_pv(source, _spec(pv)[source], _meta(pv).get("labels") or {}, terms)
                if t.error:
                    return ["error:" + t.error], [], []
                required = (
                    None
                    if t.affinity is None
                    else {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": k, "operator": op, "values": v} for k, op, v in term["expressions"]
                                ]
                            }
                            for term in t.affinity
                        ]
                    }
                )
        if not node_terms_match(required, labels):
            reasons.append(NODE_CONFLICT)
            break
    if not delayed:
        return reasons, [], []
    for claim in delayed:
        selected = w.selected_node(claim)
        if selected is not None and selected != node:
            return reasons + [BIND_CONFLICT], [], []
    to_provision = [c for c in delayed if w.selected_node(c) is not None]
    matching = sorted([c for c in delayed if w.selected_node(c) is None], key=_size)  # stable
    chosen: set[str] = set()
    bindings = []
    satisfied = True
    for claim in matching:
        pv = _find_matching(w, claim, node, chosen)
        if pv is None:
            satisfied = False
            to_provision.append(claim)
            continue
        chosen.add(_meta(pv)["name"])
        bindings.append((pv, claim))
    provisions = []
    enough = True
    if to_provision:
        satisfied = True
        for claim in to_provision:
            sc = w.classes[claim_class(claim)]
            provisioner = sc.get("provisioner") or ""
            if not provisioner or provisioner == "kubernetes.io/no-provisioner" or not _allowed(sc, labels):
                satisfied, provisions = False, []
                break
            request = ((_spec(claim).get("resources") or {}).get("requests") or {}).get("storage")
            driver = w.csi_drivers.get(provisioner)
            if request is not None and driver is not None and _spec(driver).get("storageCapacity"):
                size = math.ceil(quantity(request))
                ok = False
                for cap in w.capacities:
                    limit = cap.get("maximumVolumeSize", cap.get("capacity"))
                    if cap.get("storageClassName") != _meta(sc)["name"] or limit is None:
                        continue
                    if math.ceil(quantity(limit)) < size or cap.get("nodeTopology") is None:
                        continue
                    if selector_match(cap["nodeTopology"], labels):
                        ok = True
                        break
                if not ok:
                    enough, provisions = False, []
                    break
            provisions.append(claim)
    if not satisfied:
        reasons.append(BIND_CONFLICT)
    if not enough:
        reasons.append(NOT_ENOUGH_SPACE)
    return reasons, bindings, provisions


def volume_binding(w: World, pod: Mapping) -> tuple[str | None, dict[str, Any]]:
    pre = _binding_prefilter(w, pod)
    if isinstance(pre, str):
        return pre, {}
    if pre is None:
        return None, {n: None for n in w.nodes}
    bound, delayed = pre
    out: dict[str, Any] = {}
    for node in w.nodes:
        reasons, _, _ = find_pod_volumes(w, bound, delayed, node)
        if reasons and reasons[0].startswith("error:"):
            return (
                "filter-error:" + f'running "VolumeBinding" filter plugin: could not translate pv: '
                f"{reasons[0][len('error:') :]}",
                {},
            )
        out[node] = tuple(reasons) or None
    return None, out


def assume(w: World, pod: Mapping, node: str) -> tuple[tuple, tuple] | None:
    """Reserve on ``node``: what is assumed (and recorded in ``w``), as (bindings, provisions); None when all bound."""
    pre = _binding_prefilter(w, pod)
    if not isinstance(pre, tuple):
        return None
    bound, delayed = pre
    if not delayed:
        return None
    reasons, bindings, provisions = find_pod_volumes(w, bound, delayed, node)
    assert not reasons, reasons
    out_b, out_p = [], []
    for pv, claim in bindings:
        m = _meta(claim)
        w.assumed_refs[_meta(pv)["name"]] = {"namespace": m["namespace"], "name": m["name"], "uid": m.get("uid", "")}
        out_b.append((_meta(pv)["name"], f"{m['namespace']}/{m['name']}", m.get("uid", "")))
    for claim in provisions:
        key = f"{_meta(claim)['namespace']}/{_meta(claim)['name']}"
        w.assumed_nodes[key] = node
        out_p.append(key)
    return tuple(out_b), tuple(out_p)


PLUGINS = {
    "VolumeRestrictions": volume_restrictions,
    "NodeVolumeLimits": node_volume_limits,
    "VolumeBinding": volume_binding,
    "VolumeZone": volume_zone,
}
ORDER = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


def evaluate(w: World, pod: Mapping, plugins: Sequence[str] = ORDER) -> Result:
    """Every plugin's PreFilter in the default profile's order (the first rejection decides), then the Filter
    errors (any node meeting one fails the attempt), then per node the first plugin that refuses it."""
    per_plugin = {}
    filter_error = None
    for name in ORDER:
        if name not in plugins:
            continue
        rejection, nodes = PLUGINS[name](w, pod)
        if rejection is not None and rejection.startswith("filter-error:"):
            filter_error = filter_error or rejection[len("filter-error:") :]
            continue
        if rejection is not None:
            if rejection.startswith("error:"):
                return Result(error=rejection[len("error:") :])
            return Result(rejection=rejection)
        per_plugin[name] = nodes
    if filter_error is not None:
        return Result(error=filter_error)
    result = Result()
    for node in w.nodes:
        reasons: tuple[str, ...] = ()
        for name in ORDER:
            if name in per_plugin and per_plugin[name][node]:
                got = per_plugin[name][node]
                reasons = tuple(sorted(got if isinstance(got, tuple) else (got,)))
                break
        result.nodes[node] = reasons
    return result
