"""In-tree volumes translated to CSI, as Kubernetes' csi-translation-lib (v0.34) does for the scheduler.

kube-scheduler translates an in-tree volume to CSI only where the node's CSINode lists its plugin in the
``storage.alpha.kubernetes.io/migrated-plugins`` annotation, and only for the plugins whose migration it turns on:
AWS EBS, GCE PD, Azure Disk, OpenStack Cinder and Portworx (Azure File and vSphere never count). What it needs of the
translation: the CSI driver and volume handle (NodeVolumeLimits counts volumes by them) and, for a PV, its node
affinity with the zone label replaced by the driver's topology key (VolumeBinding checks a bound PV's affinity that
way). A translation that fails is kept as its error message: kube-scheduler reports it when a node needs it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MIGRATED_DRIVERS", "MULTI_ZONE", "Translated", "inline_plugin", "translate_inline", "translate_pv"]

GCE_PD, AWS_EBS, AZURE_DISK, CINDER, PORTWORX = (
    "kubernetes.io/gce-pd",
    "kubernetes.io/aws-ebs",
    "kubernetes.io/azure-disk",
    "kubernetes.io/cinder",
    "kubernetes.io/portworx-volume",
)

#: The in-tree plugins whose CSI migration kube-scheduler honors, by their volume source field, with the CSI driver
#: each migrates to.
MIGRATED_DRIVERS: Mapping[str, tuple[str, str]] = {
    "gcePersistentDisk": (GCE_PD, "pd.csi.storage.gke.io"),
    "awsElasticBlockStore": (AWS_EBS, "ebs.csi.aws.com"),
    "azureDisk": (AZURE_DISK, "disk.csi.azure.com"),
    "cinder": (CINDER, "cinder.csi.openstack.org"),
    "portworxVolume": (PORTWORX, "pxd.portworx.com"),
}

# The topology key each driver's PVs use for the zone (Azure Disk and Portworx keep the PV's node affinity as it is).
_TOPOLOGY_KEYS = {
    GCE_PD: "topology.gke.io/zone",
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}

ZONE_GA, REGION_GA = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
ZONE_BETA, REGION_BETA = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
MULTI_ZONE = "__"
_UNSPECIFIED = "UNSPECIFIED"
_EBS_VOLUME = re.compile(r"vol-[^/]*")
_URL_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")

Term = dict[str, Any]  # a node selector term: {"expressions": [(key, op, values)], "fields": [...]}


@dataclass(frozen=True)
class Translated:
    """An in-tree volume as CSI: its driver and handle, or the translation's error; for a PV, its node affinity
    terms after translation (None: no required affinity)."""

    plugin: str
    driver: str = ""
    handle: str = ""
    error: str = ""
    affinity: list[Term] | None = None


def inline_plugin(source: str) -> str:
    """The in-tree plugin of an inline volume source field whose migration kube-scheduler honors ("" otherwise)."""
    entry = MIGRATED_DRIVERS.get(source)
    return entry[0] if entry else ""


def translate_inline(source: str, volume: Mapping[str, Any]) -> Translated:
    """An inline pod volume (its source field and that field's value) as CSI (TranslateInTreeInlineVolumeToCSI)."""
    plugin, driver = MIGRATED_DRIVERS[source]
    if source == "gcePersistentDisk":
        handle = f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{volume.get('pdName') or ''}"
        return Translated(plugin, driver, handle)
    if source == "awsElasticBlockStore":
        handle, error = _ebs_volume_id(volume.get("volumeID") or "")
        if error:
            return Translated(plugin, error=f"failed to translate Kubernetes ID to EBS Volume ID {error}")
        return Translated(plugin, driver, handle)
    if source == "azureDisk":
        error = _azure_disk_kind(volume)
        if error:
            return Translated(plugin, error=error)
        return Translated(plugin, driver, volume.get("diskURI") or "")
    return Translated(plugin, driver, volume.get("volumeID") or "")  # cinder, portworxVolume


def translate_pv(
    source: str, volume: Mapping[str, Any], labels: Mapping[str, str], terms: Sequence[Mapping[str, Any]] | None
) -> Translated:
    """A PV of an in-tree source (the source field, its value, the PV's labels and required node affinity terms) as
    CSI (TranslateInTreePVToCSI)."""
    plugin, driver = MIGRATED_DRIVERS[source]
    if source == "gcePersistentDisk":
        pd = volume.get("pdName") or ""
        zones = (labels.get(ZONE_BETA) or labels.get(ZONE_GA) or "").split(MULTI_ZONE)
        if len(zones) == 1 and zones[0]:
            handle = f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd}"
        elif len(zones) > 1:
            region, error = _gce_region(zones)
            if error:
                return Translated(plugin, error=f"failed to get region from zones: {error}")
            handle = f"projects/{_UNSPECIFIED}/regions/{region}/disks/{pd}"
        else:
            handle = f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd}"
    elif source == "awsElasticBlockStore":
        handle, error = _ebs_volume_id(volume.get("volumeID") or "")
        if error:
            return Translated(plugin, error=f"failed to translate Kubernetes ID to EBS Volume ID {error}")
    elif source == "azureDisk":
        error = _azure_disk_kind(volume)
        if error:
            return Translated(plugin, error=error)
        handle = volume.get("diskURI") or ""
    else:
        handle = volume.get("volumeID") or ""
    key = _TOPOLOGY_KEYS.get(plugin)
    affinity = None if terms is None else [dict(term) for term in copy.deepcopy(list(terms))]
    if key is not None:
        affinity = _translate_topology(affinity, labels, key)
    return Translated(plugin, driver, handle, affinity=affinity)


