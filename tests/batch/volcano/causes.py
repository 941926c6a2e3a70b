"""Why vcore's cycle disagrees with a Volcano v1.14 test case: a small set of named causes.

Each translated Volcano case that vcore gets wrong is marked ``xfail(strict=True)`` with the causes that apply, in
the order they bite (a configuration vcore refuses first). Each cause says how it shows (``raises``: ProfileError for
a refused configuration, TopologyError for a refused PodGroup, AssertionError for a different outcome), and the
xfail accepts only those exceptions: a difference no listed cause explains fails the test, and a case whose causes
are all fixed passes, which strict mode reports. A fix owner greps for the constant's name; docs/volcano-fidelity.md
lists, per cause, the Volcano code that defines the semantics, a minimal case and what vcore does instead.
"""
from __future__ import annotations

from dataclasses import dataclass

from vcore.errors import ProfileError, TopologyError


@dataclass(frozen=True)
class Cause:
    name: str
    summary: str  # the Volcano semantics vcore gets wrong, in one line
    raises: type[BaseException] = AssertionError  # how the difference shows in the test

    def __str__(self) -> str:
        return self.name


def _config(name: str, summary: str) -> Cause:
    return Cause(name, summary, ProfileError)


# -- configurations vcore refuses --------------------------------------------------------------------------------
SLA_PLUGIN_MISSING = _config(
    "SLA_PLUGIN_MISSING",
    "the sla plugin (sla-waiting-time argument, JobOrder/JobEnqueueable/JobPipelined) is refused as unknown")
TWO_SHARE_PLUGINS = _config(
    "TWO_SHARE_PLUGINS",
    "Volcano runs proportion and capacity in one session (each hook asked of both); vcore refuses two share plugins")
OVERCOMMIT_FACTOR_BELOW_ONE = _config(
    "OVERCOMMIT_FACTOR_BELOW_ONE",
    "overcommit-factor < 1 is a warning in Volcano (the default 1.2 is used); vcore refuses the configuration")
ACTION_ARGUMENTS_REFUSED = _config(
    "ACTION_ARGUMENTS_REFUSED",
    "configurations[].arguments of an action (preempt's enableTopologyAwarePreemption, allocate's "
    "predicateErrorCacheEnable) are refused")
TOPOLOGY_ARGUMENTS_NOT_DEFAULTED = _config(
    "TOPOLOGY_ARGUMENTS_NOT_DEFAULTED",
    "network-topology-aware arguments Volcano cannot use (negative weights, a non-bool enable, a weight for a "
    "resource not listed in hypernode.binpack.resources) fall back to the defaults; vcore refuses the configuration")
SWITCH_KEYS_REJECTED = _config(
    "SWITCH_KEYS_REJECTED",
    "a PluginOption switch Volcano's conf has (enablePreemptive, enabledVictim, enabledHyperNodeOrder, "
    "enabledHyperNodeGradient, enabledSubJob*, EnabledClusterOrder) is refused as an unknown plugin option")

# -- semantics vcore gets wrong ----------------------------------------------------------------------------------
SWITCHES_IGNORED = Cause(
    "SWITCHES_IGNORED",
    "tier switches set false (or left unset in a Go tier) still run the plugin's function: JobReady/JobPipelined/"
    "JobStarving/Allocatable/Overused/QueueOrder/JobOrder/Preemptable/Reclaimable/Predicate/NodeOrder")
ROLE_MINIMUMS_BELOW_TOTAL = Cause(
    "ROLE_MINIMUMS_BELOW_TOTAL",
    "when minMember < the sum of minTaskMember, Volcano checks no role minimum (JobInfo.CheckTaskValid/Ready/"
    "Pipelined/Starving return true); vcore holds every role to its minimum")
PREEMPTABLE_IGNORED = Cause(
    "PREEMPTABLE_IGNORED",
    "volcano.sh/preemptable=false (annotation, else label) keeps a pod from being a preempt or reclaim victim")
POD_PREEMPTION_POLICY_IGNORED = Cause(
    "POD_PREEMPTION_POLICY_IGNORED",
    "preemptionPolicy is per task: a pod's spec.preemptionPolicy: Never stops that task from preempting or "
    "reclaiming, and the PodGroup's priority class policy plays no part; vcore reads only the class, for the job")
