"""Loaders for openb-format GPU traces (Alibaba cluster-trace-gpu-v2023, the FGD paper's trace).

Node lists have the columns ``sn,cpu_milli,memory_mib,gpu,model``. Pod lists come in two formats: the 11-column
``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``
and the 5-column ``name,cpu_milli,memory_mib,num_gpu,gpu_milli``. A header row is optional; without one the
format is told by the column count. Every value is validated (with :mod:`vcore.validation`): a bad row raises
``ValueError`` naming the file, line, object (``pod <name>`` / ``node <sn>``) and field, as
``<file>:<line>: pod '<name>': <field>: <problem>``.

The loaders return column arrays (numpy) so that the replay can hand them to the native core in one call.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from vcore.validation import Integer, Number, fail

__all__ = [
    "NodeList",
    "PodList",
    "load_nodes",
    "load_pods",
    "workload_path",
    "node_list_path",
    "list_workloads",
    "MAX_GPUS_PER_NODE",
    "csv_int",
    "csv_number",
]

MAX_GPUS_PER_NODE = 64
_NODE_COLUMNS = ["sn", "cpu_milli", "memory_mib", "gpu", "model"]
_POD_COLUMNS_11 = [
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
]
_POD_COLUMNS_5 = _POD_COLUMNS_11[:5]
_AMOUNT = Integer(0)
_GPUS = Integer(0, MAX_GPUS_PER_NODE)
_GPU_MILLI = Integer(0, 1000)


@dataclass
class NodeList:
    """Nodes of a trace, one entry per node, in file order."""

    names: list[str]
    cpu_milli: np.ndarray  # int64
    memory_mib: np.ndarray  # int64
    gpu_count: np.ndarray  # int32
    model: list[str]  # "" when the node has no GPU
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
    cpu_milli: np.ndarray  # int64
    memory_mib: np.ndarray  # int64
    num_gpu: np.ndarray  # int32
    gpu_milli: np.ndarray  # int32, per GPU (1000 = whole)
    gpu_spec: list[tuple[str, ...]] = field(default_factory=list)
    source: str = ""

    @property
    def n_pods(self) -> int:
        return len(self.names)

    @property
    def gpu_demand_milli(self) -> np.ndarray:
        """Total GPU milli each pod asks for (num_gpu x gpu_milli), int64."""
        return self.num_gpu.astype(np.int64) * self.gpu_milli.astype(np.int64)

    def take(self, idx: np.ndarray) -> PodList:
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


def _rows(path: str, formats: list[list[str]], kind: str) -> Iterator[tuple[int, list[str], list[str]]]:
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
                        raise fail(
                            ValueError, f"{path}:{lineno}", f"{kind} list header {','.join(row)!r} is not {expected}"
                        )
                    continue
                for fmt in formats:
                    if len(row) == len(fmt):
                        header = fmt
                        break
                else:
                    counts = " or ".join(str(len(f)) for f in formats)
                    raise fail(
                        ValueError, f"{path}:{lineno}", f"{kind} list row has {len(row)} columns, expected {counts}"
                    )
            if len(row) != len(header):
                raise fail(
                    ValueError,
                    f"{path}:{lineno}: {kind} {row[0]!r}",
                    f"row has {len(row)} columns, expected {len(header)}",
                )
            yield lineno, header, row


def csv_int(cell: str, path: str, constraint: Integer) -> int:
    """A CSV cell holding an integer (``"5"``, or ``"5.0"`` as some exports write it), checked by ``constraint``;
    ValueError ``"<path>: <problem>"`` otherwise."""
    try:
        value = int(cell)
    except ValueError:
        try:
            number = float(cell)
        except ValueError:
            number = math.nan
        if not number.is_integer():
            raise fail(ValueError, path, f"must be an integer, got {cell!r}") from None
        value = int(number)
    return constraint(value, path, ValueError)


def csv_number(cell: str, path: str, constraint: Number) -> float:
    """A CSV cell holding a finite number, checked by ``constraint``; ValueError ``"<path>: <problem>"`` otherwise."""
    try:
        value = float(cell)
    except ValueError:
        raise fail(ValueError, path, f"must be a number, got {cell!r}") from None
    return constraint(value, path, ValueError)


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
            raise fail(ValueError, f"{path}:{lineno}: node: sn", "empty node name")
        if sn in seen:
            raise fail(ValueError, f"{where}: sn", "duplicate node name")
        seen.add(sn)
        names.append(sn)
        cpu.append(csv_int(row[1], f"{where}: cpu_milli", _AMOUNT))
        mem.append(csv_int(row[2], f"{where}: memory_mib", _AMOUNT))
        g = csv_int(row[3], f"{where}: gpu", _GPUS)
        gpus.append(g)
        model = row[4]
        if g > 0 and not model:
            raise fail(ValueError, f"{where}: model", "a node with GPUs needs a GPU model")
        if "|" in model:
            raise fail(ValueError, f"{where}: model", f"one model per node, got {model!r}")
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
            raise fail(ValueError, f"{path}:{lineno}: pod: name", "empty pod name")
        c = csv_int(row[1], f"{where}: cpu_milli", _AMOUNT)
        m = csv_int(row[2], f"{where}: memory_mib", _AMOUNT)
        n = csv_int(row[3], f"{where}: num_gpu", _GPUS)
        g = csv_int(row[4], f"{where}: gpu_milli", _GPU_MILLI)
        at_milli = f"{where}: gpu_milli"
        if n == 0 and g != 0:
            raise fail(ValueError, at_milli, f"{g} GPU milli requested with num_gpu 0")
        if n > 0 and g == 0:
            raise fail(ValueError, at_milli, f"num_gpu {n} requested with gpu_milli 0")
        if n > 1 and g != 1000:
            raise fail(ValueError, at_milli, f"a pod with num_gpu {n} > 1 takes whole GPUs, got gpu_milli {g}")
        models: tuple[str, ...] = ()
        if len(hdr) == 11 and row[5]:
            models = tuple(sorted({s.strip() for s in row[5].split("|") if s.strip()}))
            if not models:
                raise fail(ValueError, f"{where}: gpu_spec", f"no model in {row[5]!r}")
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
    """Path of a workload: a file path, ``<dir>/<name>``, ``<dir>/<name>.csv`` or
    ``<dir>/openb_pod_list_<name>.csv``."""
    candidates = [
        workload,
        os.path.join(trace_dir, workload),
        os.path.join(trace_dir, workload + ".csv"),
        os.path.join(trace_dir, f"openb_pod_list_{workload}.csv"),
    ]
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
            out.append(f[len("openb_pod_list_") : -4])
    return out
