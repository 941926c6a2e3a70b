"""Scheduler profiles: validation and resolution of one KubeSchedulerConfiguration profile.

This module owns :class:`Profile`, the immutable, fully resolved scheduler profile that
``vcore.Scheduler`` hands to the native engine, and the parsing that produces it:

- input is one profile of a ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration (a dict, or a
  YAML file path), or a whole KubeSchedulerConfiguration holding exactly one profile;
- plugin sets are merged with kube-scheduler's defaults exactly as kube-scheduler v1 does
  (``mergePluginSet`` of the v1 defaulting, then the framework's ``multiPoint`` expansion and score weights);
- ``pluginConfig`` arguments are typed and validated as kube-scheduler's ``Validate*Args`` (and Volcano's
  binpack argument parsing) do; an unknown key, an unknown plugin or a wrong type is a
  :class:`vcore.errors.ProfileError` whose message starts with the path of the offending field;
- :meth:`Profile.native` gives the native profile dict of the internal contract, :meth:`Profile.to_dict`
  the resolved configuration in KubeSchedulerConfiguration shape.

Plugin names, extension points and default weights live in :mod:`vcore.plugins`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from vcore import plugins as P
from vcore.errors import ProfileError
from vcore.plugins.base import API_VERSION, FILTER, MULTI_POINT, POST_FILTER, PRE_FILTER, PRE_SCORE, SCORE
from vcore.validation import ANY, Integer, ListOf, String, fail, join, load_yaml_file, mapping, unknown_key

__all__ = ["API_VERSION", "DEFAULT_SCHEDULER_NAME", "Profile"]

KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

_PROFILE_KEYS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_CONFIG_KEYS = ("apiVersion", "kind", "percentageOfNodesToScore", "profiles")
_PLUGIN_SET_KEYS = ("enabled", "disabled")
_PLUGIN_KEYS = ("name", "weight")
_PLUGIN_CONFIG_KEYS = ("name", "args")
_TYPE_META_KEYS = ("apiVersion", "kind")

# ----------------------------------------------------------------------------------------------------------
# Profile
# ----------------------------------------------------------------------------------------------------------


class PluginArguments(Mapping[str, Any]):
    """The resolved arguments of every implemented plugin that takes any, by plugin name: immutable and hashable,
    like the Profile holding them."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)

    def __getitem__(self, name: str) -> Any:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items.items())))

    def __repr__(self) -> str:
        return f"PluginArguments({self._items!r})"


