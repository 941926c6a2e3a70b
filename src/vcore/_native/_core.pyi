"""Type stub for the pybind11 module vcore._native._core (hand-written; keep in step with bindings/*.cpp).

The cluster as struct-of-arrays owned by C++ (ClusterState), pods compiled against one state (CompiledPod), the
fused filter/score kernels of one profile (Engine), the GPU device-level kernels (submodule ``gpu``) and the network
topology: HyperNode / label-level tree, node_topo, gang search (submodule ``topology``).

Conventions of the binding layer, reflected here:
- Parameters the bindings leave unnamed (pybind11 ``arg0``...) are positional-only (``/``).
- ``int`` parameters are C++ fixed-width integers: a value outside the range (int32 for slots, int64 for
  quantities, uint64 for seeds and masks) raises TypeError; ``bool`` and objects with ``__index__`` are accepted.
- Views are read-only numpy arrays that share memory with the state and keep its buffers alive; they go stale
  (not invalid) when ``generation`` changes.
- C++ errors surface as KeyError (not found), ValueError (invalid) or TypeError (wrong type in a spec dict).
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal, SupportsIndex, SupportsInt, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcore._native._convert import NodeSpec, PodSpec

# Names with a leading underscore exist only in this stub (types of the dicts and tuples the bindings take).

# What pybind11 accepts for a C++ integer parameter (its own generated signatures say the same).
_Int = SupportsInt | SupportsIndex
_Float = float | SupportsIndex

_FitStrategy = Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
_FilterPlugin = Literal["NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]
_ScorePlugin = Literal[
    "TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "binpack"
]

class _NativeFitArgs(TypedDict, total=False):
    ignored_resources: list[str]
    ignored_resource_groups: list[str]
    strategy: _FitStrategy  # default LeastAllocated
    resources: list[tuple[str, int]]  # (resource, weight); default [("cpu", 1), ("memory", 1)]
    shape: list[tuple[int, int]]  # (utilization 0..100, score 0..10); required by RequestedToCapacityRatio

class _NativeBalancedArgs(TypedDict, total=False):
    resources: list[tuple[str, int]]  # default [("cpu", 1), ("memory", 1)]

class _NativeBinpackArgs(TypedDict, total=False):
    weight: int  # Volcano's binpack.weight, default 1
    resources: list[tuple[str, int]]  # default [("cpu", 1), ("memory", 1)]

class _NativeProfileRequired(TypedDict):
    filters: list[_FilterPlugin]  # in order
    scores: list[tuple[_ScorePlugin, int]]  # (plugin, weight >= 1)

class _NativeProfile(_NativeProfileRequired, total=False):
    """vcore.profile.Profile.native(): what Engine consumes. Unknown plugin names raise ValueError."""

    fit: _NativeFitArgs
    balanced: _NativeBalancedArgs
    binpack: _NativeBinpackArgs
    percentage_of_nodes_to_score: int  # 0..100, 0 = kube-scheduler's adaptive default

class StaleError(RuntimeError):
    """Input computed against state that changed since (regexMatch results against other nodes or another pattern
    table); nothing was written: compute it again."""

class CompiledPod:
    """A pod compiled against one ClusterState (opaque).

    Made only by ClusterState.compile_pod / compile_pods (the class has no Python constructor: calling it raises
    TypeError). Using it with another state raises ValueError.
    """

    @property
    def key(self) -> str:
        """ "namespace/name"."""
    @property
    def priority(self) -> int: ...
    @property
    def never_preempts(self) -> bool:
        """spec.preemptionPolicy is Never."""
    @property
    def requests(self) -> list[tuple[int, int]]:
        """(resource axis, amount) pairs of the effective request"""

class DetachedPod:
    """A pod unbound by ClusterState.detach, to attach again (opaque; no Python constructor)."""

    @property
    def key(self) -> str: ...
    @property
    def node(self) -> int: ...

class ClusterState:
    """Nodes and bound pods as struct-of-arrays. Node slots are stable across removals (free list).

    Mutations take the state's exclusive lock while holding the GIL; every mutation validates first, so a failed
    call leaves the state unchanged.
    """

    def __init__(self) -> None: ...
    # -- nodes ---------------------------------------------------------------------------------------------
    def add_node(self, spec: NodeSpec, /) -> int:
        """Add a node; returns its slot (a freed slot is reused). Duplicate name / negative quantity /
        bad taint effect -> ValueError; missing "name" -> KeyError; wrong field types -> TypeError. With regexMatch
        HyperNodes the spec also carries "pattern_version" and "pattern_ids" (the ids of topology.patterns() its
        name matches); StaleError when they were computed against another pattern table."""
    def update_node(self, spec: NodeSpec, /) -> int:
        """Replace labels, taints, allocatable and the unschedulable flag; bound pods stay. Unknown -> KeyError.
        The regexMatch fields as for add_node."""
    def remove_node(self, name: str, evict: bool = False) -> list[str]:
        """Free the node's slot; returns the keys of the pods unbound with it. Bound pods and not evict ->
        ValueError; unknown name -> KeyError."""
    def node_index(self, name: str, /) -> int:
        """Slot of a live node, -1 if absent."""
    def node_name(self, slot: _Int, /) -> str:
        """Name of a live slot; a free or out-of-range slot -> KeyError."""
    def has_node(self, name: str, /) -> bool: ...
    def node_names(self) -> list[str]:
        """names by slot; an empty string marks a free slot"""
    def node_label_values(self, key: str) -> list[str | None]:
        """each slot's value of the node label ``key``: None where the node lacks it or the slot is free"""
    @property
    def n_nodes(self) -> int:
        """Live nodes."""
    @property
    def n_slots(self) -> int:
        """Slots ever allocated (live or free): the length of every per-node view."""
    # -- resources -----------------------------------------------------------------------------------------
    def resource_axis(self, name: str, /) -> int:
        """Axis of a resource, interning it (a new zero row; bumps generation). Empty name -> ValueError."""
    def find_resource_axis(self, name: str, /) -> int:
        """Axis of a resource, -1 if unknown (never interns)."""
    def resource_names(self) -> list[str]:
        """Axes in row order: cpu (milli), memory, ephemeral-storage, pods, then others by first appearance."""
    # -- pods ----------------------------------------------------------------------------------------------
    def compile_pod(self, spec: PodSpec, /) -> CompiledPod:
        """Validate and intern a pod spec (new request resources become axes)."""
    def compile_pods(self, specs: list[PodSpec], /) -> list[CompiledPod]:
        """compile_pod over a list; all specs are converted before any is compiled."""
    def bind(self, pod: CompiledPod, slot: _Int, gpus: Sequence[_Int] | None = None) -> None:
        """Account a pod on a live slot. Already bound or foreign pod -> ValueError; bad slot -> KeyError.
        A GPU pod takes the node-local GPU indices given (a conflict -> ValueError) or the fit rule's choice."""
    def pod_gpus(self, key: str, /) -> tuple[tuple[int, int], ...] | None:
        """((gpu, mig_start), ...) a bound pod holds (mig_start -1 outside MIG); None when not bound."""
    def gpu_devices(self) -> dict[str, Any]:
        """A copy of the GPU device table, CSR over node slots (dev_offsets[n_slots + 1], per-device arrays)."""
    def unbind(self, key: str, /) -> int:
        """Release a bound pod; returns its slot. Unknown key -> KeyError."""
    def detach(self, key: str, /) -> DetachedPod:
        """unbind a pod and keep its record (node, resources, devices) for attach. Unknown key -> KeyError."""
    def attach(self, pod: DetachedPod, /) -> None:
        """bind a detached pod again exactly as it was. Bound meanwhile -> ValueError; node gone -> KeyError."""
    def pod_node(self, key: str, /) -> int:
        """Slot of a bound pod, -1 if not bound."""
    def set_pdb(
        self, key: str, selector: Mapping[str, Any] | None, disruptions_allowed: int, disrupted: Sequence[str]
    ) -> None:
        """Add or replace a PodDisruptionBudget (selector as _convert.label_selector gives it; None covers no pod)."""
    def remove_pdb(self, key: str, /) -> bool:
        """Forget a PodDisruptionBudget; False when it was not there."""
    def set_pod_start_time(self, key: str, start_time: int | None) -> None:
        """A bound pod's status.startTime (Unix seconds; None: unknown). Unbound key -> KeyError."""
    def pdb_violating(self, keys: Sequence[str]) -> list[bool]:
        """Per bound pod, in order, whether evicting it together with the ones before it goes past a
        PodDisruptionBudget (kube-scheduler's filterPodsWithPDBViolation). Unbound key -> KeyError."""
    def pod_priority(self, key: str, /) -> int:
        """The priority of a bound pod; KeyError when not bound."""
    def set_namespace_labels(self, name: str, labels: Sequence[tuple[str, str]], exists: bool = True) -> None:
        """A namespace's labels, which pod affinity terms' namespaceSelector reads (bound pods recounted)."""
    def reserve_pods(self, n: int, /) -> None:
        """Make room for n bound pods (no rehash while a cycle binds up to that many)."""
    def bound_keys(self) -> set[str]:
        """The keys of every bound pod, as a set."""
    def first_bound(self, keys: Sequence[str], /) -> int:
        """Index of the first key that is bound, or -1."""
    def allocatable_total(self) -> NDArray[np.int64]:
        """Per resource axis, allocatable summed over the live nodes (a new array; never past 2**61)."""
    def requested_total(self) -> NDArray[np.int64]:
        """Per resource axis, the requests of the bound pods summed (a new array; never past 2**61)."""
    def pods_on(self, slot: _Int, /) -> list[str]:
        """Keys of the pods bound to a slot; an out-of-range slot -> IndexError."""
    @property
    def n_pods(self) -> int: ...
    # -- views and bookkeeping -----------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        """Bumped whenever storage is reallocated (new slots or resource rows): older views are stale."""
    @property
    def native_bytes(self) -> int:
        """Heap bytes of the per-node native state."""
    @property
    def allocatable(self) -> NDArray[np.int64]:
        """Read-only int64[n_resources, n_slots]; rows follow resource_names()."""
    @property
    def requested(self) -> NDArray[np.int64]:
        """Read-only int64[n_resources, n_slots]: sums of the bound pods' requests (the pods row counts pods)."""
    @property
    def nonzero_requested(self) -> NDArray[np.int64]:
        """Read-only int64[2, n_slots]: cpu milli and memory bytes with kube-scheduler's non-zero defaults."""
    @property
    def live_mask(self) -> NDArray[np.bool_]:
        """Read-only bool[n_slots]: False for a free slot."""