PREEMPT_KEEPS_QUEUE_ALLOCATABLE = Cause(
    "PREEMPT_KEEPS_QUEUE_ALLOCATABLE",
    "preempt evicts lower-priority tasks of the queue until the queue can be allocated the preemptor "
    "(Allocatable: within capability/deserved) and the node's future idle holds it, even with room on the node")
BEST_EFFORT_PREEMPTS_BEST_EFFORT = Cause(
    "BEST_EFFORT_PREEMPTS_BEST_EFFORT",
    "a best-effort preemptor may evict best-effort pods (e.g. for the node's pod count)")
RECLAIM_LESS_PARTLY = Cause(
    "RECLAIM_LESS_PARTLY",
    "proportion's Reclaimable takes victims from any queue above its deserved; vcore still skips a queue that holds "
    "less than the reclaimer asks on some resource (the LessPartly condition Volcano removed, commit 975277f55)")
RELEASING_COUNTED_RUNNING = Cause(
    "RELEASING_COUNTED_RUNNING",
    "a pod with metadata.deletionTimestamp is a Releasing task: it does not make its gang ready (ReadyTaskNum), "
    "still counts as scheduled for the PodGroup phase, and frees its resources for pipelining; vcore reads it as "
    "running")
SUBGROUP_SOFT_REJECTED = Cause(
    "SUBGROUP_SOFT_REJECTED",
    "a subGroupPolicy networkTopology in mode soft is valid (v1.14 schedules it as hard, bounded by the job's tier "
    "or the cluster's top: Session.adjustNetworkTopologySpec); vcore refuses the PodGroup", TopologyError)
TOPOLOGY_DOMAIN_CHOICE = Cause(
    "TOPOLOGY_DOMAIN_CHOICE",
    "Volcano tries the gang in each HyperNode of the tier gradient with the real task-by-task allocation and keeps "
    "the one with the highest HyperNode binpack score ((used + request) / allocatable); vcore's domain search counts "
    "per node the pods of the job's largest role that fit (a domain that holds a mixed-role gang exactly looks too "
    "small) and prefers the tightest domain")
SUBGROUP_POLICY_MODEL = Cause(
    "SUBGROUP_POLICY_MODEL",
    "Volcano 1.14 splits a job's pods into SubJobs by their matchLabelKeys values (pods without the keys stay in "
    "the job's default SubJob), each SubJob needing subGroupSize pods and each policy minSubGroups SubJobs, placed "
    "one by one (running pods included); vcore refuses: pod counts that are not whole groups of subGroupSize, a "
    "labelled sub-group of several roles, label keys on more than the finest policy, running pods in a labelled "
    "sub-group")
TOPOLOGY_SCORE_TOP_TIER = Cause(
    "TOPOLOGY_SCORE_TOP_TIER",
    "Volcano's session adds a virtual cluster-top HyperNode one tier above the highest (addClusterTopHyperNode): "
    "the LCA-tier node score is (top - tier) / (top - lowest) and the normal-pod binpack score averages the top "
    "tier too; vcore's scores use the real tiers only")
TOPOLOGY_ALLOCATED_HYPERNODE = Cause(
    "TOPOLOGY_ALLOCATED_HYPERNODE",
    "a job's allocated HyperNode is its PodGroup's volcano.sh/job-allocated-hypernode annotation (the domain its "
    "placement chose, possibly wider than its pods); vcore derives it from where the running pods are")
SCORE_TRUNCATION = Cause(
    "SCORE_TRUNCATION",
    "Volcano's plugin node scores are float64 (468.75); vcore's HyperNode binpack score is truncated to an integer")
TOPOLOGY_TIER_ABOVE_TREE = Cause(
    "TOPOLOGY_TIER_ABOVE_TREE",
    "highestTierAllowed above the highest HyperNode tier is a virtual top tier: the whole cluster")
TOPOLOGY_UNKNOWN_TIER_NAME = Cause(
    "TOPOLOGY_UNKNOWN_TIER_NAME",
    "a highestTierName no HyperNode tier has leaves the job unconstrained (Volcano warns)")
BACKFILL_PER_TASK = Cause(
    "BACKFILL_PER_TASK",
    "backfill places every best-effort pending task of any admitted job, task by task in queue/job/task order; "
    "vcore only backfills jobs made entirely of best-effort pods")
