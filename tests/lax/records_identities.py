"""Test records of identities.py: copy, stage, device_put, optimization_barrier and
dce_sink give their operands back (every dtype, one or several operands)."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxlite import devices, lax
from jaxlite.sharding import SingleDeviceSharding
from records import Case, Record, standard_values

ALL = (np.bool_, np.int8, np.int32, np.uint32, np.float16, np.dtype(ml_dtypes.bfloat16),
       np.float32, np.complex64)


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3))))


def _single(primitive: Any) -> Any:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        return Case(lambda x: primitive.bind(x), lambda x: x,
                    [standard_values(rng, _shape(rng), dtype)])
    return make_case


def _several(bind: Any) -> Any:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        count = int(rng.integers(1, 4))
        args = [standard_values(rng, _shape(rng), dtype) for _ in range(count)]
        return Case(lambda *xs: list(bind(*xs)), lambda *xs: list(xs), args)
    return make_case


def _device_put(*xs: Any) -> Any:
    n = len(xs)
    return lax.device_put_p.bind(*xs, devices=(None,) * n, srcs=(None,) * n,
                                 copy_semantics=("REUSE_INPUT",) * n)


def _dce_sink_case(rng: np.random.Generator, dtype: Any) -> Case:
    # The sink has no result: the function checks that the value around it is unchanged.
    def fun(x):
        lax.dce_sink(x)
        return lax.stage(x)
    return Case(fun, lambda x: x, [standard_values(rng, _shape(rng), dtype)])


def _sharding_constraint_case(rng: np.random.Generator, dtype: Any) -> Case:
    # On one device a sharding constraint is an identity that only checks the placement.
    sharding = SingleDeviceSharding(devices()[0])
    return Case(lambda x: lax.with_sharding_constraint(x, sharding), lambda x: x,
                [standard_values(rng, _shape(rng), dtype)])


RECORDS = [
    Record("copy", _single(lax.copy_p), dtypes=ALL),
    Record("stage", _single(lax.stage_p), dtypes=ALL),
    Record("device_put", _several(_device_put), dtypes=ALL),
    Record("optimization_barrier", _several(lambda *xs: lax.optimization_barrier(xs)),
           dtypes=ALL),
    Record("dce_sink", _dce_sink_case, dtypes=ALL),
    Record("sharding_constraint", _sharding_constraint_case, dtypes=ALL),
]