class Engine:
    """The fused filter/score kernels of one profile over one ClusterState (which it keeps alive).

    Kernels release the GIL; evaluate takes the state's shared lock, schedule the exclusive one (it binds).
    """

    def __init__(self, state: ClusterState, profile: _NativeProfile | dict[str, Any], seed: _Int = 0) -> None:
        """Bad profile values -> ValueError; score resources become axes of the state now."""
    def evaluate(self, pod: CompiledPod, /) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]]:
        """One pass over all slots: (feasible_mask bool[n_slots], scores int64[n_slots] (0 where infeasible),
        reason_counts int64[n_reasons])."""
    def schedule(
        self, pods: Sequence[CompiledPod], headroom: Sequence[_Int] | NDArray[np.int64] | None = None
    ) -> tuple[NDArray[np.int32], NDArray[np.int64], list[tuple[tuple[int, int], ...]], NDArray[np.bool_]]:
        """Place and bind pods in order with percentageOfNodesToScore sampling and a rotating start:
        (slot int32[n] (-1 = unschedulable), reason_counts int64[n, n_reasons] (zero rows for placed pods),
        per pod the ((gpu, mig_start), ...) it took, per pod whether the queue's ``headroom`` (per resource axis,
        as place_gang's) refused it untried). A pod already bound, a key twice in the batch or a foreign pod ->
        ValueError and nothing is bound."""
    def place_gang(
        self,
        tasks: list[CompiledPod] | tuple[CompiledPod, ...],
        role: Sequence[_Int] | None,
        role_need: Sequence[_Int],
        need: _Int,
        headroom: ArrayLike | None = None,
        allowed: ArrayLike | None = None,
        all_or_nothing: bool = True,
        cap: NDArray[np.int32] | None = None,
        score_bonus: NDArray[np.float64] | None = None,
    ) -> tuple[
        NDArray[np.int32],
        NDArray[np.uint8],
        list[tuple[tuple[int, int], ...]] | None,
        bool,
        int,
        NDArray[np.int64],
        int,
    ]:
        """Place a gang's tasks (bound on return), all or nothing up to its minimums (core/include/vcore/gang.h);
        ``role`` None: every task of role 0; ``cap`` int32[n_slots] bounds the gang's tasks per slot,
        ``score_bonus`` float64[n_slots] adds to each node's weighted score (its fraction ranks equal totals):
        (slot int32[n] (-1: not placed or undone), outcome uint8[n] (0 not tried, 1 placed, 2 no node fits,
        3 over the queue's headroom), per task its ((gpu, mig_start), ...) or None when no task took devices, ready,
        first task no node fit (-1), that task's reason_counts int64[n_reasons], node evaluations made).
        Malformed -> ValueError, nothing bound."""
    def preempt(
        self,
        pod: CompiledPod,
        offset: int,
        min_candidate_nodes_percentage: int,
        min_candidate_nodes_absolute: int,
        nominated: Sequence[tuple[CompiledPod, int]] = [],
    ) -> tuple[int, list[str], int, NDArray[np.int32], list[tuple[int, list[int]]], list[tuple[int, list[str], int]]]:
        """kube-scheduler's DefaultPreemption as a dry run: (node slot or -1, victim keys most important first,
        PodDisruptionBudget violations, per-slot status (a reason code, or -1 candidate, -2 no victims, -3 not
        helpful, -4 fits, -5 outside), [(slot, reason codes)] where the pod fails even with every lower-priority
        pod gone, every candidate kept as (slot, victim keys, violations): those without violations first).
        ``nominated``: pending pods with the slot of their nominated node; those of the pod's priority or higher
        count as there while it is filtered. Nothing is evicted."""
    def fit_counts(self, pod: CompiledPod, allowed: ArrayLike | None = None) -> NDArray[np.int32]:
        """Per slot, how many copies of the pod fit there now (0 where it does not fit)."""
    def fits_somewhere(self, pod: CompiledPod) -> bool:
        """Whether any node passes every filter for the pod now (evaluate's feasible set is not empty)."""
    def observe(self, pods: Sequence[CompiledPod], /) -> None:
        """Count pods toward GPUPlacement's learned target workload without placing them."""
    def gpu_target(self) -> dict[str, NDArray[Any]]:
        """GPUPlacement's target workload (cpu_milli, gpu_milli, num_gpu, model_mask, weight per spec)."""
    def set_scope(self, names: Sequence[str] | None, soft: bool = False, avoid: Sequence[str] = []) -> None:
        """Confine (hard) or steer (soft) decisions to the named nodes (soft: never the avoided ones); None clears."""
    @property
    def scope_size(self) -> int:
        """Live nodes in the scope (every live node without one)."""
    @property
    def n_reasons(self) -> int:
        """5 fixed reasons + one "Insufficient <resource>" per resource axis of the state (now)."""
    @property
    def pods_seen(self) -> int:
        """Pods offered to schedule() so far (feeds the seeded tie-break)."""

