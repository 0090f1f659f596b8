"""jaxlite kernels that XLA has no call for, printed as the standard ops JAX emits for the
same function (so real XLA runs them, and the reader reads them back as those ops):

- `jaxlite_fma_f64` (the exact float64 multiply-add that jax.random's formulas need):
  `multiply` then `add`, as JAX writes `a * b + c`; XLA:CPU contracts the pair into one
  fused instruction, which is where JAX's fused rounding comes from.
- `jaxlite_lapack_symmetric_product`: alpha a a^T + beta c with `dot_general`, as JAX
  lowers it on the cpu.
- `jaxlite_lapack_cholesky_update`: the kernel's Givens rotations, one per row, in a
  `stablehlo.while` over the row index (leading batch dimensions ride along).
- `jaxlite_special_gamma` / `beta` / `poch` / `binom` of real operands (`special_gamma.py`)
  `igamma` / `igammac` (`special_igamma.py`), `regularized_incomplete_beta`
  (`special_betainc.py`), `erfcx` and `bessel_i0e` (`special_error.py`) and `expi`
  (`special_expint.py`), `spence` (`special_spence.py`),
  `expn` (`special_expn.py`), `sici_si` / `sici_ci` and `fresnel_s` / `fresnel_c`
  (`special_sici.py`), `igamma_grad_a` and `random_gamma_grad`
  (`special_igamma_grad.py`), `bessel_jv` of orders |v| <= 100 (`special_bessel_jv.py`),
  `hyp1f1` and its parameter derivatives `hyp1f1_da` / `hyp1f1_db` (`special_hyp1f1.py`),
  `hyp2f1` and its parameter derivatives `hyp2f1_da` / `_db` / `_dc`
  (`special_hyp2f1.py`, `special_hyp2f1_grad.py`), `dawsn` and `wofz`
  (`special_dawson.py`), `owens_t` (`special_owens_t.py`), `loggamma_complex` and
  `digamma_complex` (`special_complex_gamma.py`, complex parts as float64 pairs by
  `complex_pairs.py`).

`kernel_expansion(target)` gives the rule, or None.
"""
from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_bessel_jv import JV_EXPANSIONS
from jaxlite.xla.stablehlo.special_betainc import BETAINC_EXPANSIONS
from jaxlite.xla.stablehlo.special_complex_gamma import COMPLEX_GAMMA_EXPANSIONS
from jaxlite.xla.stablehlo.special_dawson import DAWSON_EXPANSIONS
from jaxlite.xla.stablehlo.special_error import ERROR_EXPANSIONS
from jaxlite.xla.stablehlo.special_expint import EXPINT_EXPANSIONS
from jaxlite.xla.stablehlo.special_expn import EXPN_EXPANSIONS
from jaxlite.xla.stablehlo.special_gamma import GAMMA_EXPANSIONS
from jaxlite.xla.stablehlo.special_hyp2f1 import HYP2F1_EXPANSIONS
from jaxlite.xla.stablehlo.special_hyp1f1 import HYP1F1_EXPANSIONS
from jaxlite.xla.stablehlo.special_igamma import IGAMMA_EXPANSIONS
from jaxlite.xla.stablehlo.special_igamma_grad import IGAMMA_GRAD_EXPANSIONS
from jaxlite.xla.stablehlo.special_owens_t import OWENS_T_EXPANSIONS
from jaxlite.xla.stablehlo.special_sici import SICI_EXPANSIONS
from jaxlite.xla.stablehlo.special_spence import SPENCE_EXPANSIONS

__all__ = ["EXPANSIONS", "kernel_expansion"]

binary, splat = L.binary, L.splat


def _fma(w: FunctionWriter, inst: HloInstruction, operands: list[str],
         config: dict) -> Leaves:
    a, b, c = operands
    return [binary(w, "add", binary(w, "multiply", a, b), c)]


def _symmetric_product(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                       config: dict) -> Leaves:
    a, c = operands
    shape, out = L.shape_of(w, a), L.shape_of(w, c)
    batch = list(range(shape.rank - 2))
    transposed = shape.with_dims(shape.dims[:-2] + shape.dims[::-1][:2])
    a_t = w.generic("stablehlo.transpose", [a], [transposed],
                    {"permutation": T.i64_array(batch + [shape.rank - 1, shape.rank - 2])})[0]
    numbers = T.struct_attr("dot", [
        ("lhs_batching_dimensions", batch), ("rhs_batching_dimensions", batch),
        ("lhs_contracting_dimensions", [shape.rank - 1]),
        ("rhs_contracting_dimensions", [shape.rank - 2])])
    product = w.generic("stablehlo.dot_general", [a, a_t], [out],
                        {"dot_dimension_numbers": numbers})[0]
    scaled = binary(w, "multiply", splat(w, config["alpha"], out), product)
    return [binary(w, "add", scaled, binary(w, "multiply", splat(w, config["beta"], out), c))]


