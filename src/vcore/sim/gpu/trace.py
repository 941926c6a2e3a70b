"""Loaders for openb-format GPU traces (Alibaba cluster-trace-gpu-v2023, the FGD paper's trace).

Node lists have the columns ``sn,cpu_milli,memory_mib,gpu,model``. Pod lists come in two formats: the 11-column
``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``
and the 5-column ``name,cpu_milli,memory_mib,num_gpu,gpu_milli``. A header row is optional; without one the
format is told by the column count. Every value is validated: a bad row raises ``ValueError`` naming the file,
line, object (``pod <name>`` / ``node <sn>``) and field.

The loaders return column arrays (numpy) so that the replay can hand them to the native core in one call.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "NodeList",
    "PodList",
    "load_nodes",
    "load_pods",
    "workload_path",
    "node_list_path",
    "list_workloads",
    "MAX_GPUS_PER_NODE",
]

MAX_GPUS_PER_NODE = 64
_NODE_COLUMNS = ["sn", "cpu_milli", "memory_mib", "gpu", "model"]
_POD_COLUMNS_11 = [
    "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
    "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time",
]
_POD_COLUMNS_5 = _POD_COLUMNS_11[:5]


@dataclass
class NodeList:
    """Nodes of a trace, one entry per node, in file order."""

    names: list[str]
    cpu_milli: np.ndarray      # int64
    memory_mib: np.ndarray     # int64
    gpu_count: np.ndarray      # int32
    model: list[str]           # "" when the node has no GPU
    source: str = ""

    @property
    def n_nodes(self) -> int:
        return len(self.names)

    @property
    def gpu_capacity_milli(self) -> int:
        return int(self.gpu_count.sum()) * 1000


@dataclass
class PodList:
    """Pods of a trace, one entry per pod, in file order. ``gpu_spec`` holds the allowed models (empty = any)."""

    names: list[str]
    cpu_milli: np.ndarray      # int64
    memory_mib: np.ndarray     # int64
    num_gpu: np.ndarray        # int32
    gpu_milli: np.ndarray      # int32, per GPU (1000 = whole)
    gpu_spec: list[tuple[str, ...]] = field(default_factory=list)
    source: str = ""

    @property
    def n_pods(self) -> int:
        return len(self.names)

    @property
    def gpu_demand_milli(self) -> np.ndarray:
        """Total GPU milli each pod asks for (num_gpu x gpu_milli), int64."""
        return self.num_gpu.astype(np.int64) * self.gpu_milli.astype(np.int64)

    def take(self, idx: np.ndarray) -> "PodList":
        """The pods at ``idx`` (with repetitions), in that order."""
        idx = np.asarray(idx, dtype=np.int64)
        return PodList(
            names=[self.names[i] for i in idx],
            cpu_milli=self.cpu_milli[idx],
            memory_mib=self.memory_mib[idx],
            num_gpu=self.num_gpu[idx],
            gpu_milli=self.gpu_milli[idx],
            gpu_spec=[self.gpu_spec[i] for i in idx],
            source=self.source,
        )


def _rows(path: str, formats: list[list[str]], kind: str):
    """Yield (line_number, header_columns, row) after checking the header / column count."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{kind} list {path!r} does not exist")
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header: list[str] | None = None
        for lineno, row in enumerate(reader, start=1):
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            row = [c.strip() for c in row]
            if header is None:
                names = {f[0] for f in formats}
                if row[0] in names:
                    for fmt in formats:
                        if row[: len(fmt)] == fmt and len(row) == len(fmt):
                            header = fmt
                            break
                    else:
                        expected = " or ".join(",".join(f) for f in formats)
                        raise ValueError(f"{path}:{lineno}: {kind} list header {','.join(row)!r} is not {expected}")
                    continue
                for fmt in formats:
                    if len(row) == len(fmt):
                        header = fmt
                        break
                else:
                    counts = " or ".join(str(len(f)) for f in formats)
                    raise ValueError(f"{path}:{lineno}: {kind} list row has {len(row)} columns, expected {counts}")
            if len(row) != len(header):
                raise ValueError(
                    f"{path}:{lineno}: {kind} {row[0]!r}: row has {len(row)} columns, expected {len(header)}"
                )
            yield lineno, header, row


def _int(value: str, where: str, fld: str, lo: int = 0, hi: int | None = None) -> int:
    try:
        v = int(value)
    except ValueError:
        try:
            f = float(value)
        except ValueError:
            raise ValueError(f"{where}: {fld}: not an integer: {value!r}") from None
        if not f.is_integer():
            raise ValueError(f"{where}: {fld}: not an integer: {value!r}") from None
        v = int(f)
    if v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ValueError(f"{where}: {fld}: must be {rng}, got {v}")
    return v


