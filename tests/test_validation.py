"""vcore.validation: each constraint accepts what it should, and refuses the rest in the one error format."""

import math

import pytest

from vcore import validation as v
from vcore.errors import ProfileError


@pytest.mark.parametrize(
    "constraint, value, expected",
    [
        (v.Integer(1, 100), 7, 7),
        (v.Number(0, 1), 1, 1.0),
        (v.Number(0, open_lo=True), 0.25, 0.25),
        (v.Boolean(), False, False),
        (v.String(choices=("a", "b")), "b", "b"),
        (v.ListOf(v.Integer()), [1, 2], (1, 2)),
        (v.MapOf(v.Integer(0)), {"x": 1}, {"x": 1}),
        (v.Duration(), "1m30s", 90.0),
        (v.Duration(), "250ms", 0.25),
        (v.Duration(), 2, 2.0),
        (v.Duration(allow_zero=True), "0s", 0.0),
        (v.PORT, 65535, 65535),
        (v.OneOf((v.PORT, v.DNS1123_LABEL), "a port"), "http", "http"),
        (v.LABEL_KEY, "topology.kubernetes.io/zone", "topology.kubernetes.io/zone"),
        (v.LABEL_KEY, "rack", "rack"),
        (v.DNS1123_SUBDOMAIN, "node-1.example", "node-1.example"),
    ],
)
def test_accepts(constraint, value, expected):
    assert constraint(value, "f") == expected


@pytest.mark.parametrize(
    "constraint, value, message",
    [
        (v.Integer(1, 100), True, "f: must be an integer, got a boolean True"),
        (v.Integer(1, 100), 1.0, "f: must be an integer, got a number 1.0"),
        (v.Integer(1, 100), 0, "f: must be in [1, 100], got 0"),
        (v.Number(0, 1), math.nan, "f: must be a finite number, got nan"),
        (v.Number(0), math.inf, "f: must be a finite number, got inf"),
        (v.Number(0, open_lo=True), 0, "f: must be > 0, got 0"),
        (v.Number(), "1", "f: must be a number, got a string '1'"),
        (v.Boolean(), "yes", "f: must be true or false, got a string 'yes'"),
        (v.String(choices=("fgd", "vcore")), "fdg", "f: must be one of fgd, vcore; got 'fdg' (did you mean 'fgd'?)"),
        (v.String(nonempty=True), "", "f: must not be empty"),
        (v.String(max_len=3), "abcd", "f: must be at most 3 characters, got 4"),
        (v.ListOf(v.Integer(0)), [1, -1], "f[1]: must be >= 0, got -1"),
        (v.ListOf(v.Integer(), min_len=1), [], "f: must have at least 1 item(s)"),
        (v.MapOf(v.Integer()), {1: 2}, "f: keys must be strings, got an integer 1"),
        (v.MapOf(v.Integer()), [], "f: must be a mapping, got a list"),
        (v.Duration(), "1x", "f: must be a duration like '100ms' or '15s', got a string '1x'"),
        (v.Duration(), math.inf, "f: must be a finite duration, got inf"),
        (v.Duration(), 0, "f: must be > 0, got 0"),
        (v.Duration(max_seconds=60), "2m", "f: must be at most 60 s, got '2m'"),
        (v.PORT, 99999, "f: must be in [1, 65535], got 99999"),
        (v.OneOf((v.PORT, v.DNS1123_LABEL), "a port"), -1, "f: must be a port, got an integer -1"),
        (v.LABEL_KEY, "a/b/c", "f: 'a/b/c' is not a valid label key"),
        (v.LABEL_KEY, "-x", "f: '-x' is not a valid label key"),
        (v.DNS1123_SUBDOMAIN, "a" * 254, "f: must be at most 253 characters, got 254"),
    ],
)
def test_refuses_with_the_field_path(constraint, value, message):
    with pytest.raises((ValueError, TypeError)) as info:  # TypeError for a value of the wrong type
        constraint(value, "f")
    assert str(info.value).startswith(message)


def test_record_checks_keys_required_and_values_with_the_callers_error():
    record = v.Record({"weight": v.Integer(1, 100), "policy": v.String(choices=("fgd", "vcore"))}, required=("policy",))
    assert record({"policy": "fgd", "weight": 3}, "args") == {"policy": "fgd", "weight": 3}
    with pytest.raises(ProfileError, match=r"^args\.wieght: unknown key \(did you mean 'weight'\?\)$"):
        record({"policy": "fgd", "wieght": 3}, "args", ProfileError)
    with pytest.raises(ProfileError, match=r"^args\.policy: required$"):
        record({"weight": 3}, "args", ProfileError)
    with pytest.raises(ProfileError, match=r"^args\.weight: must be in \[1, 100\], got 0$"):
        record({"policy": "fgd", "weight": 0}, "args", ProfileError)


def test_join_builds_paths():
    assert v.join("", "a") == "a"
    assert v.join("a", "b") == "a.b"
    assert v.join("a", 3) == "a[3]"


def test_nulls_absent_treats_a_null_field_as_left_out():
    record = v.NullsAbsent(v.Record({"tier": v.Integer(0), "name": v.String()}, required=("tier",)))
    assert record({"tier": 1, "name": None}, "spec") == {"tier": 1}
    with pytest.raises((ValueError, TypeError), match=r"^spec\.tier: required$"):
        record({"tier": None}, "spec")
    with pytest.raises((ValueError, TypeError), match=r"^spec: must be a mapping, got a list$"):
        record([], "spec")


def test_a_wrong_type_is_a_type_error_for_plain_value_errors_and_the_callers_error_otherwise():
    count = v.Integer(0)
    assert count(3, "f") == 3
    with pytest.raises(TypeError, match=r"^f: must be an integer, got a string '0'$"):
        count("0", "f")
    with pytest.raises(TypeError, match=r"^f: must be an integer, got a boolean True$"):
        count(True, "f")
    with pytest.raises(ValueError, match=r"^f: must be >= 0, got -1$"):
        count(-1, "f")
    with pytest.raises(ProfileError, match=r"^f: must be an integer, got a string '0'$"):
        count("0", "f", ProfileError)  # a configuration's errors are all of its own class
    record = v.Record({"n": count, "flag": v.Boolean()})
    with pytest.raises(TypeError, match=r"^spec\.flag: must be true or false, got a string 'yes'$"):
        record({"n": 1, "flag": "yes"}, "spec")
    with pytest.raises(ValueError, match=r"^spec\.other: unknown key"):
        record({"other": 1}, "spec")


def test_optional_mapping_and_list_read_a_missing_field_as_empty():
    assert v.optional_mapping(None, "f") == {} and v.optional_list(None, "f") == ()
    labels = {"a": "b"}
    assert v.optional_mapping(labels, "f") is labels
    assert v.optional_list([1], "f") == [1] and v.optional_list((1,), "f") == (1,)
    with pytest.raises(TypeError, match=r"^node x: metadata: must be a mapping, got a list$"):
        v.optional_mapping([], "node x: metadata", TypeError)
    with pytest.raises(TypeError, match=r"^f: keys must be strings, got an integer 1$"):
        v.optional_mapping({1: "a"}, "f")
    with pytest.raises(TypeError, match=r"^spec.containers: must be a list, got a mapping$"):
        v.optional_list({"name": "c"}, "spec.containers", TypeError)


def test_strings_are_unicode_text():
    assert v.String()("zoné", "f") == "zoné"
    with pytest.raises(
        (ValueError, TypeError), match=r"^f: '\\ud800' is not valid Unicode text \(it holds a lone surrogate\)$"
    ):
        v.String()("\ud800", "f")
