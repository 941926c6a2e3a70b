"""A WaitForFirstConsumer volume provisioner for the test control plane, where no CSI driver or kubelet runs.

It acts as an external provisioner does (kubernetes-csi/external-provisioner, through the PV controller's
``volume.kubernetes.io/storage-provisioner`` annotation): for a claim of one of its StorageClasses that the
scheduler selected a node for (``volume.kubernetes.io/selected-node``), it creates a PV of the claim's size, access
modes and class, pre-bound to the claim (claimRef with its uid), with node affinity to that node's hostname and a
CSI source of its own driver name; kube-controller-manager's PV binder then binds the claim. A node labelled
``vcore.dev/no-storage=true`` cannot hold such volumes: the provisioner gives up there as external-provisioner does
when it must reschedule (it removes the selected-node annotation), and the scheduler places the pod again. A PV it
made whose claim is gone (Released) is deleted (reclaim policy Delete).

It polls the API (every ``interval`` seconds): the clusters it serves hold a few dozen claims.
"""

from __future__ import annotations

import logging
import threading

from vcore_kube.kubeclient import Api, ApiException

log = logging.getLogger(__name__)

NAME = "testenv.vcore.dev"  # a provisioner and CSI driver name (a DNS subdomain, as PV validation wants)
SELECTED_NODE = "volume.kubernetes.io/selected-node"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
NO_STORAGE_LABEL = "vcore.dev/no-storage"


class Provisioner:
    """start() runs the sweeps on a daemon thread until stop(); sweep() is one pass."""

    def __init__(self, api: Api, name: str = NAME, interval: float = 0.2) -> None:
        self.api, self.provisioner_name, self.interval = api, name, interval
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="testenv-provisioner", daemon=True)
        self.provisioned = 0
        self.rescheduled = 0

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=10)

    def _run(self) -> None:
        while not self.stop_event.wait(self.interval):
            try:
                self.sweep()
            except (ConnectionError, TimeoutError):  # the API server away (a fault test): try again
                log.debug("provisioner sweep failed", exc_info=True)
            except Exception:
                log.warning("provisioner sweep failed", exc_info=True)

    def sweep(self) -> None:
        classes = {
            c["metadata"]["name"]
            for c in self.api.get("/apis/storage.k8s.io/v1/storageclasses")["items"]
            if c.get("provisioner") == self.provisioner_name
        }
        claims = self.api.get("/api/v1/persistentvolumeclaims")["items"]
        pvs = {pv["metadata"]["name"]: pv for pv in self.api.get("/api/v1/persistentvolumes")["items"]}
        for claim in claims:
            meta, spec = claim["metadata"], claim.get("spec") or {}
            annotations = meta.get("annotations") or {}
            if spec.get("volumeName") or spec.get("storageClassName") not in classes:
                continue
            if annotations.get(STORAGE_PROVISIONER) != self.provisioner_name or SELECTED_NODE not in annotations:
                continue
            if f"pvc-{meta['uid']}" in pvs:
                continue
            self._provision(claim, annotations[SELECTED_NODE])
        for pv in pvs.values():
            ann = pv["metadata"].get("annotations") or {}
            if ann.get(PROVISIONED_BY) == self.provisioner_name and (pv.get("status") or {}).get("phase") == "Released":
                self._delete_released(pv)

    def _provision(self, claim: dict, node: str) -> None:
        meta, spec = claim["metadata"], claim["spec"]
        try:
            target = self.api.get(f"/api/v1/nodes/{node}")
        except ApiException as e:
            if e.status != 404:
                raise
            target = None
        labels = (target or {}).get("metadata", {}).get("labels") or {}
        if target is None or labels.get(NO_STORAGE_LABEL) == "true":
            self._reschedule(claim)
            return
        hostname = labels.get("kubernetes.io/hostname", node)
        name = f"pvc-{meta['uid']}"
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {PROVISIONED_BY: self.provisioner_name}},
            "spec": {
                "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")},
                "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": spec["storageClassName"],
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "csi": {"driver": self.provisioner_name, "volumeHandle": name},
                "claimRef": {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [hostname]}
                                ]
                            }
                        ]
                    }
                },
            },
        }
        try:
            self.api.create("/api/v1/persistentvolumes", pv)
            self.provisioned += 1
        except ApiException as e:
            if e.status != 409:
                raise

    def _reschedule(self, claim: dict) -> None:
        """external-provisioner's ProvisioningReschedule: drop the selected node, the scheduler tries again."""
        meta = claim["metadata"]
        try:
            self.api.patch(
                f"/api/v1/namespaces/{meta['namespace']}/persistentvolumeclaims/{meta['name']}",
                {"metadata": {"annotations": {SELECTED_NODE: None}}},
            )
            self.rescheduled += 1
        except ApiException as e:
            if e.status not in (404, 409):
                raise

    def _delete_released(self, pv: dict) -> None:
        try:
            self.api.delete(f"/api/v1/persistentvolumes/{pv['metadata']['name']}")
        except ApiException as e:
            if e.status != 404:
                raise
