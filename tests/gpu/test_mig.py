"""MIG geometry and placement rules against NVIDIA's documented placements (MIG user guide, nvidia-smi -lgipp)."""

from __future__ import annotations

import itertools

import pytest

from vcore.gpu import mig
from vcore.gpu.mig import MigInstance, can_place, free_starts, mig_model, profiles_for

# (model, profile) -> (compute slices, memory slices, starts) as NVIDIA documents them.
DOCUMENTED = {
    ("A100-40GB", "1g.5gb"): (1, 1, (0, 1, 2, 3, 4, 5, 6)),
    ("A100-40GB", "1g.10gb"): (1, 2, (0, 2, 4, 6)),
    ("A100-40GB", "2g.10gb"): (2, 2, (0, 2, 4)),
    ("A100-40GB", "3g.20gb"): (3, 4, (0, 4)),
    ("A100-40GB", "4g.20gb"): (4, 4, (0,)),
    ("A100-40GB", "7g.40gb"): (7, 8, (0,)),
    ("A100-80GB", "1g.10gb"): (1, 1, (0, 1, 2, 3, 4, 5, 6)),
    ("A100-80GB", "1g.20gb"): (1, 2, (0, 2, 4, 6)),
    ("A100-80GB", "2g.20gb"): (2, 2, (0, 2, 4)),
    ("A100-80GB", "3g.40gb"): (3, 4, (0, 4)),
    ("A100-80GB", "4g.40gb"): (4, 4, (0,)),
    ("A100-80GB", "7g.80gb"): (7, 8, (0,)),
    ("H100-80GB", "1g.10gb"): (1, 1, (0, 1, 2, 3, 4, 5, 6)),
    ("H100-80GB", "1g.20gb"): (1, 2, (0, 2, 4, 6)),
    ("H100-80GB", "2g.20gb"): (2, 2, (0, 2, 4)),
    ("H100-80GB", "3g.40gb"): (3, 4, (0, 4)),
    ("H100-80GB", "4g.40gb"): (4, 4, (0,)),
    ("H100-80GB", "7g.80gb"): (7, 8, (0,)),
}


@pytest.mark.parametrize("model,name", sorted(DOCUMENTED), ids=[f"{m}-{p}" for m, p in sorted(DOCUMENTED)])
def test_documented_geometry(model, name):
    p = profiles_for(model)[name]
    assert (p.compute_slices, p.memory_slices, p.starts) == DOCUMENTED[(model, name)]
    # Every documented placement stays inside the 7 compute / 8 memory slices.
    for s in p.starts:
        assert s + p.compute_slices <= mig.COMPUTE_SLICES and s + p.memory_slices <= mig.MEMORY_SLICES


def test_profiles_are_exactly_the_documented_ones():
    for model in mig.MIG_MODELS:
        assert set(profiles_for(model)) == {p for m, p in DOCUMENTED if m == model}


A40 = "A100-40GB"
H80 = "H100-80GB"

# Hand cases: (model, existing instances, new profile, expected lowest start or None).
CASES = [
    (A40, [], "7g.40gb", 0),
    (A40, [], "4g.20gb", 0),
    (A40, [], "3g.20gb", 0),
    (A40, [("3g.20gb", 0)], "3g.20gb", 4),
    (A40, [("4g.20gb", 0)], "3g.20gb", 4),  # the documented 4g+3g split
    (A40, [("4g.20gb", 0), ("3g.20gb", 4)], "1g.5gb", None),
    (A40, [("3g.20gb", 4)], "4g.20gb", 0),
    (A40, [("3g.20gb", 0), ("3g.20gb", 4)], "1g.5gb", None),  # compute slice 3 is idle but has no memory
    (A40, [("1g.5gb", 3)], "3g.20gb", 4),  # 1g at 3 takes memory slice 3 of the 3g at 0
    (A40, [("1g.5gb", 3)], "4g.20gb", None),
    (A40, [("1g.5gb", 0)], "7g.40gb", None),
    (A40, [("1g.5gb", 1)], "2g.10gb", 2),
    (A40, [("2g.10gb", 0), ("2g.10gb", 2), ("2g.10gb", 4)], "1g.5gb", 6),
    (A40, [("2g.10gb", 0), ("2g.10gb", 2), ("2g.10gb", 4)], "1g.10gb", 6),
    (A40, [("2g.10gb", 0), ("2g.10gb", 2), ("2g.10gb", 4), ("1g.5gb", 6)], "1g.5gb", None),
    (A40, [("3g.20gb", 0), ("2g.10gb", 4)], "1g.10gb", 6),  # 3g + 2g + 1g.10gb, a documented mix
    (A40, [("1g.5gb", s) for s in range(6)], "1g.5gb", 6),
    (A40, [("1g.5gb", s) for s in range(7)], "1g.5gb", None),
    (A40, [("1g.10gb", 0)], "1g.10gb", 2),
    (A40, [("1g.5gb", 6)], "3g.20gb", 0),
    (H80, [], "1g.20gb", 0),
    (H80, [("1g.10gb", 0)], "1g.20gb", 2),
    (H80, [("4g.40gb", 0)], "3g.40gb", 4),
    (H80, [("7g.80gb", 0)], "1g.10gb", None),
    ("A100-80GB", [("2g.20gb", 2)], "3g.40gb", 4),
    ("A100-80GB", [("2g.20gb", 4)], "3g.40gb", 0),
]


