"""NodeAffinity: spec.nodeSelector and required node affinity (filter), preferred node affinity (score,
normalized). Fused into the native kernel. kube-scheduler's ``addedAffinity`` argument is not supported yet."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import FILTER, PRE_FILTER, PRE_SCORE, SCORE, TYPE_META_KEYS, NodePlugin, check_type_meta
from vcore.validation import ANY, Record, fail, join

NAME = "NodeAffinity"
_KEYS = Record({key: ANY for key in (*TYPE_META_KEYS, "addedAffinity")})


def parse_args(args: Mapping[str, Any], path: str) -> None:
    _KEYS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    if args.get("addedAffinity") is not None:
        raise fail(ProfileError, join(path, "addedAffinity"), "not supported by vcore yet")
    return None


PLUGIN = NodePlugin(NAME, frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}), parse_args)
