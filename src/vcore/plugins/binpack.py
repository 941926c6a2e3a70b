"""Volcano's binpack: prefer nodes that the pod fills most (score), with Volcano's argument keys.

``binpack.weight`` (the node score is ``sum(s_r) / sum(w_r) * 100 * weight``; 0 turns it off), ``binpack.cpu``,
``binpack.memory`` and ``binpack.resources`` (extended resources, each weighted by ``binpack.resources.<name>``).
Fused into the native kernel; the profile hands its arguments over as ``binpack``.

Two readings. In a KubeSchedulerConfiguration (vcore's own profile) a bad value is an error, so that a typo never
silently becomes a default. In a volcano-scheduler.conf, :func:`volcano_arguments` first reads them as Volcano's
plugin does (calculateWeight): a weight that is not an integer keeps its default, a negative resource weight becomes
1, and a resource listed twice or a weight of a resource not listed is ignored, each with a note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import MAX_NODE_SCORE, SCORE, NodePlugin
from vcore.validation import LABEL_KEY, Integer, String, fail, join, unknown_key

NAME = "binpack"  # Volcano's plugin name (lower case)
WEIGHT = "binpack.weight"
CPU = "binpack.cpu"
MEMORY = "binpack.memory"
RESOURCES = "binpack.resources"
RESOURCES_PREFIX = RESOURCES + "."
_WEIGHT_VALUE = Integer(0, 2**31 - 1)


@dataclass(frozen=True)
class BinpackArgs:
    """Resolved Volcano binpack arguments: ``weight``, the ``cpu``/``memory`` weights and the listed extended
    ``resources`` with their weights, in listed order."""

    weight: int = 1
    cpu: int = 1
    memory: int = 1
    resources: tuple[tuple[str, int], ...] = ()

    @property
    def all_resources(self) -> tuple[tuple[str, int], ...]:
        """(name, weight) of every resource binpack scores: cpu, memory, then the listed ones."""
        return (("cpu", self.cpu), ("memory", self.memory)) + self.resources

    def to_dict(self) -> dict[str, Any]:
        """The arguments with Volcano's keys."""
        out: dict[str, Any] = {WEIGHT: self.weight, CPU: self.cpu, MEMORY: self.memory}
        if self.resources:
            out[RESOURCES] = ", ".join(n for n, _ in self.resources)
            for name, w in self.resources:
                out[RESOURCES_PREFIX + name] = w
        return out


def volcano_resource_list(
    args: dict[str, Any], key: str, ignored: Callable[[str, str], None], dropped: Callable[[str, str], None]
) -> list[str]:
    """How Volcano's binpack weights read their resource list (binpack's and network-topology-aware's alike):
    ``args[key]`` names extended resources ("a, b"); cpu, memory and a repeat are ignored (Volcano keeps them in a
    map entry it overwrites), a value that is not a string is dropped, and the weight ``<key>.<name>`` of a resource
    not listed is ignored. Changes ``args`` in place and returns the listed names; ``ignored`` and ``dropped`` hear
    (key, why) of each change."""
    listed: list[str] = []
    if key in args:
        raw = args[key]
        if isinstance(raw, str):
            weights_of = key.removesuffix("resources")  # binpack. or hypernode.binpack.
            for name in (item.strip() for item in raw.split(",")):
                if name in ("cpu", "memory") or name in listed:
                    ignored(key, f"{name} is listed again ({weights_of}{name} or the list has its weight)")
                elif name:
                    listed.append(name)
            args[key] = ", ".join(listed)
        else:
            dropped(key, f"{raw!r} is not a comma-separated string")
            del args[key]
    for weight_key in [k for k in args if k.startswith(key + ".")]:
        if weight_key[len(key) + 1 :] not in listed:
            ignored(weight_key, f"the resource is not listed in {key}")
            del args[weight_key]
    return listed


def volcano_arguments(args: Mapping[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """The arguments as Volcano's binpack reads its keys (framework.Arguments.GetInt, then calculateWeight), with a
    note for each value it replaces or ignores; other keys are left to parse_args. A negative ``binpack.weight``
    reverses the score in Volcano (emptiest node first); vcore's kernel has no such score: a ProfileError."""
    out = dict(args)
    notes: list[str] = []

    def note(key: str, why: str) -> None:
        notes.append(f"{join(path, key)}: {why}, as Volcano's binpack does")

    def weight(key: str) -> None:
        value = out[key]
        if type(value) is not int:  # GetInt: an int, nothing else (a bool neither); the default stays
            note(key, f"{value!r} is not an integer; binpack uses its default 1")
            del out[key]
        elif value < 0 and key == WEIGHT:
            raise fail(
                ProfileError,
                join(path, key),
                f"{value} is negative: Volcano then prefers the emptiest nodes, a score vcore does not implement",
            )
        elif value < 0:
            note(key, f"{value} is negative; binpack uses 1")
            out[key] = 1

    for key in (WEIGHT, CPU, MEMORY):
        if key in out:
            weight(key)
    listed = volcano_resource_list(
        out,
        RESOURCES,
        ignored=lambda key, why: note(key, f"{why}; ignored"),
        dropped=lambda key, why: note(key, f"{why}; no extended resources"),
    )
    for name in listed:
        if RESOURCES_PREFIX + name in out:
            weight(RESOURCES_PREFIX + name)
    return out, notes


def parse_args(args: Mapping[str, Any], path: str) -> BinpackArgs:
    def weight_of(key: str, default: int) -> int:
        return default if args.get(key) is None else _WEIGHT_VALUE(args[key], join(path, key), ProfileError)

    listed: list[str] = []
    if args.get(RESOURCES) is not None:
        rpath = join(path, RESOURCES)
        for item in String()(args[RESOURCES], rpath, ProfileError).split(","):
            name = item.strip()
            if not name:
                continue
            if name in ("cpu", "memory"):
                raise fail(ProfileError, rpath, f"{name!r} is weighted by binpack.{name}, not listed here")
            LABEL_KEY(name, rpath, ProfileError)
            if name in listed:
                raise fail(ProfileError, rpath, f"resource {name!r} listed twice")
            listed.append(name)
    known = (WEIGHT, CPU, MEMORY, RESOURCES)
    for key in args:
        if key in known:
            continue
        if key.startswith(RESOURCES_PREFIX) and key[len(RESOURCES_PREFIX) :] not in listed:
            raise fail(
                ProfileError,
                join(path, key),
                f"unknown key: resource {key[len(RESOURCES_PREFIX) :]!r} is not listed in binpack.resources",
            )
        if not key.startswith(RESOURCES_PREFIX):
            raise unknown_key(join(path, key), key, known + (RESOURCES_PREFIX + "<name>",), ProfileError)
    resources = tuple((name, weight_of(RESOURCES_PREFIX + name, 1)) for name in listed)
    return BinpackArgs(weight_of(WEIGHT, 1), weight_of(CPU, 1), weight_of(MEMORY, 1), resources)


PLUGIN = NodePlugin(
    NAME,
    frozenset({SCORE}),
    parse_args,
    BinpackArgs(),
    max_score=lambda args: MAX_NODE_SCORE * max(args.weight, 1),
    to_args=BinpackArgs.to_dict,
)
