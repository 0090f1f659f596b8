"""Solves with implicitly defined derivatives: `custom_root` and `custom_linear_solve`.

Mirrors `jax.lax.custom_root` and `jax.lax.custom_linear_solve` (and the primitive
`linear_solve_p`, named `custom_linear_solve` in jaxprs, as in JAX). The user's solver is
run as it is, but never differentiated: derivatives come from the implicit function
theorem at the solution.

- custom_root(f, x0, solve, tangent_solve): x = solve(f, x0). For parameters p that f
  closes over, f(x(p), p) = 0 gives dx = -J_x^{-1} (df/dp dp), computed with
  `tangent_solve` on f linearized at x. It is a `custom_jvp` function of f's, solve's and
  tangent_solve's closed-over values.
- custom_linear_solve(matvec, b, solve, transpose_solve): x = solve(matvec, b) for a linear
  matvec. The primitive carries the traced matvec, its transpose (vecmat), solve and
  transpose_solve with their constants: dx solves A dx = db - dA x (jvp); the cotangent of
  b solves A^T ct_b = ct_x with transpose_solve (transpose); vmap finds which values are
  batched as a fixed point over the four jaxprs.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, add_tangents, instantiate, jvp_flat, tangent_aval
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._control_flow_util import batch_closed, eval_closed, trace_function
from jaxlite.lax.arithmetic import neg
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_unflatten, treedef_children
from jaxlite.xla.ir import HloInstruction

__all__ = ["custom_root", "custom_linear_solve", "linear_solve_p"]


def _split(values: Sequence[Any], lengths: Sequence[int]) -> list[list[Any]]:
    parts, start = [], 0
    for n in lengths:
        parts.append(list(values[start:start + n]))
        start += n
    parts.append(list(values[start:]))
    return parts


def _check_tree(what: str, expected_name: str, tree: PyTreeDef, expected: PyTreeDef,
                has_aux: bool) -> PyTreeDef:
    """The tree of `what`'s solution (the first of a pair when `has_aux`), checked."""
    if has_aux:
        children = treedef_children(tree)
        if len(children) != 2:
            raise TypeError(f"{what}() with has_aux=True must return a pair (solution, aux).")
        tree = children[0]
    if tree != expected:
        raise TypeError(f"{what}() output pytree structure must match {expected_name}, got "
                        f"{tree} and {expected}.")
    return tree


def _shapes_checked(fun: Callable, name: str, leaves: Sequence[Any],
                    has_aux: bool) -> Callable:
    expected = [get_aval(x).shape for x in leaves]

    def checked(x: Any) -> Any:
        out = fun(x)
        got = [get_aval(y).shape for y in tree_flatten(out[0] if has_aux else out)[0]]
        if got != expected:
            raise ValueError(f"{name}() output shapes must match b, got {got} and {expected}")
        return out
    return checked


# --------------------------------------------------------------------------- custom_root

class _RootJaxprs(NamedTuple):
    f: ClosedJaxpr
    solve: ClosedJaxpr
    l_and_s: ClosedJaxpr


def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """`solve(f, initial_guess)`, differentiated through the implicit function theorem at
    the root (mirrors `jax.lax.custom_root`).

    `tangent_solve(g, y)` must solve the linear system g(x) = y for `g`, `f` linearized at
    the root (for a scalar: `lambda g, y: y / g(1.0)`). With `has_aux`, `solve` returns
    (solution, aux); aux gets zero derivatives.
    """
    guess, tree = tree_flatten(initial_guess)
    avals = [get_aval(x) for x in guess]

    def f_flat(*x: Any) -> Any:
        return f(tree_unflatten(tree, x))

    f_jaxpr, f_consts, f_tree = trace_function(f_flat, tree_flatten(tuple(avals))[1], avals)
    _check_tree("f", "initial_guess", f_tree, tree, False)
    solve_jaxpr, solve_consts, solve_tree = trace_function(
        lambda *x: solve(f, tree_unflatten(tree, x)), tree_flatten(tuple(avals))[1], avals)
    _check_tree("solve", "initial_guess", solve_tree, tree, has_aux)

    def linearize_and_solve(*xb: Any) -> Any:
        x, b = tree_unflatten(tree, xb[:len(guess)]), tree_unflatten(tree, xb[len(guess):])

        def f_jvp(t: Any) -> Any:
            out_t = jvp_flat(lambda *x: tree_flatten(f(tree_unflatten(tree, x)))[0],
                             tree_flatten(x)[0], tree_flatten(t)[0])[1]
            return tree_unflatten(tree, out_t)
        return tangent_solve(f_jvp, b)
    l_and_s_jaxpr, l_and_s_consts, l_tree = trace_function(
        linearize_and_solve, tree_flatten(tuple(avals + avals))[1], avals + avals)
    _check_tree("tangent_solve", "x", l_tree, tree, False)

    lengths = (len(f_consts), len(solve_consts), len(l_and_s_consts))
    jaxprs = _RootJaxprs(f_jaxpr, solve_jaxpr, l_and_s_jaxpr)
    out = _custom_root(lengths, jaxprs, *f_consts, *solve_consts, *l_and_s_consts, *guess)
    return tree_unflatten(solve_tree, out)


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _custom_root(lengths: tuple, jaxprs: _RootJaxprs, *args: Any) -> list[Any]:
    _, solve_consts, _, guess = _split(args, lengths)
    return eval_closed(jaxprs.solve, *solve_consts, *guess)


