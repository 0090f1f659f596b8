"""The collectives' group modes against real XLA: each program, printed as StableHLO and
compiled by jaxlib for replicas x partitions of forced host devices (collectives_runner.py
in a subprocess), gives every device what evaluate_spmd gives it.

This is where the meaning of replica groups with and without `channel_id` and
`use_global_device_ids` (collectives.py) is checked. Skips when no python with jax is found:
set JAXLITE_JAX_PYTHON, or have /tmp/jaxvenv.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxlite.xla import stablehlo
from jaxlite.xla.evaluator_spmd import evaluate_spmd
from jaxlite.xla.verifier import verify_module

from tests.xla.collective_programs import program

sys.path.insert(0, str(Path(__file__).parent))
from stablehlo_xla import jax_python_or_skip  # noqa: E402

RUNNER = Path(__file__).parent / "collectives_runner.py"
CHANNEL = "channel_id=1"
GLOBAL = "channel_id=1, use_global_device_ids=true"

# name: (collective line, operand, result, reducer, replicas, partitions)
CASES = {
    "all_reduce_cross_replica": (
        "all-reduce(%x), replica_groups={{0,1}}, to_apply=%add_fn", "f32[2]", "f32[2]", "add",
        2, 2),
    "all_reduce_replicas_and_partitions": (
        f"all-reduce(%x), {CHANNEL}, replica_groups={{{{0}},{{1}}}}, to_apply=%add_fn",
        "f32[2]", "f32[2]", "add", 2, 2),
    "all_reduce_flattened": (
        f"all-reduce(%x), {GLOBAL}, replica_groups={{{{0,3}},{{1,2}}}}, to_apply=%max_fn",
        "f32[2]", "f32[2]", "max", 2, 2),
    "all_reduce_every_replica": (
        "all-reduce(%x), replica_groups={}, to_apply=%add_fn", "f32[2]", "f32[2]", "add", 4, 2),
    "all_gather_flattened": (
        f"all-gather(%x), {GLOBAL}, replica_groups={{{{0,2}},{{1,3}}}}, dimensions={{1}}",
        "f32[2,2]", "f32[2,4]", None, 1, 4),
    "all_gather_cross_replica": (
        "all-gather(%x), replica_groups={{1,0},{3,2}}, dimensions={0}", "f32[2,2]", "f32[4,2]",
        None, 4, 1),
    "reduce_scatter_replicas_and_partitions": (
        f"reduce-scatter(%x), {CHANNEL}, replica_groups={{{{0,1}}}}, dimensions={{0}}, "
        f"to_apply=%add_fn", "f32[8]", "f32[2]", "add", 2, 2),
    "all_gather_replicas_and_partitions": (
        f"all-gather(%x), {CHANNEL}, replica_groups={{{{1}},{{0}}}}, dimensions={{0}}",
        "f32[2]", "f32[4]", None, 2, 2),
    "reduce_scatter_flattened": (
        f"reduce-scatter(%x), {GLOBAL}, replica_groups={{{{3,0}},{{2,1}}}}, dimensions={{0}}, "
        f"to_apply=%max_fn", "f32[4]", "f32[2]", "max", 1, 4),
    "all_to_all_cross_partition": (
        f"all-to-all(%x), {CHANNEL}, replica_groups={{{{1,0}}}}, dimensions={{0}}",
        "f32[4]", "f32[4]", None, 2, 2),
    "all_to_all_cross_replica": (
        "all-to-all(%x), replica_groups={{0,1}}, dimensions={0}", "f32[4]", "f32[4]", None,
        2, 2),
    "permute_cross_partition": (
        f"collective-permute(%x), {CHANNEL}, source_target_pairs={{{{0,1}}}}", "f32[2]",
        "f32[2]", None, 2, 2),
    "permute_cross_replica": (
        "collective-permute(%x), source_target_pairs={{1,0},{0,1}}", "f32[2]", "f32[2]", None,
        2, 2),
    "all_reduce_eight_partitions": (
        f"all-reduce(%x), {GLOBAL}, replica_groups={{{{0,4}},{{1,5}},{{2,6}},{{3,7}}}}, "
        f"to_apply=%min_fn", "f32[2]", "f32[2]", "min", 1, 8),
}


def _stablehlo_text(module, replicas: int, partitions: int) -> str:
    text = stablehlo.print_module(module)
    header = "mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32"
    assert header in text
    return text.replace(header, f"mhlo.num_partitions = {partitions} : i32, "
                                f"mhlo.num_replicas = {replicas} : i32")


def _arguments(operand: str, count: int) -> list[np.ndarray]:
    dims = tuple(int(d) for d in operand[4:-1].split(","))
    size = int(np.prod(dims))
    return [(np.arange(size, dtype=np.float32) + 1).reshape(dims) * 10.0 ** d
            for d in range(count)]


@pytest.fixture(scope="module")
def xla_results(tmp_path_factory):
    """Every case run by real XLA at once (one subprocess)."""
    python = jax_python_or_skip()
    folder = tmp_path_factory.mktemp("collectives")
    packed = {}
    for name, (line, operand, result, reducer, replicas, partitions) in CASES.items():
        module = program(line, operand, result, reducer)
        packed[f"{name}/text"] = np.array(_stablehlo_text(module, replicas, partitions))
        packed[f"{name}/replicas"], packed[f"{name}/partitions"] = (np.array(replicas),
                                                                   np.array(partitions))
        for d, arg in enumerate(_arguments(operand, replicas * partitions)):
            packed[f"{name}/dev{d}"] = arg
    np.savez(folder / "cases.npz", **packed)
    done = subprocess.run([python, str(RUNNER), str(folder / "cases.npz"),
                           str(folder / "out.npz")], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(np.load(folder / "out.npz"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_device_gets_what_xla_gives_it(name, xla_results):
    line, operand, result, reducer, replicas, partitions = CASES[name]
    assert f"{name}/error" not in xla_results, str(xla_results.get(f"{name}/error"))
    module = program(line, operand, result, reducer)
    verify_module(module)
    count = replicas * partitions
    args = _arguments(operand, count)
    ours = evaluate_spmd(module, [[a] for a in args], count, num_replicas=replicas)
    for d in range(count):
        np.testing.assert_array_equal(ours[d], xla_results[f"{name}/out{d}"],
                                      err_msg=f"{name}, device {d}")
