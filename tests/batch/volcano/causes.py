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
# None today: every translated case vcore can run passes (the skips say why the others cannot run). A difference
# found later gets its Cause here, named on the cases it explains.