def _root_jvp(lengths: tuple, jaxprs: _RootJaxprs, primals: Sequence[Any],
              tangents: Sequence[Any]) -> tuple[list, list]:
    f_consts, _, l_and_s_consts, _ = _split(primals, lengths)
    f_consts_dot = _split(tangents, lengths)[0]
    out = _custom_root(lengths, jaxprs, *primals)
    n = len(jaxprs.f.out_avals)
    solution, aux = list(out[:n]), list(out[n:])
    # f(x(p), p) = 0: J_x dx = -(df/dp) dp, with df/dp dp the jvp of f in its constants.
    _, rhs = jvp_flat(lambda *c: eval_closed(jaxprs.f, *c, *solution), list(f_consts),
                      [instantiate(t) for t in f_consts_dot])
    dx = eval_closed(jaxprs.l_and_s, *l_and_s_consts, *solution, *map(instantiate, rhs))
    aux_dot = [instantiate(Zero(tangent_aval(get_aval(a)))) for a in aux]
    return out, [neg(d) for d in dx] + aux_dot


_custom_root.defjvp(_root_jvp)


# -------------------------------------------------------------------- custom_linear_solve

class _LinearSolveTuple(NamedTuple):
    """One entry per jaxpr of a linear solve (its jaxpr, or its number of constants)."""

    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> "_LinearSolveTuple":
        return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _params_transposed(params: Sequence[list]) -> list[Any]:
    matvec, vecmat, solve, transpose_solve = params
    return [*vecmat, *matvec, *transpose_solve, *solve]