def node_plugins() -> list[str]:
    """The names of the node plugins compiled into the core, sorted."""

def reason_names(state: ClusterState, /) -> list[str]:
    """Reason strings by code for this state: the fixed codes, the node plugins', then 'Insufficient <resource>' per
    axis."""

# The volume store of a state (bindings/register_volumes.cpp; records built by vcore.volumes.objects).
_VolumeKind = Literal[
    "persistentvolume",
    "persistentvolumeclaim",
    "storageclass",
    "csinode",
    "csidriver",
    "csistoragecapacity",
    "volumeattachment",
]

class _VolumeAssumption(TypedDict):
    node: str
    bindings: list[tuple[str, str, str, str]]  # (PV, claim namespace, claim name, claim uid)
    provisions: list[str]  # claim keys (namespace/name)

def volumes_put(state: ClusterState, kind: _VolumeKind, spec: dict[str, Any], keep_assumed: bool = False) -> None:
    """Put a storage object (the dict vcore.volumes built), replacing one of its name."""

def volumes_remove(state: ClusterState, kind: _VolumeKind, name: str) -> None:
    """Remove a storage object by name (namespace/name for claims and capacities); a missing one is a no-op."""

def volume_assumption(state: ClusterState, key: str) -> _VolumeAssumption | None:
    """What VolumeBinding's Reserve assumed for a bound pod; None when nothing."""

