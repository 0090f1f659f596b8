"""Checking a partitioned module against its unpartitioned original: each partition's block
of random arguments in, each partition's block of the evaluator's result out.

Blocks of unevenly cut values are padded to the tile shape with NaN (floats) or a large
integer, so that a partitioned program that lets padding leak into a result fails.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.evaluator_spmd import evaluate_spmd
from jaxlite.xla.hlo_sharding import HloSharding
from jaxlite.xla.ir import HloModule
from jaxlite.xla.passes.spmd_partitioner import partition_module
from jaxlite.xla.shape import Shape
from jaxlite.xla.text import print_module
from jaxlite.xla.verifier import verify_module

KINDS = ("all-reduce", "all-gather", "all-to-all", "reduce-scatter", "collective-permute")


def count_collectives(text: str) -> dict[str, int]:
    """Collectives by kind in an HLO text (XLA's async -start forms count once)."""
    return {kind: len(re.findall(rf"\s{kind}(?:-start)?\(", text)) for kind in KINDS}


def block_of(sharding: HloSharding | None, value: np.ndarray, partition: int,
             padded: bool = True) -> np.ndarray:
    """What `partition` holds of `value` under `sharding` (padding filled when `padded`)."""
    if sharding is None or not sharding.is_tiled:
        return value
    block = value[sharding.block_slices(value.shape, partition)]
    if not padded:
        return block
    tile = sharding.tile_shape(value.shape)
    fill = np.nan if value.dtype.kind in "fc" else (True if value.dtype == np.bool_ else 7777)
    widths = [(0, t - s) for t, s in zip(tile, block.shape)]
    return np.pad(block, widths, constant_values=fill)


def _leaves(shape: Shape, sharding: HloSharding | None) -> list[HloSharding | None]:
    count = len(shape.tuple_shapes) if shape.is_tuple else 1
    if sharding is not None and sharding.is_tuple:
        return list(sharding.elements)
    return [sharding] * count


def random_arguments(module: HloModule, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    args = []
    for param in module.entry.parameters:
        dtype, dims = param.shape.dtype, param.shape.dims
        if dtype.kind == "f":
            args.append(rng.standard_normal(dims).astype(dtype))
        elif dtype == np.bool_:
            args.append(rng.integers(0, 2, dims).astype(bool))
        else:
            args.append(rng.integers(-9, 10, dims).astype(dtype))
    return args


def check_partitioned(module: HloModule, num_partitions: int, seed: int = 0,
                      args: Sequence[Any] | None = None, rtol: float = 1e-5,
                      atol: float = 1e-5) -> str:
    """Partition `module`, run both, assert every partition's result block is the
    original's; returns the partitioned module's text."""
    args = random_arguments(module, seed) if args is None else list(args)
    want = evaluate_module(module, args)
    partitioned = partition_module(module, num_partitions)
    verify_module(partitioned)
    assert partitioned.num_partitions == num_partitions
    params = module.entry.parameters
    per_partition = [[block_of(p.attr("sharding"), a, k) for p, a in zip(params, args)]
                     for k in range(num_partitions)]
    got = evaluate_spmd(partitioned, per_partition, num_partitions)
    root = module.entry.root
    wants = list(want) if root.shape.is_tuple else [want]
    for i, sharding in enumerate(_leaves(root.shape, root.attr("sharding"))):
        for k in range(num_partitions):
            mine = got[k][i] if root.shape.is_tuple else got[k]
            expected = block_of(sharding, np.asarray(wants[i]), k, padded=False)
            mine = np.asarray(mine)[tuple(slice(0, s) for s in expected.shape)]
            np.testing.assert_allclose(mine, expected, rtol=rtol, atol=atol,
                                       err_msg=f"result {i}, partition {k}")
    return print_module(partitioned, metadata=False)