@dataclass(frozen=True)
class Profile:
    """A validated, fully resolved scheduler profile. Build it with :meth:`from_config`.

    ``filters`` and ``scores`` are the plugins vcore runs at those extension points, in kube-scheduler's
    resolved order; ``pre_filters``/``pre_scores`` are the resolved pre-phases (vcore fuses them into the
    filter and score kernels); ``post_filters`` what runs for a pod no node fits (preemption).
    kube-scheduler plugins that vcore does not implement are not listed.
    """

    scheduler_name: str
    percentage_of_nodes_to_score: int  # 0 = adaptive
    pre_filters: tuple[str, ...]
    filters: tuple[str, ...]
    pre_scores: tuple[str, ...]
    scores: tuple[tuple[str, int], ...]  # (plugin, weight >= 1)
    post_filters: tuple[str, ...] = ()  # DefaultPreemption when it runs
    #: every implemented plugin's resolved arguments (its defaults where the profile configures none)
    args: PluginArguments = field(default_factory=lambda: _default_args())

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str | os.PathLike[str] | Profile | None = None) -> Profile:
        """Validate and resolve a profile.

        ``config`` is None (kube-scheduler's default profile), a dict in the shape of one
        KubeSchedulerConfiguration profile, a whole KubeSchedulerConfiguration dict with exactly one
        profile, a path (str or os.PathLike) to a YAML file holding either, or a Profile (returned as is).
        Raises ProfileError (a ValueError) naming the offending field; TypeError when ``config`` itself is
        of none of these types; ProfileError too when the file cannot be read.
        """
        if isinstance(config, Profile):
            return config
        if config is None:
            return _resolve({}, "", None)
        if isinstance(config, (str, os.PathLike)):
            path = os.fspath(config)
            data = load_yaml_file(path, ProfileError)
            if data is None:
                raise ProfileError(f"{path}: empty YAML document; expected a profile or a {KIND}")
            return _from_data(data, path)
        if isinstance(config, Mapping):
            return _from_data(config, "")
        raise TypeError(f"profile: expected a dict, a YAML file path or None, got {type(config).__name__}")

    def native(self) -> dict[str, Any]:
        """The native profile dict the engine consumes (see the internal contract); a fresh copy per call.

        The fused plugins' arguments go by their own keys (``fit``, ``balanced``, ``binpack``, ``gpu``); every
        node plugin of the native core finds its own under ``args``."""
        running = set(self.filters) | {n for n, _ in self.scores}
        binpack = self.args[P.BINPACK]
        return {
            "filters": list(self.filters),
            "scores": list(self.scores),
            "fit": self.args[P.NODE_RESOURCES_FIT].native(),
            "balanced": {"resources": list(self.args[P.NODE_RESOURCES_BALANCED_ALLOCATION].resources)},
            "binpack": {"weight": binpack.weight, "resources": list(binpack.all_resources)},
            "gpu": self.args[P.GPU_PLACEMENT].native(),
            "args": {
                name: plugin.native_args(self.args.get(name))
                for name, plugin in P.PLUGINS.items()
                if plugin.native_args is not None and name in running
            },
            "percentage_of_nodes_to_score": self.percentage_of_nodes_to_score,
        }

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as a KubeSchedulerConfiguration with this one profile.

        Every extension point vcore runs (preFilter, filter, postFilter, preScore, score) is spelled out as
        ``disabled: [{name: "*"}]`` plus the resolved ``enabled`` list (with weights at ``score``), and every
        argument is defaulted, so the result shows exactly what runs and loads back into an equal Profile.
        ``multiPoint`` is left at its default, so the other extension points (queueSort, bind, ...) keep
        kube-scheduler's plugins, which vcore does not run.
        """

        def point(names: tuple[str, ...]) -> dict[str, Any]:
            return {"enabled": [{"name": n} for n in names], "disabled": [{"name": "*"}]}

        plugins: dict[str, Any] = {
            PRE_FILTER: point(self.pre_filters),
            FILTER: point(self.filters),
            PRE_SCORE: point(self.pre_scores),
            SCORE: {"enabled": [{"name": n, "weight": w} for n, w in self.scores], "disabled": [{"name": "*"}]},
            POST_FILTER: point(self.post_filters),
        }
        running = set(self.filters) | {n for n, _ in self.scores} | set(self.post_filters)
        plugin_config = [
            {"name": name, "args": plugin.to_args(self.args[name])}
            for name, plugin in P.PLUGINS.items()
            if plugin.default_args is not None and (name in running or self.args[name] != plugin.default_args)
        ]
        profile = {
            "schedulerName": self.scheduler_name,
            "percentageOfNodesToScore": self.percentage_of_nodes_to_score,
            "plugins": plugins,
            "pluginConfig": plugin_config,
        }
        return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}


# ----------------------------------------------------------------------------------------------------------
# Parsing helpers: vcore.validation's checks, raising ProfileError. Every message starts with the field's path.
# ----------------------------------------------------------------------------------------------------------


def _default_args() -> PluginArguments:
    return PluginArguments(
        {name: plugin.default_args for name, plugin in P.PLUGINS.items() if plugin.default_args is not None}
    )


def _fail(path: str, message: str) -> ProfileError:
    return fail(ProfileError, path, message)


_child = join


def _as_mapping(value: Any, path: str) -> Mapping[str, Any]:
    return mapping(value, path, ProfileError)


def _check_keys(value: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    for key in value:
        if key not in allowed:
            raise unknown_key(join(path, key), key, allowed, ProfileError)


def _as_list(value: Any, path: str) -> list[Any]:
    return list(ListOf(ANY)(value, path, ProfileError))


def _as_str(value: Any, path: str) -> str:
    return String()(value, path, ProfileError)


def _as_int(value: Any, path: str, lo: int, hi: int) -> int:
    return Integer(lo, hi)(value, path, ProfileError)


def _suggest_plugin(name: str) -> str:
    close = difflib.get_close_matches(name, sorted(P.KNOWN_PLUGINS), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# ----------------------------------------------------------------------------------------------------------
# Top level
# ----------------------------------------------------------------------------------------------------------


def _from_data(data: Any, origin: str) -> Profile:
    """Resolve a profile or a whole configuration; ``origin`` (a file path or "") prefixes error messages."""
    try:
        data = _as_mapping(data, "profile")
        if "profiles" in data or "kind" in data or "apiVersion" in data:
            return _from_configuration(data)
        return _resolve(data, "", None)
    except ProfileError as exc:
        if origin:
            raise ProfileError(f"{origin}: {exc}") from None
        raise


def _from_configuration(data: Mapping[str, Any]) -> Profile:
    for key in data:
        if key not in _CONFIG_KEYS:
            raise _fail(key, f"not a profile setting; vcore reads only {', '.join(_CONFIG_KEYS)} of a {KIND}")
    if data.get("apiVersion") != API_VERSION:
        raise _fail("apiVersion", f"must be {API_VERSION!r}, got {data.get('apiVersion')!r}")
    if data.get("kind") != KIND:
        raise _fail("kind", f"must be {KIND!r}, got {data.get('kind')!r}")
    global_pct = None
    if data.get("percentageOfNodesToScore") is not None:
        global_pct = _as_int(data["percentageOfNodesToScore"], "percentageOfNodesToScore", 0, 100)
    if data.get("profiles") is None:
        return _resolve({}, "profiles[0]", global_pct)  # kube-scheduler defaults a single profile
    profiles = _as_list(data["profiles"], "profiles")
    if len(profiles) != 1:
        raise _fail("profiles", f"must hold exactly one profile, got {len(profiles)} (a vcore Profile is one profile)")
    return _resolve(profiles[0], "profiles[0]", global_pct)


def _resolve(data: Any, root: str, global_pct: int | None) -> Profile:
    """Resolve one profile; ``root`` is the profile's own path ("" or "profiles[0]")."""
    data = _as_mapping(data, root or "profile")
    _check_keys(data, _PROFILE_KEYS, root)

    scheduler_name = DEFAULT_SCHEDULER_NAME
    if data.get("schedulerName") is not None:
        scheduler_name = _as_str(data["schedulerName"], _child(root, "schedulerName"))
        if not scheduler_name:
            raise _fail(_child(root, "schedulerName"), "required (must not be empty)")

    pct = global_pct if global_pct is not None else 0  # kube-scheduler's default: 0 = adaptive
    if data.get("percentageOfNodesToScore") is not None:
        pct = _as_int(data["percentageOfNodesToScore"], _child(root, "percentageOfNodesToScore"), 0, 100)

    args = {**_default_args(), **_parse_plugin_config(data.get("pluginConfig"), _child(root, "pluginConfig"))}
    points = _resolve_plugins(data.get("plugins"), _child(root, "plugins"), args)
    return Profile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=pct,
        pre_filters=points[PRE_FILTER],
        filters=points[FILTER],
        pre_scores=points[PRE_SCORE],
        scores=points[SCORE],
        post_filters=points[POST_FILTER],
        args=PluginArguments(args),
    )