def _slice_at(w: FunctionWriter, value: str, k: str, axis: int, sizes: Sequence[int]) -> str:
    """value[..., k, ...] (index k on `axis`, whole elsewhere) with that axis dropped."""
    shape = L.shape_of(w, value)
    zero = L.scalar(w, 0, np.int32)
    starts = [k if d == axis else zero for d in range(shape.rank)]
    window = shape.with_dims(tuple(1 if d == axis else n for d, n in enumerate(shape.dims)))
    part = w.generic("stablehlo.dynamic_slice", [value] + starts, [window],
                     {"slice_sizes": T.i64_array(window.dims)})[0]
    return w.generic("stablehlo.reshape", [part], [shape.with_dims(tuple(sizes))])[0]


def _givens(w: FunctionWriter, state: Leaves) -> Leaves:
    """One step of the cholesky_update loop: rotate row k of r against w."""
    k, r, v = state
    shape = L.shape_of(w, r)
    batch, n = shape.dims[:-2], shape.dims[-1]
    row = _slice_at(w, r, k, shape.rank - 2, batch + (n,))
    x = _slice_at(w, row, k, shape.rank - 2, batch)
    y = _slice_at(w, v, k, shape.rank - 2, batch)
    radius = w.same_type("stablehlo.sqrt", [binary(w, "add", binary(w, "multiply", x, x),
                                                  binary(w, "multiply", y, y))],
                         L.shape_of(w, x))[0]
    zero = L.compare(w, y, splat(w, 0, L.shape_of(w, y)), "EQ", "FLOAT")
    safe = L.select(w, zero, splat(w, 1, L.shape_of(w, y)), radius)
    cos = L.select(w, zero, splat(w, 1, L.shape_of(w, y)), binary(w, "divide", x, safe))
    sin = L.select(w, zero, splat(w, 0, L.shape_of(w, y)), binary(w, "divide", y, safe))
    along = L.shape_of(w, row)
    cos, sin = (L.broadcast(w, t, along, range(len(batch))) for t in (cos, sin))
    new_row = binary(w, "add", binary(w, "multiply", cos, row), binary(w, "multiply", sin, v))
    new_v = binary(w, "subtract", binary(w, "multiply", cos, v), binary(w, "multiply", sin, row))
    as_row = w.generic("stablehlo.reshape", [new_row],
                       [shape.with_dims(batch + (1, n))])[0]
    zero_index = L.scalar(w, 0, np.int32)
    starts = [zero_index] * len(batch) + [k, zero_index]
    new_r = w.generic("stablehlo.dynamic_update_slice", [r, as_row] + starts, [shape])[0]
    next_k = w.same_type("stablehlo.add", [k, L.scalar(w, 1, np.int32)], Shape(np.int32, ()))
    return next_k + [new_r, new_v]


def _cholesky_update(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                     config: dict) -> Leaves:
    r, v = operands
    shape, vector = L.shape_of(w, r), L.shape_of(w, v)
    index = Shape(np.int32, ())
    state = [index, shape, vector]

    def condition(values: Leaves) -> Leaves:
        return [L.compare(w, values[0], L.scalar(w, shape.dims[-1], np.int32), "LT",
                          "SIGNED")]
    return w.generic("stablehlo.while", [L.scalar(w, 0, np.int32), r, v], state, None,
                     [w.block(state, condition),
                      w.block(state, lambda values: _givens(w, values))])[1:2]


EXPANSIONS: dict[str, L.KernelRule] = {
    **GAMMA_EXPANSIONS, **IGAMMA_EXPANSIONS, **BETAINC_EXPANSIONS, **ERROR_EXPANSIONS,
    **EXPINT_EXPANSIONS, **SPENCE_EXPANSIONS, **EXPN_EXPANSIONS,
    **SICI_EXPANSIONS, **IGAMMA_GRAD_EXPANSIONS, **JV_EXPANSIONS, **DAWSON_EXPANSIONS,
    **OWENS_T_EXPANSIONS, **COMPLEX_GAMMA_EXPANSIONS,
    **HYP1F1_EXPANSIONS, **HYP2F1_EXPANSIONS,
    "jaxlite_fma_f64": _fma,
    "jaxlite_lapack_symmetric_product": _symmetric_product,
    "jaxlite_lapack_cholesky_update": _cholesky_update,
}


def kernel_expansion(target: str) -> Callable[..., "Leaves | None"] | None:
    """The rule printing custom call `target` as standard ops, if there is one; the rule
    returns None, having printed nothing, for operands it has no form for."""
    rule = EXPANSIONS.get(target)
    if rule is None:
        return None

    def expand(w: FunctionWriter, inst: HloInstruction, operands: list) -> Leaves | None:
        return rule(w, inst, operands, json.loads(inst.attr("backend_config") or "{}"))
    return expand