@pytest.mark.parametrize(
    "model,existing,name,expected",
    CASES,
    ids=[f"{m}:{'+'.join(f'{p}@{s}' for p, s in e) or 'empty'}:{n}" for m, e, n, _ in CASES],
)
def test_can_place_hand_cases(model, existing, name, expected):
    assert can_place(model, existing, name) == expected


def _overlap_free(model, instances):
    """Independent check by slice sets (not bit masks)."""
    profiles = profiles_for(model)
    compute, memory = set(), set()
    for name, start in instances:
        p = profiles[name]
        if start not in p.starts:
            return False
        c = set(range(start, start + p.compute_slices))
        m = set(range(start, start + p.memory_slices))
        if c & compute or m & memory:
            return False
        compute |= c
        memory |= m
    return True


@pytest.mark.parametrize("model", sorted(mig.MIG_MODELS))
def test_can_place_agrees_with_slice_sets_on_all_pairs(model):
    names = sorted(profiles_for(model))
    placements = [(n, s) for n in names for s in profiles_for(model)[n].starts]
    for existing in itertools.combinations(placements, 2):
        if not _overlap_free(model, existing):
            with pytest.raises(ValueError, match="overlaps"):
                can_place(model, list(existing), names[0])
            continue
        for n in names:
            want = [s for s in profiles_for(model)[n].starts if _overlap_free(model, [*existing, (n, s)])]
            assert free_starts(model, list(existing), n) == tuple(want)
            assert can_place(model, list(existing), n) == (want[0] if want else None)


def test_mig_instance_objects_accepted():
    assert can_place(A40, [MigInstance("4g.20gb", 0)], "2g.10gb") == 4


@pytest.mark.parametrize(
    "product,memory,expected",
    [
        ("NVIDIA-A100-SXM4-40GB", 0, "A100-40GB"),
        ("NVIDIA-A100-PCIE-40GB", 0, "A100-40GB"),
        ("A100-SXM4-40GB", 0, "A100-40GB"),
        ("NVIDIA-A100-SXM4-80GB", 0, "A100-80GB"),
        ("NVIDIA-A100-80GB-PCIe", 0, "A100-80GB"),
        ("NVIDIA-A100-SXM", 81920, "A100-80GB"),
        ("NVIDIA-A100-SXM", 40960, "A100-40GB"),
        ("NVIDIA-A100-SXM", 0, None),
        ("NVIDIA-H100-80GB-HBM3", 81559, "H100-80GB"),
        ("NVIDIA-H100-PCIe", 81559, "H100-80GB"),
        ("NVIDIA-H100-NVL", 95830, None),
        ("Tesla-V100-SXM2-16GB", 16384, None),
        ("", 0, None),
    ],
)
def test_mig_model(product, memory, expected):
    assert mig_model(product, memory) == expected


def test_profiles_for_product_label():
    assert "1g.10gb" in profiles_for("NVIDIA-A100-SXM4-80GB")


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: profiles_for("Tesla-T4"), "no MIG geometry"),
        (lambda: can_place(A40, [], "1g.20gb"), "unknown MIG profile '1g.20gb'"),
        (lambda: can_place(A40, [("9g.1gb", 0)], "1g.5gb"), r"MIG instance \[0\].*unknown profile"),
        (lambda: can_place(A40, [("3g.20gb", 2)], "1g.5gb"), r"3g.20gb cannot start at 2 \(allowed starts: 0, 4\)"),
        (lambda: can_place(A40, [("1g.5gb", 7)], "1g.5gb"), "cannot start at 7"),
        (lambda: can_place(A40, [("4g.20gb", 0), ("2g.10gb", 2)], "1g.5gb"), r"\[1\].*overlaps"),
    ],
    ids=["no-geometry", "unknown-profile", "unknown-existing", "bad-start", "start-7", "overlap"],
)
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_instance_type():
    with pytest.raises(TypeError, match="expected MigInstance"):
        can_place(A40, ["1g.5gb"], "1g.5gb")