# ----------------------------------------------------------------------------------------------------------
# plugins: parsing and kube-scheduler v1 merge
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PluginSet:
    enabled: tuple[tuple[str, int | None], ...]  # (name, weight or None when absent/0)
    disabled: frozenset[str]


def _parse_plugin_set(value: Any, point: str, path: str) -> _PluginSet:
    if value is None:
        return _PluginSet((), frozenset())
    value = _as_mapping(value, path)
    _check_keys(value, _PLUGIN_SET_KEYS, path)

    disabled: set[str] = set()
    raw_disabled = value.get("disabled")
    raw_disabled = [] if raw_disabled is None else _as_list(raw_disabled, _child(path, "disabled"))
    for i, entry in enumerate(raw_disabled):
        epath = f"{path}.disabled[{i}]"
        name, _ = _parse_plugin_entry(entry, epath)
        if name != "*" and name not in P.KNOWN_PLUGINS:
            raise _fail(f"{epath}.name", f"unknown plugin {name!r}{_suggest_plugin(name)}")
        disabled.add(name)  # disabling a plugin vcore does not run is a no-op

    enabled: list[tuple[str, int | None]] = []
    seen: dict[str, int] = {}
    raw_enabled = value.get("enabled")
    raw_enabled = [] if raw_enabled is None else _as_list(raw_enabled, _child(path, "enabled"))
    for i, entry in enumerate(raw_enabled):
        epath = f"{path}.enabled[{i}]"
        name, weight = _parse_plugin_entry(entry, epath)
        npath = f"{epath}.name"
        if name == "*":
            raise _fail(npath, "'*' is only valid in a disabled list")
        if name in P.REMOVED_PLUGINS:
            raise _fail(
                npath,
                f"plugin {name!r} was removed from kube-scheduler "
                f"(invalid in {API_VERSION}); vcore does not implement it",
            )
        if name in P.UNIMPLEMENTED_PLUGINS:
            raise _fail(npath, f"vcore does not implement plugin {name!r}; disable it or leave it out")
        if not P.is_implemented(name):
            raise _fail(npath, f"unknown plugin {name!r}{_suggest_plugin(name)}")
        if point != MULTI_POINT and not P.implements(name, point):
            points = ", ".join(p for p in P.SPECIFIC_POINTS if P.implements(name, p))
            raise _fail(
                npath, f"plugin {name!r} does not implement the {point} extension point (it implements: {points})"
            )
        if name in seen:
            raise _fail(npath, f"plugin {name!r} is enabled twice (also at {path}.enabled[{seen[name]}])")
        seen[name] = i
        enabled.append((name, weight))
    return _PluginSet(tuple(enabled), frozenset(disabled))


