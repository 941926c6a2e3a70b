"""What a node plugin declares, and the argument checks kube-scheduler's plugins share.

Each module of this package declares one plugin as a :class:`NodePlugin`: its name, the extension points it
implements, how its ``pluginConfig`` arguments are validated (with :mod:`vcore.validation`, errors naming the
field), and, for a plugin whose kernel is a node plugin of the native core (``core/src/plugins/``), the argument
dict that kernel reads. :mod:`vcore.plugins` collects them; :mod:`vcore.profile` resolves profiles against them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vcore.errors import ProfileError
from vcore.validation import LABEL_KEY, Integer, ListOf, Record, String, fail, join

# --- Extension points (KubeSchedulerConfiguration v1 field names, in kube-scheduler's field order) ---
MULTI_POINT = "multiPoint"
PRE_ENQUEUE = "preEnqueue"
QUEUE_SORT = "queueSort"
PRE_FILTER = "preFilter"
FILTER = "filter"
POST_FILTER = "postFilter"
PRE_SCORE = "preScore"
SCORE = "score"
RESERVE = "reserve"
PERMIT = "permit"
PRE_BIND = "preBind"
BIND = "bind"
POST_BIND = "postBind"

API_VERSION = "kubescheduler.config.k8s.io/v1"
MAX_NODE_SCORE = 100  # kube-scheduler's MaxNodeScore


def no_args(args: Mapping[str, Any], path: str) -> None:
    """A plugin without arguments: any key is an error."""
    Record({})(args, path, ProfileError)
    return None


@dataclass(frozen=True)
class NodePlugin:
    """One node plugin as vcore knows it.

    ``parse_args(args, path)`` validates the plugin's ``pluginConfig`` args (a mapping, ``{}`` when absent) into its
    resolved arguments; ``default_args`` are those of a profile that configures none. ``native_args(args)`` is the
    dict the native node plugin of the same name reads (None for the plugins fused into the native kernel, whose
    arguments the profile passes by name). ``max_score(args)`` is the largest node score it gives (kube-scheduler's
    overflow check of the total). ``to_args(args)`` turns resolved arguments back into ``pluginConfig`` shape.
    """

    name: str
    points: frozenset[str]
    parse_args: Callable[[Mapping[str, Any], str], Any] = no_args
    default_args: Any = None
    native_args: Callable[[Any], dict[str, Any]] | None = None
    max_score: Callable[[Any], int] = field(default=lambda args: MAX_NODE_SCORE)
    to_args: Callable[[Any], dict[str, Any]] = field(default=lambda args: {})

    def implements(self, point: str) -> bool:
        return point in self.points


# ----------------------------------------------------------------------------------------------------------
# Checks kube-scheduler's plugin arguments share
# ----------------------------------------------------------------------------------------------------------

TYPE_META_KEYS = ("apiVersion", "kind")
MAX_RESOURCE_WEIGHT = 100  # kube-scheduler: a resource weight is in (0, 100]
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


def check_type_meta(args: Mapping[str, Any], plugin: str, path: str) -> None:
    """kube-scheduler args may carry apiVersion/kind (e.g. kind: NodeResourcesFitArgs); check them."""
    if "apiVersion" in args and args["apiVersion"] != API_VERSION:
        raise fail(ProfileError, join(path, "apiVersion"), f"must be {API_VERSION!r}, got {args['apiVersion']!r}")
    if "kind" in args and args["kind"] != f"{plugin}Args":
        raise fail(ProfileError, join(path, "kind"), f"must be {plugin + 'Args'!r}, got {args['kind']!r}")


_RESOURCE_SPEC = Record({"name": String(nonempty=True), "weight": Integer()}, required=("name",))


def resource_specs(value: Any, path: str, *, exactly_one: bool) -> tuple[tuple[str, int], ...]:
    """A [{name, weight}] list; empty/absent -> cpu 1, memory 1; weight 0/absent -> 1 (kube-scheduler defaulting);
    ``exactly_one``: every weight must be 1 (BalancedAllocation)."""
    if value is None:
        return DEFAULT_RESOURCES
    items = ListOf(_RESOURCE_SPEC)(value, path, ProfileError)
    if not items:
        return DEFAULT_RESOURCES
    out: list[tuple[str, int]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        ipath = join(path, i)
        name = item["name"]
        if name in seen:
            raise fail(ProfileError, join(ipath, "name"), f"duplicate resource {name!r} (also at {path}[{seen[name]}])")
        seen[name] = i
        weight = item.get("weight") or 1
        if exactly_one and weight != 1:
            raise fail(ProfileError, join(ipath, "weight"), f"{weight} must be 1")
        if not 0 < weight <= MAX_RESOURCE_WEIGHT:
            raise fail(
                ProfileError,
                join(ipath, "weight"),
                f"resource weight of {name} not in valid range (0, {MAX_RESOURCE_WEIGHT}]: {weight}",
            )
        out.append((name, weight))
    return tuple(out)


def qualified_names(value: Any, path: str, *, group: bool) -> tuple[str, ...]:
    """A list of resource names ([prefix/]name, IsQualifiedName), or of resource groups (no '/')."""
    if value is None:
        return ()
    names = ListOf(String())(value, path, ProfileError)
    for i, name in enumerate(names):
        if group and "/" in name:
            raise fail(ProfileError, join(path, i), f"resource group name can't contain '/': {name!r}")
        LABEL_KEY(name, join(path, i), ProfileError)
    return names