def volume_assumed_pods(state: ClusterState) -> list[str]:
    """The bound pods VolumeBinding assumed volumes for, in key order."""

def volume_rejection(state: ClusterState, key: str, plugin: str) -> str:
    """The message a volume plugin noted when it last rejected the pod ("" when none)."""

def volume_pv_fits(state: ClusterState, pv: str, node: str) -> tuple[bool, str] | None:
    """Whether a PV's node affinity (translated where the node migrates its plugin) allows the node, with the
    translation's error; None when the PV or the node is unknown."""

def volume_claim_users(state: ClusterState, claim_key: str) -> int:
    """Bound pods with a persistentVolumeClaim volume of this claim."""

def volume_objects(state: ClusterState) -> int:
    """How many storage objects the state's volume store holds."""

_GpuPolicy = Literal[
    "first-fit",
    "best-fit",
    "random",
    "fgd",
    "dot-product",
    "gpu-packing",
    "gpu-clustering",
    "binpack",
    "spread",
    "vcore",
]
# (cpu_milli int64[k], gpu_milli int32[k], num_gpu int32[k], model_mask uint64[k], weight float64[k])
_TargetWorkload = tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike, ArrayLike]

class _ReplayResult(TypedDict):
    node_idx: NDArray[np.int32]  # per pod: chosen node, -1 = dropped
    dev_mask: NDArray[np.uint64]  # per pod: node-local GPU indices taken (bit i = GPU i)
    frag_after: NDArray[np.float64]  # per pod: cluster fragment sum_n F_n after the pod
    free_after: NDArray[np.int64]  # per pod: cluster free GPU milli after the pod