def _parse_plugin_entry(entry: Any, path: str) -> tuple[str, int | None]:
    entry = _as_mapping(entry, path)
    _check_keys(entry, _PLUGIN_KEYS, path)
    if entry.get("name") is None:
        raise _fail(f"{path}.name", "required")
    name = _as_str(entry["name"], f"{path}.name")
    if not name:
        raise _fail(f"{path}.name", "required (must not be empty)")
    if entry.get("weight") is None:
        return name, None
    raw = entry["weight"]
    if isinstance(raw, int) and not isinstance(raw, bool) and raw < 0:
        raise _fail(f"{path}.weight", f"{raw} must be positive (0 or absent means unset, i.e. 1)")
    return name, _as_int(raw, f"{path}.weight", 0, P.MAX_WEIGHT) or None  # 0 means unset, as in kube-scheduler


def _merge_plugin_set(defaults: tuple[tuple[str, int | None], ...], custom: _PluginSet) -> list[tuple[str, int | None]]:
    """kube-scheduler v1 mergePluginSet: defaults minus disabled, re-configured in place, then the rest appended."""
    merged: list[tuple[str, int | None]] = []
    replaced: set[str] = set()
    custom_by_name = dict(custom.enabled)
    if "*" not in custom.disabled:
        for name, weight in defaults:
            if name in custom.disabled:
                continue
            if name in custom_by_name:
                weight = custom_by_name[name]
                replaced.add(name)
            merged.append((name, weight))
    merged.extend((n, w) for n, w in custom.enabled if n not in replaced)
    return merged


