"""The differentiation transformations users call: grad, vjp, jvp, linearize, jacobians.

Mirrors `jax.grad`, `jax.value_and_grad`, `jax.vjp`, `jax.jvp`, `jax.linearize`,
`jax.jacfwd`, `jax.jacrev` and `jax.hessian`. These functions handle pytrees and argument
numbers; the work happens in `interpreters.ad` (linearize) and `interpreters.transpose`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.transforms import api_util as _api_util
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import eval_jaxpr
from jaxlite.core.traceback_filter import api_boundary
from jaxlite.interpreters.ad import Zero, jvp_flat, linearize_flat, tangent_aval
from jaxlite.lax.ad_util import zeros_like_tangent
from jaxlite.lax.convert import _convert_element_type
from jaxlite.transforms.vjp_function import VJP, _Signature, flat_pullback
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_structure, tree_unflatten


def _flat_fun(fun: Callable[..., Any], args: Sequence[Any], argnums: tuple[int, ...],
              in_tree: PyTreeDef, has_aux: bool, out_store: list) -> Callable[..., list]:
    """`fun` as a function of the leaves of the arguments at `argnums`."""
    def flat(*leaves: Any) -> list[Any]:
        diff_args = tree_unflatten(in_tree, leaves)
        full = list(args)
        for n, value in zip(argnums, diff_args):
            full[n] = value
        out = fun(*full)
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("expected function with aux output to return a two-element "
                                f"tuple, but got {_describe_output(out)} (has_aux=True: "
                                "return (output, auxiliary_data)).")
            out, aux = out
        out_leaves, out_tree = tree_flatten(out)
        aux_leaves, aux_tree = tree_flatten(aux)
        out_store[:] = [out_tree, aux_tree, len(out_leaves)]
        return out_leaves + aux_leaves
    return flat


def _describe_output(out: Any) -> str:
    """What a function returned, in the user's terms (an array, not the tracer carrying
    it)."""
    if isinstance(out, (tuple, list)):
        return f"a {type(out).__name__} of {len(out)} element{'s' * (len(out) != 1)}"
    shape, dtype = getattr(out, "shape", None), getattr(out, "dtype", None)
    if shape is not None and dtype is not None:
        return f"a single array of shape {tuple(shape)} and dtype {dtype}"
    return f"a value of type {type(out)}"


def _vjp_flat(flat: Callable[..., list], leaves: Sequence[Any], out_store: list
              ) -> tuple[list, list, _Signature, list]:
    """The outputs, the aux outputs, and the pullback's signature and residuals."""
    outs, linear, differentiable = linearize_flat(flat, leaves)
    num_out = out_store[2]
    signature = _Signature(linear.jaxpr, tuple(linear.out_avals[num_out:]),
                           tuple(get_aval(x) for x in leaves), tuple(differentiable))
    return outs[:num_out], outs[num_out:], signature, list(linear.consts)


@api_boundary
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False,
        reduce_axes: Sequence[Any] = ()) -> tuple:
    """Evaluate `fun` and return its pullback (mirrors `jax.vjp`).

    Returns `(out, f_vjp)` or `(out, f_vjp, aux)`; `f_vjp(ct)` takes a cotangent shaped like
    `out` and returns a tuple with one cotangent per primal argument. `reduce_axes` is
    deprecated in JAX and refused, as there.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    leaves, in_tree = tree_flatten(tuple(primals))
    _api_util.check_array_leaves(leaves, _api_util.leaf_names(
        primals, [f"primals[{i}]" for i in range(len(primals))]), "vjp")
    store: list = []
    flat = _flat_fun(fun, primals, tuple(range(len(primals))), in_tree, has_aux, store)
    outs, aux, signature, residuals = _vjp_flat(flat, leaves, store)
    out_tree, aux_tree = store[0], store[1]
    f_vjp = VJP(signature, residuals, in_tree, out_tree, tuple(get_aval(o) for o in outs))
    out = tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_vjp, tree_unflatten(aux_tree, aux)
    return out, f_vjp


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """`fun`'s value and gradient with respect to `argnums` (mirrors `jax.value_and_grad`)."""
    name = _api_util.function_name(fun)

    @functools.wraps(fun)
    @api_boundary
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _api_util.normalize_argnums(argnums, len(args), name, "grad")
        diff_args = tuple(args[n] for n in nums)
        leaves, in_tree = tree_flatten(diff_args)
        for leaf in leaves:
            _check_grad_input(get_aval(leaf).dtype, holomorphic, allow_int, "grad")
        store: list = []
        bound = functools.partial(fun, **kwargs) if kwargs else fun
        flat = _flat_fun(bound, args, nums, in_tree, has_aux, store)
        outs, aux, signature, residuals = _vjp_flat(flat, leaves, store)
        if len(outs) != 1 or store[0] != tree_structure(0):
            raise TypeError("Gradient only defined for scalar-output functions. Output was "
                            f"a pytree with {len(outs)} leaves: {store[0]}.")
        out_aval = get_aval(outs[0])
        _check_grad_output(out_aval, holomorphic)
        # The seed has the output's weak type, so that gradients keep the inputs' weak type.
        seed = _convert_element_type(1, out_aval.dtype, weak_type=out_aval.weak_type)
        grads = tree_unflatten(in_tree, flat_pullback(signature, residuals, [seed]))
        grad_value = grads[0] if isinstance(argnums, int) else grads
        value = outs[0]
        if has_aux:
            return (value, tree_unflatten(store[1], aux)), grad_value
        return value, grad_value
    return value_and_grad_fun


