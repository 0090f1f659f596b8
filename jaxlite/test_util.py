"""Numerical checks of derivatives and tolerances per dtype (mirrors `jax.test_util`).

`check_grads` follows JAX's procedure, so that a check passes or fails as it does under JAX:
forward mode against central finite differences (step `eps`, 1e-4) along one random
direction, and reverse mode by the dot-product test `<u, J v> == <J^T u, v>` with `J v` from
finite differences; directions come from `np.random.RandomState(0)` as JAX's do. Higher
orders check `jvp(f)` at `(args, args)` and `vjp(f)` pulled back along its own output.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.transforms.autodiff import jvp, linearize, vjp
from jaxlite.core import dtypes
from jaxlite.tree_util import tree_map, tree_reduce

# Default relative and absolute tolerance of a derivative check, by dtype (JAX's values).
GRAD_TOLERANCE = {
    np.dtype(np.float64): 1e-5, np.dtype(np.complex128): 1e-5,
    np.dtype(np.float32): 2e-3, np.dtype(np.complex64): 1e-3,
    np.dtype(np.float16): 1e-2, np.dtype(dtypes.bfloat16): 1e-1,
}
# JAX's default finite-difference step, for every dtype.
EPS = 1e-4

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


def _dtype(x: Any) -> np.dtype:
    """The dtype jaxlite computes `x` in (float64 is float32 with x64 off)."""
    return dtypes.dtype(x, canonicalize=True)


def _keep_type(op: Callable[..., Any]) -> Callable[..., Any]:
    """`op` on leaves, its result cast back to the first leaf's computation dtype; Python
    scalars stay Python scalars (so that `f` sees the argument types it was given)."""
    def leaf_op(*xs: Any) -> Any:
        out = np.array(op(*xs), dtype=_dtype(xs[0]))
        return out.item() if all(dtypes.is_python_scalar(x) for x in xs) else out
    return functools.partial(tree_map, leaf_op)


_add = _keep_type(lambda x, y: np.add(x, y))
_sub = _keep_type(lambda x, y: np.subtract(x, y))
_conj = _keep_type(lambda x: np.conj(x))


def _scale(xs: Any, a: float) -> Any:
    def leaf(x: Any) -> Any:
        dt = _dtype(x)
        out = np.multiply(np.asarray(x, dt), np.array(a, dt), dtype=dt)
        return out.item() if dtypes.is_python_scalar(x) else out
    return tree_map(leaf, xs)


def _difference(xs: Any, ys: Any) -> Any:
    """xs - ys in xs's dtype, with equal values (inf and inf too) giving exactly 0."""
    def leaf(x: Any, y: Any) -> np.ndarray:
        dt = _dtype(x)
        x, y = np.asarray(x), np.asarray(y)
        with np.errstate(invalid="ignore"):
            return np.where(x == y, np.array(0, dt), np.subtract(x, y, dtype=dt))
    return tree_map(leaf, xs, ys)


def _random_like(rng: np.random.RandomState, x: Any) -> Any:
    """Standard normal values of `x`'s shape and computation dtype (complex: both parts)."""
    dt = _dtype(x)
    out = np.asarray(rng.randn(*np.shape(x)), dtype=dt)
    if dtypes.issubdtype(dt, np.complexfloating):
        out = out + dt.type(1j) * np.asarray(rng.randn(*np.shape(x)), dtype=dt)
    return out.item() if dtypes.is_python_scalar(x) else out


def _numerical_jvp(f: Callable[..., Any], primals: Any, tangents: Any, eps: float) -> Any:
    """J v by central differences of step `eps` along `tangents`, in the inputs' dtypes."""
    delta = _scale(tangents, eps)
    above, below = f(*_add(primals, delta)), f(*_sub(primals, delta))
    return _scale(_difference(above, below), 0.5 / eps)


def _inner_product(xs: Any, ys: Any) -> Any:
    """The real part of sum(conj(x) * y) over all leaves."""
    def leaf(x: Any, y: Any) -> Any:
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return tree_reduce(np.add, tree_map(leaf, xs, ys))


def _merged(tol: Any) -> Any:
    """A tolerance argument as JAX reads it: None is the default table, a dict overrides
    entries of it, a number applies to every dtype."""
    if tol is None:
        return GRAD_TOLERANCE
    if not isinstance(tol, dict):
        return tol
    return {**GRAD_TOLERANCE, **{np.dtype(k): v for k, v in tol.items()}}


def _tolerance_for(dtype: np.dtype, tol: Any) -> float:
    if not isinstance(tol, dict):
        return tol
    dtype = dtypes.canonicalize_dtype(dtype)
    return tol.get(dtype, VALUE_TOLERANCE.get(dtype, 0))


def _as_numpy(x: Any) -> np.ndarray:
    value = np.asarray(x)
    if value.dtype.kind == "V" and value.dtype != dtypes.float0:
        return value.astype(np.float32)  # ml_dtypes' types: numpy's testing cannot compare
    return value