def _resolve_plugins(value: Any, path: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Resolve every extension point vcore runs, as kube-scheduler v1 defaulting + framework do."""
    if value is None:
        value = {}
    value = _as_mapping(value, path)
    _check_keys(value, P.EXTENSION_POINTS, path)
    sets = {point: _parse_plugin_set(value.get(point), point, _child(path, point)) for point in P.EXTENSION_POINTS}

    # v1 defaulting: the defaults all come through multiPoint; every other point's default set is empty.
    multi_point = _merge_plugin_set(P.VCORE_DEFAULT_MULTI_POINT, sets[MULTI_POINT])

    resolved: dict[str, Any] = {}
    for point in (PRE_FILTER, FILTER, POST_FILTER, PRE_SCORE, SCORE):
        specific = sets[point]
        specific_names = [n for n, _ in specific.enabled]
        if "*" in specific.disabled:
            resolved[point] = tuple(specific_names)  # framework: "*" skips the multiPoint expansion
            continue
        overrides: set[str] = set()
        expanded: list[str] = []
        for name, _ in multi_point:
            if not P.implements(name, point) or name in specific.disabled:
                continue  # also drops the in-tree defaults vcore does not implement
            if name in specific_names:
                overrides.add(name)  # explicitly configured at this point: that entry wins
                continue
            expanded.append(name)
        # framework order: overridden plugins (in their specific order), multiPoint ones, the other specific ones
        resolved[point] = tuple(
            [n for n in specific_names if n in overrides] + expanded + [n for n in specific_names if n not in overrides]
        )

    # framework getScoreWeights: the score point's own entry wins over multiPoint; 0/absent -> 1.
    weights: dict[str, int] = {}
    for name, weight in list(sets[SCORE].enabled) + multi_point:
        if P.implements(name, SCORE) and name not in weights:
            weights[name] = weight or 1
    total = 0
    for name in weights:
        # Most plugins score up to 100; binpack up to 100 * binpack.weight (Volcano), GPUPlacement in tenths.
        top = weights[name] * P.PLUGINS[name].max_score(args.get(name))
        if top > P.MAX_TOTAL_SCORE - total:
            raise _fail(_child(path, SCORE), "total score of Score plugins could overflow")
        total += top
    resolved[SCORE] = tuple((n, weights[n]) for n in resolved[SCORE])
    return resolved


# ----------------------------------------------------------------------------------------------------------
# pluginConfig
# ----------------------------------------------------------------------------------------------------------


def _parse_plugin_config(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for i, entry in enumerate(_as_list(value, path)):
        epath = f"{path}[{i}]"
        entry = _as_mapping(entry, epath)
        _check_keys(entry, _PLUGIN_CONFIG_KEYS, epath)
        if entry.get("name") is None:
            raise _fail(f"{epath}.name", "required")
        name = _as_str(entry["name"], f"{epath}.name")
        if name in P.REMOVED_PLUGINS:
            raise _fail(f"{epath}.name", f"plugin {name!r} was removed from kube-scheduler (invalid in {API_VERSION})")
        if name in P.UNIMPLEMENTED_PLUGINS:
            raise _fail(f"{epath}.name", f"vcore does not implement plugin {name!r}, so it takes no arguments")
        if not P.is_implemented(name):
            raise _fail(f"{epath}.name", f"unknown plugin {name!r}{_suggest_plugin(name)}")
        if name in seen:
            raise _fail(f"{epath}.name", f"duplicate entry for plugin {name!r} (first at {path}[{seen[name]}])")
        seen[name] = i
        apath = f"{epath} ({name}).args"
        args = entry.get("args")
        args = {} if args is None else _as_mapping(args, apath)
        parsed = P.PLUGINS[name].parse_args(args, apath)
        if parsed is not None:
            out[name] = parsed
    return out
