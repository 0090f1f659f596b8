"""Numerical checks of derivatives and tolerances per dtype (mirrors `jax.test_util`).

`check_grads` compares forward mode against central finite differences, and reverse mode
against them by the dot-product test `<u, J v> == <J^T u, v>`, recursively up to the
requested order.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.transforms.autodiff import jvp, vjp
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.tree_util import tree_flatten, tree_map

# Relative/absolute tolerance of a derivative check, by the dtype of the computation: finite
# differences in float64 lose about half the digits, so 1e-5 leaves a wide margin.
GRAD_TOLERANCE = {
    np.dtype(np.float64): 1e-5, np.dtype(np.complex128): 1e-5,
    np.dtype(np.float32): 2e-2, np.dtype(np.complex64): 2e-2,
    np.dtype(np.float16): 1e-1, np.dtype(dtypes.bfloat16): 1e-1,
}
# Step of the central differences, by dtype: near the cube root of the machine epsilon.
FINITE_DIFFERENCE_STEP = {
    np.dtype(np.float64): 1e-4, np.dtype(np.complex128): 1e-4,
    np.dtype(np.float32): 1e-2, np.dtype(np.complex64): 1e-2,
    np.dtype(np.float16): 1e-1, np.dtype(dtypes.bfloat16): 1e-1,
}

# Value tolerance of a comparison with a reference, by dtype: a few ulps of accumulated error.
VALUE_TOLERANCE = {
    np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.int16): 0,
    np.dtype(np.int32): 0, np.dtype(np.int64): 0, np.dtype(np.uint8): 0,
    np.dtype(np.uint16): 0, np.dtype(np.uint32): 0, np.dtype(np.uint64): 0,
    np.dtype(np.float16): 1e-3, np.dtype(dtypes.bfloat16): 1e-2,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}


def tolerance(dtype: Any, table: dict = VALUE_TOLERANCE) -> float:
    return table[np.dtype(dtype)]


def _computation_dtype(args: Sequence[Any]) -> np.dtype:
    """The least precise inexact dtype jaxlite computes the arguments in.

    Canonical dtypes, not numpy's: with x64 off a Python float or a float64 array is
    computed in float32, and must be checked with float32's step and tolerance.
    """
    inexact = [d for d in (get_aval(x).dtype for x in tree_flatten(args)[0])
               if dtypes.is_inexact(d)]
    if not inexact:
        return dtypes.default_float_dtype()
    return max(inexact, key=lambda d: GRAD_TOLERANCE[np.dtype(d)])


def _random_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    value = np.asarray(x)
    out = rng.standard_normal(value.shape)
    if np.iscomplexobj(value):
        out = out + 1j * rng.standard_normal(value.shape)
    return out.astype(value.dtype)


def _pairing(xs: Sequence[Any], ys: Sequence[Any]) -> float:
    """The real part of the bilinear pairing sum(x * y), without conjugation.

    Transposes in JAX are linear, not conjugate-linear; a real input's cotangent keeps the
    real part, so real parts are what the dot-product test can compare in every case.
    """
    return float(sum(np.real(np.sum(np.asarray(x, np.complex128) * np.asarray(y, np.complex128)))
                     for x, y in zip(xs, ys)))


def _assert_close(actual: Any, expected: Any, tol: float, what: str) -> None:
    a_leaves = tree_flatten(actual)[0]
    e_leaves = tree_flatten(expected)[0]
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a, np.complex128), np.asarray(e, np.complex128),
                                   rtol=tol, atol=tol, err_msg=what)


def _numerical_jvp(f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any],
                   step: float) -> Any:
    """J v by central differences along the direction `tangents`."""
    plus = f(*tree_map(lambda x, t: np.asarray(x) + step * t, tuple(args), tuple(tangents)))
    minus = f(*tree_map(lambda x, t: np.asarray(x) - step * t, tuple(args), tuple(tangents)))
    return tree_map(lambda p, m: (np.asarray(p, np.complex128) - np.asarray(m, np.complex128))
                    / (2 * step), plus, minus)


def _check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
               rng: np.random.Generator, tol: float, step: float, err_msg: str = "") -> None:
    """`f_jvp` (primals, tangents) -> (outputs, tangents) against central finite
    differences of `f` along a random direction."""
    tangents = tree_map(lambda x: _random_like(rng, x), tuple(args))
    out, tangent_out = f_jvp(tuple(args), tangents)
    _assert_close(out, f(*args), tol, err_msg or "jvp primal output differs from f")
    numeric = _numerical_jvp(f, args, tangents, step)
    _assert_close(tangent_out, numeric, tol, err_msg or "jvp differs from finite differences")


def _check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
               rng: np.random.Generator, tol: float, step: float, err_msg: str = "") -> None:
    """Reverse mode against finite differences: `<u, J v>` must equal `<J^T u, v>`.

    `J v` comes from finite differences, not from `jvp`, so that functions with only a
    reverse-mode rule (`custom_vjp`) can be checked too.
    """
    tangents = tree_map(lambda x: _random_like(rng, x), tuple(args))
    out, pullback = f_vjp(*args)
    _assert_close(out, f(*args), tol, err_msg or "vjp primal output differs from f")
    cotangent = tree_map(lambda o: _random_like(rng, o), out)
    cotangents_in = pullback(cotangent)
    numeric = _numerical_jvp(f, args, tangents, step)
    forward = _pairing(tree_flatten(cotangent)[0], tree_flatten(numeric)[0])
    backward = _pairing(tree_flatten(cotangents_in)[0], tree_flatten(tangents)[0])
    scale = max(1.0, abs(forward))
    if abs(forward - backward) > tol * scale:
        raise AssertionError(f"{err_msg + ': ' if err_msg else ''}vjp is not the transpose "
                             f"of the derivative: <u, J v> = {forward} (finite differences), "
                             f"<J^T u, v> = {backward} (tolerance {tol * scale})")


def _tolerances(args: Sequence[Any], atol: float | None, rtol: float | None,
                eps: float | None) -> tuple[float, float]:
    dtype = _computation_dtype(args)
    tol = atol if atol is not None else rtol if rtol is not None else GRAD_TOLERANCE[dtype]
    return tol, eps if eps is not None else FINITE_DIFFERENCE_STEP[dtype]


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None, eps: float = 1e-4,
              err_msg: str = "") -> None:
    """Check a forward-mode function `f_jvp(primals, tangents) -> (out, tangent_out)`
    (such as `partial(jax.jvp, f)`) against finite differences of `f` at `args` (mirrors
    `jax.test_util.check_jvp`)."""
    tol, step = _tolerances(args, atol, rtol, eps)
    _check_jvp(f, f_jvp, args, np.random.default_rng(0), tol, step, err_msg)


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None, eps: float = 1e-4,
              err_msg: str = "") -> None:
    """Check a reverse-mode function `f_vjp(*args) -> (out, pullback)` (such as
    `partial(jax.vjp, f)`) against finite differences of `f` (mirrors
    `jax.test_util.check_vjp`)."""
    tol, step = _tolerances(args, atol, rtol, eps)
    _check_vjp(f, f_vjp, args, np.random.default_rng(0), tol, step, err_msg)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None,
                seed: int = 0) -> None:
    """Check derivatives of `f` at `args` up to `order` (mirrors `jax.test_util.check_grads`).

    Parameters
    ----------
    f : function of the arrays `args`.
    args : the point (use float64 with `jax_enable_x64` on for tight checks).
    order : highest derivative order to check.
    modes : "fwd" checks jvp, "rev" checks vjp, both against finite differences.
    atol, rtol : tolerance (default from the dtype; rtol is folded into atol).
    eps : finite-difference step (default from the dtype).
    """
    rng = np.random.default_rng(seed)
    tol, step = _tolerances(args, atol, rtol, eps)

    def check(fun: Callable[..., Any], at: Sequence[Any], remaining: int) -> None:
        if "fwd" in modes:
            _check_jvp(fun, lambda p, t: jvp(fun, p, t), at, rng, tol, step)
        if "rev" in modes:
            _check_vjp(fun, lambda *a: vjp(fun, *a), at, rng, tol, step)
        if remaining <= 1:
            return
        if "fwd" in modes:
            direction = tree_map(lambda x: _random_like(rng, x), tuple(at))
            check(lambda *a: jvp(fun, a, direction)[1], at, remaining - 1)
        if "rev" in modes:
            cotangent = tree_map(lambda o: _random_like(rng, o), fun(*at))
            check(lambda *a: vjp(fun, *a)[1](cotangent), at, remaining - 1)
    check(f, args, order)