def _translate_topology(terms: list[Term] | None, labels: Mapping[str, str], csi_key: str) -> list[Term] | None:
    """translateTopologyFromInTreeToCSI: the zone requirement's key becomes the driver's; a PV without one gets it
    from its zone label; a beta region key becomes the GA one."""
    zone_key, region_key = _topology_label(terms, labels)
    if _values_of(terms, zone_key):
        terms = _replace_key(terms, zone_key, csi_key)
    elif zone_key in labels:
        zones = sorted({z.strip() for z in labels[zone_key].split(MULTI_ZONE) if z.strip()})
        if zones:
            if terms is None:
                terms = []
            if not terms:
                terms.append({"expressions": [], "fields": []})
            for term in terms:
                term["expressions"] = [*term.get("expressions", []), (csi_key, "In", zones)]
    if region_key == REGION_BETA and _values_of(terms, region_key):
        terms = _replace_key(terms, region_key, REGION_GA)
    return terms


def _topology_label(terms: list[Term] | None, labels: Mapping[str, str]) -> tuple[str, str]:
    if _has_key(terms, ZONE_GA):
        return ZONE_GA, REGION_GA
    if _has_key(terms, ZONE_BETA):
        return ZONE_BETA, REGION_BETA
    if ZONE_GA in labels:
        return ZONE_GA, REGION_GA
    if ZONE_BETA in labels:
        return ZONE_BETA, REGION_BETA
    return ZONE_GA, REGION_GA


def _has_key(terms: list[Term] | None, key: str) -> bool:
    return any(k == key for term in terms or () for k, _, _ in term.get("expressions", ()))


def _values_of(terms: list[Term] | None, key: str) -> list[str]:
    return sorted(
        {v for term in terms or () for k, _, values in term.get("expressions", ()) if k == key for v in values}
    )


def _replace_key(terms: list[Term] | None, old: str, new: str) -> list[Term] | None:
    if not terms:
        return terms
    for term in terms:
        term["expressions"] = [(new if k == old else k, op, values) for k, op, values in term.get("expressions", ())]
    return terms


def _ebs_volume_id(kubernetes_id: str) -> tuple[str, str]:
    """KubernetesVolumeIDToEBSVolumeID: (volume id, "") or ("", error)."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id, ""
    problem = _url_problem(kubernetes_id)
    if problem:
        return "", f"Invalid disk name ({kubernetes_id}): parse {_go_quote(kubernetes_id)}: {problem}"
    rest = kubernetes_id[len("aws://") :]
    slash = rest.find("/")
    path = rest[slash:] if slash >= 0 else ""
    path = path.split("?", 1)[0].split("#", 1)[0]
    aws_id = path.strip("/")
    if not _EBS_VOLUME.fullmatch(aws_id):
        return "", f"Invalid format for AWS volume ({kubernetes_id})"
    return aws_id, ""


def _url_problem(url: str) -> str:
    """The error Go's url.Parse gives the ones a volume ID can plausibly hold ("" when it parses)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "net/url: invalid control character in URL"
    bad = _URL_ESCAPE.search(url)
    if bad:
        return f"invalid URL escape {_go_quote(url[bad.start() : bad.start() + 3])}"
    host = url[len("aws://") :].split("/", 1)[0]
    if ":" in host:
        port = host.rsplit(":", 1)[1]
        if not port.isdigit() and port:
            return f"invalid port {_go_quote(':' + port)} after host"
    for c in host:
        if c in ' <>"`{}|\\^':
            return f"invalid character {_go_quote(c)} in host name"
    return ""


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _azure_disk_kind(volume: Mapping[str, Any]) -> str:
    kind = volume.get("kind")
    if kind is not None and str(kind).lower() != "managed":
        return f"kind({kind}) is not supported in csi migration"
    return ""


def _gce_region(zones: Sequence[str]) -> tuple[str, str]:
    """gceGetRegionFromZones: (region, "") or ("", error)."""
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            return "", f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        found = " ".join(f"{r}:{{}}" for r in sorted(regions))  # Go's map[string]struct{} printed
        return "", f"multiple or no regions gotten from zones, got: map[{found}]"
    return regions.pop(), ""