def _check_grad_input(dtype: np.dtype, holomorphic: bool, allow_int: bool,
                      what: str) -> None:
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {np.dtype(dtype).name}.")
    if not dtypes.is_inexact(dtype) and not allow_int:
        raise TypeError(
            f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
            f"np.inexact), but got {np.dtype(dtype).name}. If you want to use Boolean- or "
            "integer-valued inputs, use vjp or set allow_int to True.")


def _check_grad_output(aval: Any, holomorphic: bool) -> None:
    if aval.shape != ():
        raise TypeError("Gradient only defined for scalar-output functions. Output had "
                        f"shape: {aval.shape}.")
    check_real_or_holomorphic(aval.dtype, holomorphic, "grad", "output", "vjp")


def check_real_or_holomorphic(dtype: np.dtype, holomorphic: bool, what: str, role: str,
                              alternative: str) -> None:
    """Raise TypeError unless `dtype` is real (complex with `holomorphic`).

    Parameters
    ----------
    dtype : the dtype of an input or output of the differentiated function.
    holomorphic : whether complex differentiation was asked for.
    what : the transformation, for the message ("grad", "jacfwd", ...).
    role : "input" or "output".
    alternative : the lower-level transformation to suggest ("vjp" or "jvp").
    """
    name = np.dtype(dtype).name
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{what} with holomorphic=True requires {role}s with complex "
                            f"dtype, but got {name}.")
        return
    head = (f"{what} requires real-valued {role}s ({role} dtype that is a sub-dtype of "
            f"np.floating), but got {name}.")
    if dtypes.is_complex(dtype):
        raise TypeError(f"{head} For holomorphic differentiation, pass holomorphic=True. For "
                        f"differentiation of non-holomorphic functions involving complex "
                        f"{role}s, use jax.{alternative} directly.")
    if not dtypes.is_floating(dtype):
        raise TypeError(f"{head} For differentiation of functions with integer {role}s, use "
                        f"jax.{alternative} directly.")


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False,
         reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The gradient of scalar-valued `fun` with respect to `argnums` (mirrors `jax.grad`).

    With `has_aux=True`, `fun` returns `(value, aux)` and the result is `(grad, aux)`.
    """
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    @api_boundary
    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        (value, aux), g = _split_aux(value_and_grad_fun(*args, **kwargs), has_aux)
        return (g, aux) if has_aux else g
    return grad_fun


def _split_aux(result: Any, has_aux: bool) -> tuple[tuple[Any, Any], Any]:
    value, g = result
    return (value if has_aux else (value, None)), g


@api_boundary
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """Push `tangents` forward through `fun` at `primals` (mirrors `jax.jvp`).

    Returns `(primals_out, tangents_out)` (and `aux` with `has_aux=True`).
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        _check_tangent(get_aval(p), t)
    store: list = []
    flat = _flat_fun(fun, primals, tuple(range(len(primals))), p_tree, has_aux, store)
    tangents_in = [Zero(tangent_aval(get_aval(p))) if get_aval(t).dtype == dtypes.float0
                   else t for p, t in zip(p_leaves, t_leaves)]
    outs, out_tangents = jvp_flat(flat, p_leaves, tangents_in)
    num_out = store[2]
    out_tangents = [zeros_like_tangent(t.aval) if isinstance(t, Zero) else t
                    for t in out_tangents]
    primal_out = tree_unflatten(store[0], outs[:num_out])
    tangent_out = tree_unflatten(store[0], out_tangents[:num_out])
    if has_aux:
        return primal_out, tangent_out, tree_unflatten(store[1], outs[num_out:])
    return primal_out, tangent_out


def _check_tangent(primal_aval: Any, tangent: Any) -> None:
    t_aval = get_aval(tangent)
    expected = tangent_aval(primal_aval)
    if t_aval.shape != primal_aval.shape:
        raise ValueError("jvp called with different primal and tangent shapes; got primal "
                         f"shape {primal_aval.shape} and tangent shape {t_aval.shape}")
    if t_aval.dtype != expected.dtype:
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
            "case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
            f"{primal_aval.dtype.name} and so expected tangent dtype {expected.dtype.name}, "
            f"but got tangent dtype {t_aval.dtype.name} instead.")


@api_boundary
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """Evaluate `fun` and return its linear map at `primals` (mirrors `jax.linearize`).

    Returns `(out, f_jvp)`: `f_jvp(*tangents)` evaluates the derivative without re-running
    the primal computation.
    """
    leaves, in_tree = tree_flatten(tuple(primals))
    store: list = []
    flat = _flat_fun(fun, primals, tuple(range(len(primals))), in_tree, has_aux, store)
    outs, linear, differentiable = linearize_flat(flat, leaves)
    num_out = store[2]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise TypeError(f"linearized function expects tangents with structure {in_tree}, "
                            f"got {t_tree}.")
        for t, p in zip(t_leaves, leaves):
            expected = tangent_aval(get_aval(p))
            got = get_aval(t)
            if got.shape != expected.shape or got.dtype != expected.dtype:
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values: got tangent {got.str_short()} for primal "
                    f"{get_aval(p).str_short()}, but expected {expected.str_short()}.")
        given = [t for t, d in zip(t_leaves, differentiable) if d]
        out_tangents = eval_jaxpr(linear.jaxpr, linear.consts, *given)
        return tree_unflatten(store[0], out_tangents[:num_out])
    out = tree_unflatten(store[0], outs[:num_out])
    if has_aux:
        return out, f_jvp, tree_unflatten(store[1], outs[num_out:])
    return out, f_jvp