def _check_close(actual: Any, expected: Any, atol: Any, rtol: Any, what: str) -> None:
    """assert_allclose leaf by leaf, the tolerances scaled by the leaf's size as in JAX."""
    def leaf(a: Any, b: Any) -> None:
        a, b = _as_numpy(a), _as_numpy(b)
        assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape} differ"
        if a.dtype == b.dtype == dtypes.float0:
            np.testing.assert_array_equal(a, b, err_msg=what)
            return
        a_tol = max(_tolerance_for(a.dtype, atol), _tolerance_for(b.dtype, atol)) * a.size
        r_tol = max(_tolerance_for(a.dtype, rtol), _tolerance_for(b.dtype, rtol)) * b.size
        kwargs = {k: v for k, v in (("atol", a_tol), ("rtol", r_tol)) if v}
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(a, b, err_msg=what, **kwargs)
    tree_map(leaf, actual, expected)


def _check_dtypes_match(xs: Any, ys: Any, what: str) -> None:
    def leaf(x: Any, y: Any) -> None:
        assert _dtype(x) == _dtype(y), f"{what}: dtypes {_dtype(x)} and {_dtype(y)} differ"
    tree_map(leaf, xs, ys)


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
              atol: Any = None, rtol: Any = None, eps: float = EPS,
              err_msg: str = "") -> None:
    """Check a forward-mode function `f_jvp(primals, tangents) -> (out, tangent_out)`
    (such as `partial(jax.jvp, f)`) against finite differences of `f` at `args`, along one
    random direction (mirrors `jax.test_util.check_jvp`)."""
    atol, rtol = _merged(atol), _merged(rtol)
    rng = np.random.RandomState(0)
    tangents = tree_map(functools.partial(_random_like, rng), args)
    out, tangent_out = f_jvp(args, tangents)
    _check_dtypes_match(out, tangent_out, "jvp output and tangent")
    expected = f(*args)
    _check_dtypes_match(out, expected, "jvp output and f")
    numeric = _numerical_jvp(f, args, tangents, eps)
    prefix = f"{err_msg} " if err_msg else ""
    _check_close(out, expected, atol, rtol, f"{prefix}primal")
    _check_close(tangent_out, numeric, atol, rtol,
                 f"{prefix}tangent (the jvp differs from finite differences)")


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
              atol: Any = None, rtol: Any = None, eps: float = EPS,
              err_msg: str = "") -> None:
    """Check a reverse-mode function `f_vjp(*args) -> (out, pullback)` (such as
    `partial(jax.vjp, f)`) by the dot-product test `<u, J v> == <J^T u, v>`, with `J v`
    from finite differences of `f` (mirrors `jax.test_util.check_vjp`)."""
    atol, rtol = _merged(atol), _merged(rtol)
    rng = np.random.RandomState(0)
    out, pullback = f_vjp(*args)
    prefix = f"{err_msg} " if err_msg else ""
    _check_close(out, f(*args), atol, rtol, f"{prefix}primal")
    tangents = tree_map(functools.partial(_random_like, rng), args)
    numeric = _numerical_jvp(f, args, tangents, eps)
    cotangent = tree_map(functools.partial(_random_like, rng), out)
    pulled_back = _conj(pullback(_conj(cotangent)))
    _check_close(_inner_product(tangents, pulled_back), _inner_product(numeric, cotangent),
                 atol, rtol, f"{prefix}cotangent projection (the vjp is not the transpose "
                 "of the derivative: <J^T u, v> against <u, J v> by finite differences)")


def _jvp_by_linearize(f: Callable[..., Any], primals: Any, tangents: Any) -> Any:
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: Any = None,
                rtol: Any = None, eps: float | None = None) -> None:
    """Check derivatives of `f` at `args` up to `order` against finite differences
    (mirrors `jax.test_util.check_grads`).

    modes: "fwd" checks `jvp`, "rev" checks `vjp`, "lin" checks `linearize`.
    atol, rtol: a number, or a dict by dtype over the default table (float32 2e-3,
    float64 1e-5), scaled by each output's size as JAX does.
    eps: the finite-difference step (default 1e-4, also in float32: use float64 with
    `jax_enable_x64` for tight checks).
    """
    eps = eps or EPS

    def check(fun: Callable[..., Any], at: tuple, remaining: int, name: str) -> None:
        def label(mode: str) -> str:
            return f"{mode} of {name}" if name else mode
        if "fwd" in modes:
            check_jvp(fun, functools.partial(jvp, fun), at, atol, rtol, eps, label("JVP"))
            if remaining > 1:
                check(functools.partial(jvp, fun), (at, at), remaining - 1, label("JVP"))
        if "rev" in modes:
            check_vjp(fun, functools.partial(vjp, fun), at, atol, rtol, eps, label("VJP"))
            if remaining > 1:
                def pulled_back_along_output(*a: Any) -> Any:
                    out, pullback = vjp(fun, *a)
                    return pullback(out)
                check(pulled_back_along_output, at, remaining - 1, label("VJP"))
        if "lin" in modes:
            lin = functools.partial(_jvp_by_linearize, fun)
            check_jvp(fun, lin, at, atol, rtol, eps, label("LIN"))
            if remaining > 1:
                check(lin, (at, at), remaining - 1, label("LIN"))
    check(f, tuple(args), order, "")
