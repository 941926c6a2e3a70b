"""Why vcore's cycle disagrees with a Volcano v1.14 test case: a small set of named causes.

Each translated Volcano case that vcore gets wrong is marked ``xfail(strict=True)`` with the causes that apply, in
the order they bite (a configuration vcore refuses first). Each cause says how it shows (``raises``: ProfileError for
a refused configuration, TopologyError for a refused PodGroup, AssertionError for a different outcome), and the
xfail accepts only those exceptions: a difference no listed cause explains fails the test, and a case whose causes
are all fixed passes, which strict mode reports. A fix owner greps for the constant's name, and removes it once no
case names it (``python -m tests.batch.volcano.fidelity_table`` lists those); docs/volcano-fidelity.md lists, per
cause, the Volcano code that defines the semantics, a minimal case and what vcore does instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    name: str
    summary: str  # the Volcano semantics vcore gets wrong, in one line
    raises: type[BaseException] = AssertionError  # how the difference shows in the test

    def __str__(self) -> str:
        return self.name


# -- semantics vcore gets wrong ----------------------------------------------------------------------------------
SUBGROUP_POLICY_MODEL = Cause(
    "SUBGROUP_POLICY_MODEL",
    "Volcano 1.14 splits a job's pods into SubJobs by their matchLabelKeys values (pods without the keys stay in "
    "the job's default SubJob), each SubJob needing subGroupSize pods and each policy minSubGroups SubJobs, placed "
    "one by one (running pods included); vcore refuses: pod counts that are not whole groups of subGroupSize, a "
    "labelled sub-group of several roles, label keys on more than the finest policy, running pods in a labelled "
    "sub-group",
)