class gpu:
    """Submodule ``vcore._native._core.gpu`` (a module at runtime; a namespace here, as one .pyi cannot declare
    a submodule): GPU inventory (CSR), FGD fragmentation and the native trace replay.

    Array arguments are copied into C++ vectors (integer dtypes required; float only for target weights); wrong
    dtypes or shapes raise TypeError / ValueError.
    """

    class GpuInventory:
        """Per-node CPU/memory and per-GPU free milli, memory and model in CSR form."""

        def __init__(
            self,
            cpu_milli: ArrayLike,
            memory: ArrayLike,
            node_model: ArrayLike,
            dev_offsets: ArrayLike,
            dev_free_milli: ArrayLike,
            dev_memory_mib: ArrayLike | None = None,
        ) -> None: ...
        @property
        def n_nodes(self) -> int: ...
        @property
        def n_devices(self) -> int: ...
        @property
        def cpu_free(self) -> NDArray[np.int64]: ...
        @property
        def memory_free(self) -> NDArray[np.int64]: ...
        @property
        def node_model(self) -> NDArray[np.int32]: ...
        @property
        def dev_offsets(self) -> NDArray[np.int32]: ...
        @property
        def dev_free_milli(self) -> NDArray[np.int32]: ...

    @staticmethod
    def node_fragments(inventory: gpu.GpuInventory, target: _TargetWorkload) -> NDArray[np.float64]:
        """F_n of every node for the target workload (float64[n_nodes])."""
    @staticmethod
    def fgd_scores(
        inventory: gpu.GpuInventory,
        cpu_milli: _Int,
        memory: _Int,
        num_gpu: _Int,
        gpu_milli: _Int,
        model_mask: _Int,
        target: _TargetWorkload,
    ) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
        """FGD score of one pod on every node (int64, -1 = infeasible) and the chosen GPU bit masks (uint64)."""
    @staticmethod
    def replay(
        inventory: gpu.GpuInventory,
        cpu_milli: ArrayLike,
        memory: ArrayLike,
        num_gpu: ArrayLike,
        gpu_milli: ArrayLike,
        model_mask: ArrayLike,
        order: ArrayLike,
        target: _TargetWorkload,
        policy: _GpuPolicy,
        seed: _Int = 0,
        vcore_scale: _Float = 1000.0,
        vcore_pack_points: _Float = 1.0,
        vcore_balance_points: _Float = 10.0,
    ) -> _ReplayResult:
        """Replay pods once in order on a copy of the inventory; returns per-pod node_idx, dev_mask, frag_after,
        free_after. Unknown policy -> ValueError."""

