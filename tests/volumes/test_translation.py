"""In-tree volumes translated to CSI (vcore.volumes.translation) against csi-translation-lib v0.34's own tables:
translate_test.go TestTopologyTranslation, plugins/aws_ebs_test.go TestKubernetesVolumeIDToEBSVolumeID,
plugins/gce_pd_test.go TestTranslateInTreePVToCSIVolIDFmt, plugins/in_tree_volume_test.go
TestTranslateTopologyFromInTreeToCSI; case names as ids."""

from __future__ import annotations

import pytest

from vcore.volumes import translation as T

GCE_KEY, EBS_KEY, CINDER_KEY = (
    "topology.gke.io/zone",
    "topology.ebs.csi.aws.com/zone",
    "topology.cinder.csi.openstack.org/zone",
)
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
GA_ZONE, GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_LABELS = {BETA_ZONE: "us-east-1a", BETA_REGION: "us-east-1"}
GA_LABELS = {GA_ZONE: "us-east-1a", GA_REGION: "us-east-1"}
REGIONAL_BETA = {BETA_ZONE: "europe-west1-b__europe-west1-c"}
REGIONAL_GA = {GA_ZONE: "europe-west1-b__europe-west1-c"}


def topology(key, *values):
    return [{"expressions": [(key, "In", list(values))], "fields": []}]


def affinity(multi, key, *values):
    """makeNodeAffinity: one term with every value, or (multi) one term per value."""
    if not multi:
        return topology(key, *values)
    return [{"expressions": [(key, "In", [v])], "fields": []} for v in values]


SOURCES = {
    "gce": ("gcePersistentDisk", {"pdName": "test-disk"}),
    "aws": ("awsElasticBlockStore", {"volumeID": "vol-1"}),
    "cinder": ("cinder", {"volumeID": "c-1"}),
}


@pytest.mark.parametrize(
    "source, labels, terms, want",
    [
        pytest.param(
            "gce",
            BETA_LABELS,
            None,
            affinity(False, GCE_KEY, "us-east-1a"),
            id="TestTopologyTranslation/GCE PD with beta zone labels",
        ),
        pytest.param(
            "gce",
            GA_LABELS,
            None,
            affinity(False, GCE_KEY, "us-east-1a"),
            id="TestTopologyTranslation/GCE PD with GA kubernetes zone labels",
        ),
        pytest.param(
            "gce",
            {},
            topology(BETA_ZONE, "us-east-2a"),
            affinity(False, GCE_KEY, "us-east-2a"),
            id="TestTopologyTranslation/GCE PD with existing topology (beta keys)",
        ),
        pytest.param(
            "gce",
            {},
            topology(GCE_KEY, "us-east-2a"),
            affinity(False, GCE_KEY, "us-east-2a"),
            id="TestTopologyTranslation/GCE PD with existing topology (CSI keys)",
        ),
        pytest.param(
            "gce",
            BETA_LABELS,
            topology(BETA_ZONE, "us-east-2a"),
            affinity(False, GCE_KEY, "us-east-2a"),
            id="TestTopologyTranslation/GCE PD with zone labels and topology",
        ),
        pytest.param(
            "gce",
            REGIONAL_BETA,
            None,
            affinity(False, GCE_KEY, "europe-west1-b", "europe-west1-c"),
            id="TestTopologyTranslation/GCE PD with regional zones",
        ),
        pytest.param(
            "gce",
            {},
            topology(GA_ZONE, "europe-west1-b", "europe-west1-c"),
            affinity(False, GCE_KEY, "europe-west1-b", "europe-west1-c"),
            id="TestTopologyTranslation/GCE PD with regional topology",
        ),
        pytest.param(
            "gce",
            REGIONAL_BETA,
            topology(BETA_ZONE, "europe-west1-f", "europe-west1-g"),
            affinity(False, GCE_KEY, "europe-west1-f", "europe-west1-g"),
            id="TestTopologyTranslation/GCE PD with Beta regional zone and topology",
        ),
        pytest.param(
            "gce",
            REGIONAL_GA,
            topology(GA_ZONE, "europe-west1-f", "europe-west1-g"),
            affinity(False, GCE_KEY, "europe-west1-f", "europe-west1-g"),
            id="TestTopologyTranslation/GCE PD with GA regional zone and topology",
        ),
        pytest.param(
            "gce",
            {},
            topology(GA_ZONE, "europe-west1-f") + topology(GA_ZONE, "europe-west1-g"),
            affinity(True, GCE_KEY, "europe-west1-f", "europe-west1-g"),
            id="TestTopologyTranslation/GCE PD with multiple node selector terms",
        ),
        pytest.param(
            "aws",
            BETA_LABELS,
            None,
            affinity(False, EBS_KEY, "us-east-1a"),
            id="TestTopologyTranslation/AWS EBS with beta zone labels",
        ),
        pytest.param(
            "aws",
            BETA_LABELS,
            topology(BETA_ZONE, "us-east-2a"),
            affinity(False, EBS_KEY, "us-east-2a"),
            id="TestTopologyTranslation/AWS EBS with beta zone labels and topology",
        ),
        pytest.param(
            "aws",
            GA_LABELS,
            None,
            affinity(False, EBS_KEY, "us-east-1a"),
            id="TestTopologyTranslation/AWS EBS with GA zone labels",
        ),
        pytest.param(
            "aws",
            GA_LABELS,
            topology(GA_ZONE, "us-east-2a"),
            affinity(False, EBS_KEY, "us-east-2a"),
            id="TestTopologyTranslation/AWS EBS with GA zone labels and topology",
        ),
        pytest.param(
            "cinder",
            BETA_LABELS,
            None,
            affinity(False, CINDER_KEY, "us-east-1a"),
            id="TestTopologyTranslation/OpenStack Cinder with zone labels",
        ),
        pytest.param(
            "cinder",
            BETA_LABELS,
            topology(BETA_ZONE, "us-east-2a"),
            affinity(False, CINDER_KEY, "us-east-2a"),
            id="TestTopologyTranslation/OpenStack Cinder with zone labels and topology",
        ),
    ],
)
def test_topology_translation(source, labels, terms, want):
    field, volume = SOURCES[source]
    t = T.translate_pv(field, volume, labels, terms)
    assert t.error == "" and t.affinity == want