def load_nodes(path: str) -> NodeList:
    """Read an openb node list (``sn,cpu_milli,memory_mib,gpu,model``)."""
    names: list[str] = []
    cpu: list[int] = []
    mem: list[int] = []
    gpus: list[int] = []
    models: list[str] = []
    seen: set[str] = set()
    for lineno, _hdr, row in _rows(path, [_NODE_COLUMNS], "node"):
        sn = row[0]
        where = f"{path}:{lineno}: node {sn!r}"
        if not sn:
            raise ValueError(f"{path}:{lineno}: node: sn: empty node name")
        if sn in seen:
            raise ValueError(f"{where}: sn: duplicate node name")
        seen.add(sn)
        names.append(sn)
        cpu.append(_int(row[1], where, "cpu_milli"))
        mem.append(_int(row[2], where, "memory_mib"))
        g = _int(row[3], where, "gpu", 0, MAX_GPUS_PER_NODE)
        gpus.append(g)
        model = row[4]
        if g > 0 and not model:
            raise ValueError(f"{where}: model: a node with GPUs needs a GPU model")
        if "|" in model:
            raise ValueError(f"{where}: model: one model per node, got {model!r}")
        models.append(model)
    return NodeList(
        names=names,
        cpu_milli=np.asarray(cpu, dtype=np.int64),
        memory_mib=np.asarray(mem, dtype=np.int64),
        gpu_count=np.asarray(gpus, dtype=np.int32),
        model=models,
        source=path,
    )


def load_pods(path: str) -> PodList:
    """Read an openb pod list in the 11-column or the 5-column format."""
    names: list[str] = []
    cpu: list[int] = []
    mem: list[int] = []
    num: list[int] = []
    milli: list[int] = []
    spec: list[tuple[str, ...]] = []
    for lineno, hdr, row in _rows(path, [_POD_COLUMNS_11, _POD_COLUMNS_5], "pod"):
        name = row[0]
        where = f"{path}:{lineno}: pod {name!r}"
        if not name:
            raise ValueError(f"{path}:{lineno}: pod: name: empty pod name")
        c = _int(row[1], where, "cpu_milli")
        m = _int(row[2], where, "memory_mib")
        n = _int(row[3], where, "num_gpu", 0, MAX_GPUS_PER_NODE)
        g = _int(row[4], where, "gpu_milli", 0, 1000)
        if n == 0 and g != 0:
            raise ValueError(f"{where}: gpu_milli: {g} GPU milli requested with num_gpu 0")
        if n > 0 and g == 0:
            raise ValueError(f"{where}: gpu_milli: num_gpu {n} requested with gpu_milli 0")
        if n > 1 and g != 1000:
            raise ValueError(f"{where}: gpu_milli: a pod with num_gpu {n} > 1 takes whole GPUs, got gpu_milli {g}")
        models: tuple[str, ...] = ()
        if len(hdr) == 11 and row[5]:
            models = tuple(sorted({s.strip() for s in row[5].split("|") if s.strip()}))
            if not models:
                raise ValueError(f"{where}: gpu_spec: no model in {row[5]!r}")
        names.append(name)
        cpu.append(c)
        mem.append(m)
        num.append(n)
        milli.append(g)
        spec.append(models)
    return PodList(
        names=names,
        cpu_milli=np.asarray(cpu, dtype=np.int64),
        memory_mib=np.asarray(mem, dtype=np.int64),
        num_gpu=np.asarray(num, dtype=np.int32),
        gpu_milli=np.asarray(milli, dtype=np.int32),
        gpu_spec=spec,
        source=path,
    )


def workload_path(trace_dir: str, workload: str) -> str:
    """Path of a workload: a file path, ``<dir>/<name>``, ``<dir>/<name>.csv`` or ``<dir>/openb_pod_list_<name>.csv``."""
    candidates = [workload, os.path.join(trace_dir, workload), os.path.join(trace_dir, workload + ".csv"),
                  os.path.join(trace_dir, f"openb_pod_list_{workload}.csv")]
    for c in candidates:
        if os.path.isfile(c):
            return c
    avail = ", ".join(list_workloads(trace_dir)) or "none"
    raise FileNotFoundError(f"workload {workload!r} not found in {trace_dir!r} (available: {avail})")


def node_list_path(trace_dir: str, node_list: str | None = None) -> str:
    """The node list to use: the one given, else the GPU-node list of the FGD experiments."""
    if node_list:
        for c in (node_list, os.path.join(trace_dir, node_list), os.path.join(trace_dir, node_list + ".csv")):
            if os.path.isfile(c):
                return c
        raise FileNotFoundError(f"node list {node_list!r} not found in {trace_dir!r}")
    for name in ("openb_node_list_gpu_node.csv", "node_list.csv", "nodes.csv"):
        p = os.path.join(trace_dir, name)
        if os.path.isfile(p):
            return p
    raise FileNotFoundError(f"no node list (openb_node_list_gpu_node.csv) in {trace_dir!r}")


def list_workloads(trace_dir: str) -> list[str]:
    """Workload names of the openb pod lists in a directory (``default``, ``cpu050``, ``gpushare40`` ...)."""
    if not os.path.isdir(trace_dir):
        return []
    out = []
    for f in sorted(os.listdir(trace_dir)):
        if f.startswith("openb_pod_list_") and f.endswith(".csv"):
            out.append(f[len("openb_pod_list_"):-4])
    return out