# (type "Node" | "HyperNode", selector "exactMatch" | "regexMatch" | "labelMatch", name or pattern,
#  labelMatch requirements [(key, op In|NotIn|Exists|DoesNotExist, values)],
#  regexMatch: the slots of the live nodes whose names the pattern matches (RE2 search), [] otherwise)
_HyperNodeMember = tuple[str, str, str, list[tuple[str, str, list[str]]], list[int]]

class _HyperNodeSpecRequired(TypedDict):
    name: str
    tier: int
    members: list[_HyperNodeMember]

class _HyperNodeSpec(_HyperNodeSpecRequired, total=False):
    """vcore.topology.hypernode.hypernode_spec() with its regexMatch members' slots (vcore.topology.patterns)."""

    tier_name: str
    bandwidth_gbps: float  # -1: not annotated
    congestion: float  # 0..1; -1: not annotated

class _TopologyTiers(TypedDict):
    tiers: list[int]  # tier number per row, ascending
    tier_names: list[str]
    levels: list[str]  # label levels as configured (highest first); [] with HyperNodes
    generation: int

class _TopologyTree(_TopologyTiers):
    domain_names: list[str]  # by domain id; "" for a free id
    domain_row: NDArray[np.int32]  # -1 for a free id
    domain_parent: NDArray[np.int32]  # -1 at the top
    domain_bandwidth_gbps: NDArray[np.float64]
    domain_congestion: NDArray[np.float64]
    node_leaf: NDArray[np.int32]  # per node slot: its lowest domain, -1 none

class _GangResult(TypedDict):
    placed: bool
    domain: int  # enclosing domain id; -1 under the virtual root or when not placed
    domain_name: str
    row: int  # its row; n_rows for the virtual root; -1 when not placed
    counts: NDArray[np.int32]  # pods per node slot
    reason: str  # "", "TopologyUnsatisfiable" or "InsufficientCapacity"
    message: str
    best_capacity: int

class topology:
    """Submodule ``vcore._native._core.topology`` (a namespace here, as for ``gpu``): the network topology of a
    ClusterState (HyperNodes or label levels), its node_topo view, the gang search and Volcano's node score.

    Tree mutations raise ValueError (invalid tree, naming the HyperNode) or KeyError (unknown HyperNode) and change
    nothing. Arrays must have the stated dtype and one entry per node slot (TypeError / ValueError otherwise).
    """

    # membership: the ClusterState membership (node_names) the regexMatch slots were matched at, None when no member
    # is a regexMatch; StaleError when the nodes changed since.
    @staticmethod
    def set_hypernodes(state: ClusterState, specs: list[_HyperNodeSpec], membership: _Int | None = None) -> None:
        """replace every HyperNode (validated as a whole)"""
    @staticmethod
    def add_hypernode(state: ClusterState, spec: _HyperNodeSpec, membership: _Int | None = None) -> None: ...
    @staticmethod
    def update_hypernode(state: ClusterState, spec: _HyperNodeSpec, membership: _Int | None = None) -> None: ...
    @staticmethod
    def node_names(state: ClusterState) -> tuple[int, list[str]]:
        """(membership, names by slot): what regexMatch members are matched against, read at once"""
    @staticmethod
    def patterns(state: ClusterState) -> tuple[int, list[str]]:
        """(version, patterns): the HyperNodes' distinct regexMatch patterns; a pattern's id is its index"""
    @staticmethod
    def remove_hypernode(state: ClusterState, name: str) -> None: ...
    @staticmethod
    def set_levels(state: ClusterState, keys: Sequence[str]) -> None:
        """label keys from the highest level to the lowest; [] clears them"""
    @staticmethod
    def node_topo(state: ClusterState) -> NDArray[np.int32]:
        """read-only int32[rows, n_slots]: the domain of each node slot per tier row, -1 none"""
    @staticmethod
    def tiers(state: ClusterState) -> _TopologyTiers:
        """the tier rows and the topology generation, without the domains"""
    @staticmethod
    def tree(state: ClusterState) -> _TopologyTree:
        """a copy of the domain tree (free domain ids have row -1 and an empty name)"""
    @staticmethod
    def place_gang(
        state: ClusterState,
        fit: NDArray[np.int32],
        n_pods: _Int,
        start_row: _Int,
        limit_row: _Int,
        hard: bool,
        layers: Sequence[tuple[_Int, _Int]],
        running: NDArray[np.int32] | None,
        bandwidth_weight: _Float,
        congestion_weight: _Float,
        tie_slack: _Int,
    ) -> _GangResult:
        """the gang search: fit int32[n_slots] (pods that fit per slot), layers [(size, max_row)] finest first,
        running int32[n_slots] or None"""
    @staticmethod
    def node_scores(
        state: ClusterState,
        job_pods: NDArray[np.int32],
        job_tasks: _Int,
        weight: _Float,
        candidates: NDArray[np.bool_] | None,
    ) -> NDArray[np.float64]:
        """Volcano's network-topology-aware node score; job_pods int32[n_slots], candidates bool[n_slots] or None"""
    @staticmethod
    def binpack_scores(
        state: ClusterState, resources: Sequence[tuple[_Int, _Int, _Int]], fading: _Float, weight: _Float
    ) -> NDArray[np.float64]:
        """Volcano's HyperNode binpack node score of a pod without a network topology: resources [(axis, request,
        weight)], float64[n_slots] in 0..100 * weight"""

