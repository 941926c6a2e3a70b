"""``vcore simulate --trace-dir``: argument wiring, seeds, JSON output, plot, parallel workers, clear errors."""

from __future__ import annotations

import argparse
import json

import pytest

from tests.sim.gpu.conftest import write
from vcore.sim.gpu.cli import add_trace_arguments, parse_seeds, run_trace

NODES = "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(
    f"n{i:02d},32000,131072,{[2, 4, 8][i % 3]},{'T4' if i % 2 else 'V100'}\n" for i in range(9)
)
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n" + "".join(
    f"p{i},{1000 + 500 * (i % 5)},1024,{[0, 1, 1, 2][i % 4]},{[0, 500, 1000, 1000][i % 4]}\n" for i in range(40)
)


@pytest.fixture()
def trace_dir(tmp_path):
    write(tmp_path, "openb_node_list_gpu_node.csv", NODES)
    write(tmp_path, "openb_pod_list_tiny.csv", PODS)
    return str(tmp_path)


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--json", action="store_true")  # the host command defines --json already
    add_trace_arguments(p)
    return p


def test_parse_seeds():
    assert parse_seeds("42-45") == [42, 43, 44, 45]
    assert parse_seeds("1,3, 5") == [1, 3, 5]
    assert parse_seeds("1-2,7") == [1, 2, 7]
    for bad in ("x", "5-1", "", "1-"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)


def test_json_output(trace_dir, capsys, gpu_native):
    args = parser().parse_args(
        [
            "--trace-dir",
            trace_dir,
            "--workload",
            "tiny",
            "--policy",
            "fgd",
            "--policy",
            "BestFit",
            "--seeds",
            "1-2",
            "--json",
            "--jobs",
            "1",
        ]
    )
    assert run_trace(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["policies"]) == {"fgd", "best-fit"}
    fgd = out["policies"]["fgd"]
    assert set(fgd["seeds"]) == {"1", "2"}
    assert len(fgd["mean"]["alloc_ratio"]) == 131 and len(fgd["mean"]["frag_ratio"]) == 131
    assert out["percents"][0] == 0 and out["percents"][-1] == 130
    finals = [r["alloc_ratio_final"] for r in fgd["seeds"].values()]
    assert fgd["mean"]["alloc_ratio_final"] == pytest.approx(sum(finals) / 2)


def test_parallel_workers_and_plot(trace_dir, tmp_path, capsys, gpu_native):
    png = tmp_path / "curves.png"
    args = parser().parse_args(
        [
            "--trace-dir",
            trace_dir,
            "--workload",
            "tiny",
            "--policy",
            "fgd",
            "--policy",
            "vcore",
            "--seeds",
            "1-3",
            "--jobs",
            "2",
            "--plot",
            str(png),
        ]
    )
    assert run_trace(args) == 0
    text = capsys.readouterr().out
    assert "fgd" in text and "vcore" in text and "alloc@130%" in text
    assert png.stat().st_size > 1000
    # the same runs in one process give the same numbers (deterministic, order-independent)
    a = parser().parse_args(
        ["--trace-dir", trace_dir, "--workload", "tiny", "--policy", "vcore", "--seeds", "1-3", "--jobs", "1", "--json"]
    )
    run_trace(a)
    single = json.loads(capsys.readouterr().out)
    b = parser().parse_args(
        ["--trace-dir", trace_dir, "--workload", "tiny", "--policy", "vcore", "--seeds", "1-3", "--jobs", "2", "--json"]
    )
    run_trace(b)
    multi = json.loads(capsys.readouterr().out)
    assert single["policies"]["vcore"]["mean"]["alloc_ratio"] == multi["policies"]["vcore"]["mean"]["alloc_ratio"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--workload", "nothere"], "workload 'nothere' not found"),
        (["--policy", "nope"], "unknown GPU policy 'nope'"),
        (["--seeds", "9-1"], "--seeds: bad seed or range"),
    ],
)
def test_errors_are_one_line(trace_dir, capsys, argv, message):
    args = parser().parse_args(["--trace-dir", trace_dir, "--workload", "tiny", *argv])
    assert run_trace(args) == 2
    assert message in capsys.readouterr().err


def test_without_trace_dir(capsys):
    args = parser().parse_args([])
    assert args.trace_dir is None
    assert run_trace(args) == 2
    assert "--trace-dir is required" in capsys.readouterr().err