@pytest.mark.parametrize(
    "terms, want",
    [
        pytest.param(
            [{"expressions": [(GA_ZONE, "In", ["us-east1-a"]), (GA_REGION, "In", ["us-east1"])], "fields": []}],
            [{"expressions": [(GCE_KEY, "In", ["us-east1-a"]), (GA_REGION, "In", ["us-east1"])], "fields": []}],
            id="TestTranslateTopologyFromInTreeToCSI/Replace GA Kubernetes Zone Topology to GCE CSI Topology",
        ),
        pytest.param(
            [{"expressions": [(BETA_ZONE, "In", ["us-west2-b"]), (BETA_REGION, "In", ["us-west2"])], "fields": []}],
            [{"expressions": [(GCE_KEY, "In", ["us-west2-b"]), (GA_REGION, "In", ["us-west2"])], "fields": []}],
            id="TestTranslateTopologyFromInTreeToCSI/Replace Beta Kubernetes Topology to GCE CSI Topology and "
            "upgrade region label",
        ),
    ],
)
def test_translate_topology_from_in_tree_to_csi(terms, want):
    labels = {GA_ZONE: "us-east1-a", GA_REGION: "us-east1"}
    assert T.translate_pv("gcePersistentDisk", {"pdName": "gcepd"}, labels, terms).affinity == want


@pytest.mark.parametrize(
    "kubernetes_id, want",
    [
        pytest.param(
            "vol-02399794d890f9375", "vol-02399794d890f9375", id="TestKubernetesVolumeIDToEBSVolumeID/Normal ID format"
        ),
        pytest.param(
            "aws:///vol-02399794d890f9375",
            "vol-02399794d890f9375",
            id="TestKubernetesVolumeIDToEBSVolumeID/aws:///{volumeId} format",
        ),
        pytest.param(
            "aws://us-west-2a/vol-02399794d890f9375",
            "vol-02399794d890f9375",
            id="TestKubernetesVolumeIDToEBSVolumeID/aws://{zone}/{volumeId} format",
        ),
        pytest.param(
            "aws://us-west-2a/02399794d890f9375",
            None,
            id="TestKubernetesVolumeIDToEBSVolumeID/fails on invalid volume ID",
        ),
    ],
)
def test_kubernetes_volume_id_to_ebs_volume_id(kubernetes_id, want):
    t = T.translate_inline("awsElasticBlockStore", {"volumeID": kubernetes_id})
    if want is None:
        assert t.error == (
            f"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ({kubernetes_id})"
        )
    else:
        assert (t.error, t.driver, t.handle) == ("", "ebs.csi.aws.com", want)


@pytest.mark.parametrize(
    "key, value, want",
    [
        pytest.param(
            BETA_ZONE,
            "us-east1-a",
            "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name",
            id="TestTranslateInTreePVToCSIVolIDFmt/beta topology key zonal",
        ),
        pytest.param(
            GA_ZONE,
            "us-east1-a",
            "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name",
            id="TestTranslateInTreePVToCSIVolIDFmt/v1 topology key zonal",
        ),
        pytest.param(
            BETA_ZONE,
            "us-central1-a__us-central1-c",
            "projects/UNSPECIFIED/regions/us-central1/disks/pd-name",
            id="TestTranslateInTreePVToCSIVolIDFmt/beta topology key regional",
        ),
        pytest.param(
            GA_ZONE,
            "us-central1-a__us-central1-c",
            "projects/UNSPECIFIED/regions/us-central1/disks/pd-name",
            id="TestTranslateInTreePVToCSIVolIDFmt/v1 topology key regional",
        ),
    ],
)
def test_gce_volume_handle(key, value, want):
    t = T.translate_pv("gcePersistentDisk", {"pdName": "pd-name"}, {key: value}, None)
    assert (t.driver, t.handle) == ("pd.csi.storage.gke.io", want)


def test_translation_errors_are_kept_as_kube_words_them():
    regional = T.translate_pv("gcePersistentDisk", {"pdName": "d"}, {GA_ZONE: "us__eu"}, None)
    assert regional.error == (
        "failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: us"
    )
    two_regions = T.translate_pv("gcePersistentDisk", {"pdName": "d"}, {GA_ZONE: "us-east1-a__eu-west1-b"}, None)
    assert two_regions.error == (
        "failed to get region from zones: multiple or no regions gotten from zones, got: map[eu-west1:{} us-east1:{}]"
    )
    blob = T.translate_inline("azureDisk", {"diskURI": "u", "kind": "Dedicated"})
    assert blob.error == "kind(Dedicated) is not supported in csi migration"
    assert T.translate_inline("azureDisk", {"diskURI": "u", "kind": "Managed"}).handle == "u"
    gce = T.translate_inline("gcePersistentDisk", {"pdName": "x"})
    assert gce.handle == "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/x"
    assert T.inline_plugin("azureFile") == "" and T.inline_plugin("portworxVolume") == "kubernetes.io/portworx-volume"