_PolicyKind = Literal["scored", "random", "round-robin", "dynamo"]
_Role = Literal["both", "prefill", "decode"]
# (unhealthy, role, lora, waiting): endpoints filtered out per reason
_FilterCounts = tuple[int, int, int, int]

class routing:
    """Submodule ``vcore._native._core.routing``: LLM request routing (endpoints as arrays, the prefix index,
    scorers and policies, request bookkeeping). Hash arrays are copied (integer dtypes only); the router's
    methods take its mutex with the GIL released.
    """

    @staticmethod
    def hash_blocks(text: str, block_bytes: _Int, max_blocks: _Int = 0, salt: str = "") -> NDArray[np.uint64]:
        """Chained 64-bit hashes of the UTF-8 text in blocks of block_bytes (uint64[n_blocks])."""

    class Policy:
        """A routing policy: kind, filters, scorer weights and their arguments (validated: ValueError)."""

        def __init__(
            self,
            kind: _PolicyKind = "scored",
            max_waiting: _Int = 0,
            w_prefix: _Float = 0.0,
            w_least_request: _Float = 0.0,
            w_kv_cache: _Float = 0.0,
            w_latency: _Float = 0.0,
            w_lora: _Float = 0.0,
            w_prefill_cost: _Float = 0.0,
            prefix_max_blocks: _Int = 0,
            prefix_top_k: _Int = 0,
            latency_ttft_factor: _Float = 0.5,
            queue_weight: _Float = 100.0,
            overlap_weight: _Float = 1.0,
            top_n: _Int = 5,
            session_affinity: bool = True,
            pd_min_prompt_tokens: _Int = 0,
        ) -> None: ...
        @property
        def kind(self) -> _PolicyKind: ...
        @property
        def max_waiting(self) -> int: ...
        @property
        def w_prefix(self) -> float: ...
        @property
        def w_least_request(self) -> float: ...
        @property
        def w_kv_cache(self) -> float: ...
        @property
        def w_latency(self) -> float: ...
        @property
        def w_lora(self) -> float: ...
        @property
        def w_prefill_cost(self) -> float: ...
        @property
        def prefix_max_blocks(self) -> int: ...
        @property
        def prefix_top_k(self) -> int: ...
        @property
        def latency_ttft_factor(self) -> float: ...
        @property
        def queue_weight(self) -> float: ...
        @property
        def overlap_weight(self) -> float: ...
        @property
        def top_n(self) -> int: ...
        @property
        def session_affinity(self) -> bool: ...
        @property
        def pd_min_prompt_tokens(self) -> int: ...

    class Router:
        """Endpoints, prefix index and request bookkeeping of one router."""

        def __init__(self, block_tokens: _Int = 16, prefix_capacity_blocks: _Int = 50000, seed: _Int = 0) -> None: ...
        @property
        def block_tokens(self) -> int: ...
        @property
        def prefix_capacity_blocks(self) -> int: ...
        @property
        def n_slots(self) -> int: ...
        @property
        def n_live(self) -> int: ...
        @property
        def n_in_flight(self) -> int: ...
        @property
        def decisions(self) -> int: ...
        def add_endpoint(
            self,
            name: str,
            role: _Role = "both",
            pd_group: _Int = -1,
            domain: _Int = -1,
            max_loras: _Int = 0,
            prefill_tokens_per_s: _Float = 1.0,
            prefill_overhead_s: _Float = 0.0,
            prefill_attention_s_per_token_pair: _Float = 0.0,
        ) -> int: ...
        def remove_endpoint(self, slot: _Int) -> None: ...
        def slot_of(self, name: str) -> int: ...
        def names(self) -> list[str]:
            """Endpoint name per slot ('' for a free slot)."""
        def set_health(self, slot: _Int, healthy: bool) -> None: ...
        def set_loras(self, slot: _Int, names: Sequence[str]) -> None: ...
        def lora_id(self, name: str) -> int: ...
        def update_metrics(
            self,
            slots: ArrayLike,
            waiting: ArrayLike,
            running: ArrayLike,
            kv_usage: ArrayLike,
            ttft_us: ArrayLike,
            itl_us: ArrayLike,
        ) -> None:
            """Engine-reported metrics of several endpoints at once (all validated first)."""
        def route(
            self,
            policy: routing.Policy,
            hashes: ArrayLike,
            prompt_tokens: _Int,
            lora: _Int = -1,
            session_slot: _Int = -1,
            candidates: ArrayLike | None = None,
            now_s: _Float = 0.0,
        ) -> tuple[list[int], list[int], list[float], int, _FilterCounts, bool]:
            """(slots, matched_blocks, scores, n_candidates, (unhealthy, role, lora, waiting), waiting_relaxed)"""
        def route_pd(
            self,
            policy: routing.Policy,
            hashes: ArrayLike,
            prompt_tokens: _Int,
            lora: _Int = -1,
            session_slot: _Int = -1,
            candidates: ArrayLike | None = None,
            now_s: _Float = 0.0,
        ) -> tuple[list[int], list[int], list[int], int, _FilterCounts]:
            """(decode_slots, prefill_slots (-1 = no prefill leg), prefill_matched_blocks, n_candidates, counts)"""
        def match(self, hashes: ArrayLike, candidates: ArrayLike | None = None) -> NDArray[np.int32]:
            """Leading blocks of `hashes` each candidate holds (int32, candidate order; all live slots by default)."""
        def dispatch(
            self,
            request_id: _Int,
            slot: _Int,
            hashes: ArrayLike,
            prompt_tokens: _Int,
            matched_blocks: _Int,
            output_tokens: _Int = 0,
            record_prefix: bool = True,
            now_s: _Float = 0.0,
        ) -> None: ...
        def first_token(self, request_id: _Int, now_s: _Float = 0.0) -> None: ...
        def finish(self, request_id: _Int, now_s: _Float = 0.0) -> None: ...
        def record_blocks(self, slot: _Int, hashes: ArrayLike) -> None:
            """KV event: the endpoint stored these blocks."""
        def remove_blocks(self, slot: _Int, hashes: ArrayLike) -> None:
            """KV event: the endpoint evicted these blocks."""
        def clear_blocks(self, slot: _Int) -> None:
            """KV event: the endpoint dropped its whole cache."""
        def endpoint_blocks(self, slot: _Int) -> NDArray[np.uint64]:
            """The endpoint's recorded block hashes, most recently used first."""
        def state(self) -> dict[str, NDArray[Any]]:
            """Copies of the per-slot arrays (a snapshot; free slots included, see 'live')."""