def _vecmat(matvec: Callable, b_leaves: Sequence[Any], tree: PyTreeDef) -> Callable:
    """The transpose of the linear `matvec`, as a function of pytrees like b."""
    avals = [get_aval(x).update(weak_type=False) for x in b_leaves]
    linear = trace_to_jaxpr(lambda *x: tree_flatten(matvec(tree_unflatten(tree, x)))[0],
                            avals)

    def vecmat(y: Any) -> Any:
        cts = backward_pass(linear.jaxpr, linear.consts,
                            [UndefinedPrimal(a) for a in avals], tree_flatten(y)[0])
        return tree_unflatten(tree, [instantiate(c) for c in cts])
    return vecmat


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """`solve(matvec, b)`, differentiated as the solution of `matvec(x) = b`
    (mirrors `jax.lax.custom_linear_solve`).

    `matvec` must be linear; `transpose_solve(vecmat, b)` solves with the transposed map
    (needed for reverse mode, unless `symmetric`, when `solve` serves). With `has_aux`,
    the solvers return (solution, aux).
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, tree = tree_flatten(b)
    avals = [get_aval(x) for x in leaves]
    in_tree = tree_flatten(tuple(avals))[1]

    def traced(fun: Callable, name: str, with_aux: bool) -> tuple[ClosedJaxpr, list, Any]:
        checked = _shapes_checked(fun, name, leaves, with_aux)
        jaxpr, consts, out_tree = trace_function(
            lambda *x: checked(tree_unflatten(tree, x)), in_tree, avals)
        _check_tree(name, "b", out_tree, tree, with_aux)
        return jaxpr, consts, out_tree

    matvec_jaxpr, matvec_consts, _ = traced(matvec, "matvec", False)
    solve_jaxpr, solve_consts, out_tree = traced(lambda x: solve(matvec, x), "solve", has_aux)
    vecmat_jaxpr = transpose_solve_jaxpr = None
    vecmat_consts: list = []
    transpose_consts: list = []
    if transpose_solve is not None:
        vecmat = matvec if symmetric else _vecmat(matvec, leaves, tree)
        vecmat_jaxpr, vecmat_consts, _ = traced(vecmat, "vecmat", False)
        transpose_solve_jaxpr, transpose_consts, _ = traced(
            lambda x: transpose_solve(vecmat, x), "transpose_solve", has_aux)
    lengths = _LinearSolveTuple(len(matvec_consts), len(vecmat_consts), len(solve_consts),
                                len(transpose_consts))
    jaxprs = _LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, transpose_solve_jaxpr)
    out = linear_solve_p.bind(*matvec_consts, *vecmat_consts, *solve_consts,
                              *transpose_consts, *leaves, const_lengths=lengths, jaxprs=jaxprs)
    return tree_unflatten(out_tree, out)


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)


def _solve_abstract_eval(*avals: ShapedArray, const_lengths: tuple,
                         jaxprs: _LinearSolveTuple) -> list[ShapedArray]:
    b = avals[sum(const_lengths):]
    n = len(jaxprs.matvec.out_avals)
    return list(b) + list(jaxprs.solve.out_avals[n:])


def _solve_reference(*args: Any, const_lengths: tuple, jaxprs: _LinearSolveTuple) -> list[Any]:
    _, _, solve_consts, _, b = _split(args, const_lengths)
    return eval_closed(jaxprs.solve, *solve_consts, *b)


def _solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, const_lengths: tuple,
               jaxprs: _LinearSolveTuple) -> tuple[list, list]:
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    x = linear_solve_p.bind(*primals, **params)
    matvec_consts, *_, b = _split(primals, const_lengths)
    matvec_dots, *_, b_dots = _split(tangents, const_lengths)
    n = len(b)
    rhs = list(b_dots)
    if not all(isinstance(t, Zero) for t in matvec_dots):
        # d(A x) with x held fixed: the jvp of matvec in its constants.
        _, dax = jvp_flat(lambda *c: eval_closed(jaxprs.matvec, *c, *x[:n]),
                          list(matvec_consts), list(matvec_dots))
        rhs = [add_tangents(t, neg(d)) for t, d in zip(rhs, dax)]
    if all(isinstance(t, Zero) for t in rhs):
        return x, [Zero(tangent_aval(get_aval(o))) for o in x]
    consts = primals[:sum(const_lengths)]
    dx = linear_solve_p.bind(*consts, *map(instantiate, rhs), **params)
    return x, list(dx[:n]) + [Zero(tangent_aval(get_aval(o))) for o in x[n:]]


def _solve_transpose(cts: Sequence[Any], *args: Any, const_lengths: tuple,
                     jaxprs: _LinearSolveTuple) -> list[Any]:
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    *params, b = _split(args, const_lengths)
    if any(is_undefined(p) for group in params for p in group):
        raise NotImplementedError("custom_linear_solve is linear in b only; its constants "
                                  "cannot be transposed.")
    x_cts = [instantiate(ct) for ct in cts[:len(b)]]
    b_cts = linear_solve_p.bind(*_params_transposed(params), *x_cts,
                                const_lengths=const_lengths.transpose(),
                                jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(b_cts[:len(b)])


def _solve_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                 const_lengths: tuple, jaxprs: _LinearSolveTuple) -> tuple[list, list]:
    batched = [d is not None for d in dims]
    matvec_bat, vecmat_bat, solve_bat, tsolve_bat, b_bat = _split(batched, const_lengths)
    n = len(b_bat)
    num_aux = len(jaxprs.solve.out_avals) - n
    x_bat = [False] * (n + num_aux)
    for _ in range(2 + len(b_bat) + len(x_bat)):  # to a fixed point of what is batched
        solve_b, solve_x_bat = batch_closed(jaxprs.solve, axis_size, solve_bat + b_bat, x_bat)
        x_out = list(solve_x_bat)
        vecmat_b = None
        if jaxprs.vecmat is not None:
            vecmat_b, vecmat_x_bat = batch_closed(jaxprs.vecmat, axis_size,
                                                  vecmat_bat + b_bat, b_bat)
            x_out = [a or b for a, b in zip(vecmat_x_bat + [True] * num_aux, solve_x_bat)]
        matvec_b, matvec_out_bat = batch_closed(jaxprs.matvec, axis_size,
                                                matvec_bat + x_out[:n], b_bat)
        b_out = [a or b for a, b in zip(matvec_out_bat, b_bat)]
        tsolve_b = None
        if jaxprs.transpose_solve is not None:
            tsolve_b, t_bat = batch_closed(jaxprs.transpose_solve, axis_size,
                                           tsolve_bat + x_out[:n], x_out)
            b_out = [a or b for a, b in zip(b_out, t_bat[:n])]
        if x_out == x_bat and b_out == b_bat:
            break
        x_bat, b_bat = x_out, b_out
    moved = [move_batch_axis(a, d, axis_size, 0) if (d is not None or now) else a
             for a, d, now in zip(args, dims, matvec_bat + vecmat_bat + solve_bat
                                  + tsolve_bat + b_bat)]
    outs = linear_solve_p.bind(*moved, const_lengths=const_lengths,
                               jaxprs=_LinearSolveTuple(matvec_b, vecmat_b, solve_b, tsolve_b))
    return outs, [0 if bat else None for bat in solve_x_bat]


def _solve_lower(ctx: LoweringContext, *args: HloInstruction, const_lengths: tuple,
                 jaxprs: _LinearSolveTuple) -> list[HloInstruction]:
    _, _, solve_consts, _, b = _split(args, const_lengths)
    return hlo.call_jaxpr(ctx, jaxprs.solve, [*solve_consts, *b], "custom_linear_solve")


linear_solve_p.abstract_eval = _solve_abstract_eval
linear_solve_p.reference = _solve_reference
linear_solve_p.jvp = _solve_jvp
linear_solve_p.transpose = _solve_transpose
linear_solve_p.batch = _solve_batch
linear_solve_p.lower = _solve_lower
