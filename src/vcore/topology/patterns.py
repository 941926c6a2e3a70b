"""HyperNode ``regexMatch`` patterns: checked and compiled with RE2, and matched against node names for the native tree.

Volcano matches a member's pattern against node names with Go's ``regexp.MatchString``: RE2 syntax, an unanchored
search, time linear in the name. vcore does the same with RE2 (the ``google-re2`` binding). Whether a node matches is
a function of (pattern, node name) only, and node names never change, so the native tree never evaluates a pattern:
it is handed the results.

- A HyperNode written (added, updated, or all of them set) carries, per regexMatch member, the slots of the live
  nodes whose names the pattern matches (:func:`with_slots`), computed at a node membership the native side checks.
- A node written carries the ids of the patterns in use that its name matches (:class:`NodePatterns`), computed
  against a version of the native pattern table the native side checks.

Either check failing raises ``_core.StaleError`` (another writer changed the nodes or the HyperNodes in between;
nothing was written) and the result is computed again, so a node can never miss a HyperNode that selects it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import re2

from vcore._native import _core
from vcore.validation import Constraint, ErrorType, String, fail

if TYPE_CHECKING:
    from vcore._native._convert import NodeSpec

__all__ = ["RE2_PATTERN", "NodePatterns", "PatternSet", "Re2Pattern", "compile_pattern", "retry_stale", "with_slots"]

T = TypeVar("T")

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is reported as a TopologyError, not also on stderr
# A StaleError means another thread wrote in between; far fewer retries than this always succeed.
_MAX_ATTEMPTS = 64


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Any:
    """The pattern compiled with RE2 (cached); ``re2.error`` when RE2 does not accept it."""
    return re2.compile(pattern, _OPTIONS)


class Re2Pattern(Constraint[str]):
    """A non-empty regular expression that RE2 (Go's regexp syntax) accepts. Backreferences and lookaround, which
    cannot be matched in linear time, are refused as Go refuses them."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> str:
        pattern = String(nonempty=True)(value, path, error)
        try:
            compile_pattern(pattern)
        except re2.error as e:
            reason = e.args[0].decode(errors="replace") if e.args and isinstance(e.args[0], bytes) else str(e)
            raise fail(
                error, path, f"{pattern!r} is not a valid RE2 regular expression (Go's regexp syntax): {reason}"
            ) from None
        return pattern


RE2_PATTERN = Re2Pattern()


class PatternSet:
    """Distinct patterns (already checked) matched together: ``ids(name)`` is the sorted indexes of the patterns that
    occur in ``name`` (an unanchored search, as Go's ``MatchString``). One RE2 set answers for every pattern in one
    linear pass over the name, where searching pattern by pattern costs a microsecond each in the binding."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._compiled = [compile_pattern(p) for p in self.patterns]
        self._set: Any = None
        self._catch_all = -1
        if self.patterns:
            candidate = re2.Set.SearchSet(_OPTIONS)
            try:
                for p in self.patterns:
                    candidate.Add(p)
                # A pattern matching every name: a successful match is never empty, so an empty answer can only be
                # RE2 running out of memory for its automaton, and then each pattern is searched on its own.
                self._catch_all = candidate.Add("")
                candidate.Compile()
                self._set = candidate
            except re2.error:  # too large for one automaton: search each pattern
                self._set = None

    def ids(self, name: str) -> list[int]:
        if not self.patterns:
            return []
        found = self._set.Match(name) if self._set is not None else None
        if not found:
            return [i for i, c in enumerate(self._compiled) if c.search(name) is not None]
        return sorted(i for i in found if i != self._catch_all)


@functools.lru_cache(maxsize=64)
def _pattern_set(patterns: tuple[str, ...]) -> PatternSet:
    return PatternSet(patterns)


def retry_stale(call: Callable[[], T]) -> T:
    """``call()``, again while it raises StaleError (each attempt recomputes its input from the current state)."""
    for _ in range(_MAX_ATTEMPTS - 1):
        try:
            return call()
        except _core.StaleError:
            continue
    return call()


def with_slots(state: _core.ClusterState, specs: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], int | None]:
    """The native specs of shape-checked HyperNode specs: every member with the slots it matches (the live nodes
    whose names a regexMatch pattern occurs in; empty for the other selectors), and the node membership they were
    computed at (None when no member is a regexMatch)."""
    specs = list(specs)
    patterns = sorted(
        {value for spec in specs for _, selector, value, _ in spec["members"] if selector == "regexMatch"}
    )
    if not patterns:
        return [_native_spec(spec, {}) for spec in specs], None
    membership, names = _core.topology.node_names(state)
    matcher = _pattern_set(tuple(patterns))
    slots: dict[str, list[int]] = {p: [] for p in patterns}
    for slot, name in enumerate(names):
        if name:  # "" marks a free slot
            for i in matcher.ids(name):
                slots[patterns[i]].append(slot)
    return [_native_spec(spec, slots) for spec in specs], membership


def _native_spec(spec: dict[str, Any], slots: dict[str, list[int]]) -> dict[str, Any]:
    members = [
        (mtype, selector, value, labels, slots[value] if selector == "regexMatch" else [])
        for mtype, selector, value, labels in spec["members"]
    ]
    return {**spec, "members": members}


class NodePatterns:
    """What node writes tell the native tree about the HyperNodes' regexMatch patterns: a copy of its pattern table
    (refreshed when the native side reports it stale), compiled. Without regex HyperNodes a node write does no
    matching at all. Safe to share between threads: the native side refuses a write matched against a stale copy."""

    def __init__(self, state: _core.ClusterState) -> None:
        self._state = state
        # (version, patterns) replaced as a whole; version 0 is the native table before any HyperNode: no patterns.
        self._table: tuple[int, PatternSet] = (0, PatternSet(()))

    def refresh(self) -> None:
        version, patterns = _core.topology.patterns(self._state)
        if version != self._table[0]:
            self._table = (version, _pattern_set(tuple(patterns)))

    def write(self, call: Callable[[NodeSpec], T], spec: NodeSpec) -> T:
        """``call(spec)`` (a native add_node / update_node) with the ids of the patterns the node's name matches."""
        version, matcher = self._table
        if matcher.patterns:  # without patterns (the native side refuses the write if it has some) nothing to add
            _annotate(spec, version, matcher)
        try:
            return call(spec)
        except _core.StaleError:
            pass

        def again() -> T:
            self.refresh()
            _annotate(spec, *self._table)
            return call(spec)

        return retry_stale(again)


def _annotate(spec: NodeSpec, version: int, matcher: PatternSet) -> None:
    spec["pattern_version"] = version
    spec["pattern_ids"] = matcher.ids(spec["name"])
