"""MIG (Multi-Instance GPU) geometry of the A100-40GB, A100-80GB and H100-80GB, and the placement check.

A MIG-capable GPU is cut into 7 compute slices and 8 memory slices. NVIDIA's driver only creates a GPU instance
at the start positions it lists for that profile (``nvidia-smi mig -lgipp``, the "placements" of the MIG user
guide), e.g. on an A100-40GB::

    profile    compute  memory  starts          (memory-slice units; ":size" in nvidia-smi is the memory size)
    1g.5gb     1        1       0,1,2,3,4,5,6
    1g.10gb    1        2       0,2,4,6
    2g.10gb    2        2       0,2,4
    3g.20gb    3        4       0,4
    4g.20gb    4        4       0
    7g.40gb    7        8       0

An instance starting at ``s`` occupies compute slices ``[s, s + compute)`` and memory slices ``[s, s + memory)``;
a set of instances is valid when each sits at one of its profile's starts and no two share a compute or a
memory slice. (That is why 3g.20gb + 3g.20gb leaves compute slice 3 idle, and why a 1g.5gb at 3 blocks a 3g at 0.)
The A100-80GB and H100-80GB have the same layout with twice the memory per slice (1g.10gb ... 7g.80gb, and
1g.20gb as the 2-memory-slice 1g profile). The ``+me`` media-extension profiles are not modelled: they add a
per-GPU count limit (one instance) that is not a placement rule, and Kubernetes resource names cannot carry ``+``.

This module is the reference the native MIG kernel is tested against; it is pure data plus bit arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "COMPUTE_SLICES",
    "MEMORY_SLICES",
    "MIG_MODELS",
    "MigProfile",
    "MigInstance",
    "profiles_for",
    "profile",
    "all_profile_names",
    "mig_model",
    "full_memory_mib",
    "occupied",
    "validate_layout",
    "can_place",
    "free_starts",
]

COMPUTE_SLICES = 7
MEMORY_SLICES = 8


@dataclass(frozen=True)
class MigProfile:
    """One GPU-instance profile of one GPU model: its slice sizes and the starts the driver allows."""

    name: str  # "1g.10gb", the part after "nvidia.com/mig-"
    compute_slices: int
    memory_slices: int
    starts: tuple[int, ...]  # allowed start slots, ascending
    memory_mib: int  # nominal memory of one instance: the GB figure of the name x 1024

    def masks(self, start: int) -> tuple[int, int]:
        """(compute bitmask, memory bitmask) of an instance of this profile at ``start``."""
        return (((1 << self.compute_slices) - 1) << start, ((1 << self.memory_slices) - 1) << start)


@dataclass(frozen=True)
class MigInstance:
    """A GPU instance that exists (or is in use) on one GPU: profile name and start slot."""

    profile: str
    start: int


def _geometry(mem_per_slice_gb: int, names: dict[str, str]) -> dict[str, MigProfile]:
    # The layout is identical on the three models; only the memory per slice (and so the names) differs.
    # mem_per_slice_gb is 5 (A100-40GB) or 10 (80GB parts). The driver's exact figure is a little lower
    # (a 1g.5gb has 4864 MiB usable); the nominal value is enough, as MIG fit is decided by slices, not MiB.
    shapes = {  # key: (compute, memory, starts)
        "1c1m": (1, 1, (0, 1, 2, 3, 4, 5, 6)),
        "1c2m": (1, 2, (0, 2, 4, 6)),
        "2c2m": (2, 2, (0, 2, 4)),
        "3c4m": (3, 4, (0, 4)),
        "4c4m": (4, 4, (0,)),
        "7c8m": (7, 8, (0,)),
    }
    out = {}
    for shape, name in names.items():
        c, m, starts = shapes[shape]
        out[name] = MigProfile(name, c, m, starts, m * mem_per_slice_gb * 1024)
    return out


_A100_40 = _geometry(
    5, {"1c1m": "1g.5gb", "1c2m": "1g.10gb", "2c2m": "2g.10gb", "3c4m": "3g.20gb", "4c4m": "4g.20gb", "7c8m": "7g.40gb"}
)
_X_80 = {
    "1c1m": "1g.10gb",
    "1c2m": "1g.20gb",
    "2c2m": "2g.20gb",
    "3c4m": "3g.40gb",
    "4c4m": "4g.40gb",
    "7c8m": "7g.80gb",
}

# Geometry name -> profiles. Keys are the canonical model names used across vcore.gpu.
MIG_MODELS: dict[str, dict[str, MigProfile]] = {
    "A100-40GB": _A100_40,
    "A100-80GB": _geometry(10, _X_80),
    "H100-80GB": _geometry(10, _X_80),
}

_ALL_PROFILE_NAMES = frozenset(name for profiles in MIG_MODELS.values() for name in profiles)

# Memory of the whole GPU as nvidia-smi / GFD's nvidia.com/gpu.memory report it, for the single strategy where
# GFD overwrites nvidia.com/gpu.memory with the memory of one MIG device.
_FULL_MEMORY_MIB = {"A100-40GB": 40960, "A100-80GB": 81920, "H100-80GB": 81559}


def all_profile_names() -> frozenset[str]:
    """Every profile name of every supported model (a request is validated against this set)."""
    return _ALL_PROFILE_NAMES


def mig_model(product: str, memory_mib: int = 0) -> str | None:
    """The MIG geometry of a GPU product label (``NVIDIA-A100-SXM4-80GB``, ``NVIDIA-H100-80GB-HBM3``), or None.

    The memory size comes from a ``40GB``/``80GB`` token of the product when it has one, else from
    ``memory_mib`` (GFD's nvidia.com/gpu.memory). H100 parts with 94/96 GB (NVL, H100 96GB) have other
    profile names and are not MIG-modelled here, so they yield None rather than a wrong geometry.
    """
    tokens = {t.upper() for t in product.replace("_", "-").split("-") if t}
    size = None
    for t in tokens:
        if t in ("40GB", "80GB"):
            size = t
        elif t in ("94GB", "96GB", "NVL"):
            return None
    if size is None and memory_mib > 0:
        # GFD reports 40960 / 81920 (A100) and 81559 (H100 HBM3): anything from 70 GiB up is the 80GB part.
        if 38000 <= memory_mib <= 42000:
            size = "40GB"
        elif 78000 <= memory_mib <= 84000:
            size = "80GB"
    if "A100" in tokens:
        return f"A100-{size}" if size else None
    if "H100" in tokens:
        # Every H100 with MIG and no size marker that we model is the 80GB SXM/PCIe part.
        return "H100-80GB" if size in (None, "80GB") else None
    return None


def full_memory_mib(model: str) -> int:
    """Whole-GPU memory (MiB) of a MIG geometry name."""
    return _FULL_MEMORY_MIB[model]


def profiles_for(model: str) -> dict[str, MigProfile]:
    """The profiles of a MIG geometry (``"A100-40GB"``, ``"A100-80GB"``, ``"H100-80GB"``) or a product label.

    Raises ValueError for a model with no modelled MIG geometry.
    """
    geometry = model if model in MIG_MODELS else mig_model(model)
    if geometry is None:
        raise ValueError(f"gpu model {model!r}: no MIG geometry (supported: {', '.join(MIG_MODELS)})")
    return MIG_MODELS[geometry]


def profile(model: str, name: str) -> MigProfile:
    """One profile of a model; ValueError naming the model and listing its profiles when unknown."""
    profiles = profiles_for(model)
    try:
        return profiles[name]
    except KeyError:
        raise ValueError(f"gpu model {model!r}: unknown MIG profile {name!r} (known: {', '.join(profiles)})") from None


def _as_instance(x: MigInstance | tuple[str, int]) -> MigInstance:
    if isinstance(x, MigInstance):
        return x
    if isinstance(x, tuple) and len(x) == 2:
        return MigInstance(x[0], x[1])
    raise TypeError(f"MIG instance: expected MigInstance or (profile, start), got {type(x).__name__}")


def occupied(model: str, instances: Iterable[MigInstance | tuple[str, int]]) -> tuple[int, int]:
    """(compute bitmask, memory bitmask) taken by a valid set of instances; ValueError when it is not valid.

    Each instance must sit at an allowed start of its profile and overlap no other instance, in compute or in
    memory slices; the error names the offending instance by its position.
    """
    profiles = profiles_for(model)
    compute = memory = 0
    for i, raw in enumerate(instances):
        inst = _as_instance(raw)
        p = profiles.get(inst.profile)
        if p is None:
            raise ValueError(
                f"MIG instance [{i}] on {model}: unknown profile {inst.profile!r} (known: {', '.join(profiles)})"
            )
        if type(inst.start) is not int or inst.start not in p.starts:
            raise ValueError(
                f"MIG instance [{i}] on {model}: {p.name} cannot start at {inst.start!r} "
                f"(allowed starts: {', '.join(map(str, p.starts))})"
            )
        c, m = p.masks(inst.start)
        if c & compute or m & memory:
            raise ValueError(f"MIG instance [{i}] on {model}: {p.name} at {inst.start} overlaps another instance")
        compute |= c
        memory |= m
    return compute, memory


def validate_layout(model: str, instances: Iterable[MigInstance | tuple[str, int]]) -> None:
    """Raise ValueError unless the instances form a layout the driver could create."""
    occupied(model, instances)


def free_starts(model: str, existing: Iterable[MigInstance | tuple[str, int]], name: str) -> tuple[int, ...]:
    """Every start at which an instance of profile ``name`` could be added to ``existing``, ascending."""
    p = profile(model, name)
    compute, memory = occupied(model, existing)
    out = []
    for s in p.starts:
        c, m = p.masks(s)
        if not (c & compute or m & memory):
            out.append(s)
    return tuple(out)


def can_place(model: str, existing: Iterable[MigInstance | tuple[str, int]], name: str) -> int | None:
    """Lowest start at which profile ``name`` fits beside ``existing`` on a GPU of ``model``, or None.

    ``existing`` must itself be a valid layout (ValueError otherwise); an unknown model or profile is a
    ValueError too, so that a typo never reads as "does not fit".
    """
    starts = free_starts(model, existing, name)
    return starts[0] if starts else None
