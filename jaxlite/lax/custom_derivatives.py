"""User-defined derivative rules: `custom_jvp` and `custom_vjp` (mirror `jax.custom_jvp` etc.).

Calling a decorated function outside every transformation just runs it. Under a
transformation it becomes one `custom_jvp_call` / `custom_vjp_call` equation carrying the
traced function and the user's rule, flattened to lists of leaves; the rules of those
primitives (in `lax.higher_order`) call the user's rule when differentiating.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from jaxlite.core.avals import get_aval
from jaxlite.core.trace import EvalTrace, current_trace
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax.ad_util import zeros_like_tangent
from jaxlite.lax.higher_order import custom_jvp_call_p, custom_vjp_call_p
from jaxlite.interpreters.ad import add_tangents, tangent_aval
from jaxlite.tree_util import tree_flatten, tree_map, tree_unflatten


def _resolve_args(fun: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{getattr(fun, '__name__', fun)}: {error}") from None
    bound.apply_defaults()
    return bound.args + tuple(bound.kwargs.values())


def _split_nondiff(args: tuple, nondiff_argnums: tuple[int, ...]) -> tuple[list, list]:
    static = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return static, diff


def _merge(static: Sequence[Any], diff: Sequence[Any], nondiff_argnums: tuple[int, ...]
           ) -> list[Any]:
    merged, s, d = [], iter(static), iter(diff)
    for i in range(len(static) + len(diff)):
        merged.append(next(s) if i in nondiff_argnums else next(d))
    return merged


class custom_jvp:
    """A function with a custom forward-mode derivative (mirrors `jax.custom_jvp`).

    Define the rule with `@f.defjvp` on `jvp(primals, tangents) -> (out, tangent_out)`
    (with `nondiff_argnums`, those arguments come first: `jvp(*nondiff, primals, tangents)`).
    Reverse mode works by transposing the rule, which must be linear in the tangents.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable:
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """Define the rule by one function per argument: `fn(t, out, *primals)`."""
        def jvp(primals: tuple, tangents: tuple) -> tuple:
            out = self.fun(*primals)
            total = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is not None:
                    term = fn(t, out, *primals)
                    total = term if total is None else tree_map(add_tangents, total, term)
            if total is None:
                total = tree_map(lambda o: zeros_like_tangent(tangent_aval(get_aval(o))), out)
            return out, total
        jvp.__name__ = f"{self.__name__}_jvps"
        self.defjvp(jvp)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{self.__name__} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs)
        if isinstance(current_trace(), EvalTrace):
            return self.fun(*args)
        static, diff = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(diff))
        out_trees: list = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = self.fun(*_merge(static, tree_unflatten(in_tree, xs), self.nondiff_argnums))
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        def flat_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
            p = tuple(tree_unflatten(in_tree, primals))
            t = tuple(tree_unflatten(in_tree, tangents))
            out, tangent_out = self.jvp(*static, p, t)
            out_leaves, out_tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(tangent_out)
            if out_tree != out_trees[0] or t_tree != out_trees[0]:
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with the same "
                    f"container (pytree) structure as the function's output {out_trees[0]}; "
                    f"got primal output {out_tree} and tangent output {t_tree}.")
            return out_leaves, t_leaves

        flat_jvp.__name__ = getattr(self.jvp, "__name__", "jvp")
        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves])
        opened, consts = hoist_tracer_consts(closed)
        outs = custom_jvp_call_p.bind(*consts, *leaves, jaxpr=opened, jvp=flat_jvp,
                                      num_consts=len(consts), symbolic_zeros=False,
                                      name=self.__name__)
        return tree_unflatten(out_trees[0], outs)


class custom_vjp:
    """A function with a custom reverse-mode derivative (mirrors `jax.custom_vjp`).

    Define it with `f.defvjp(fwd, bwd)`: `fwd(*args) -> (out, residuals)` and
    `bwd(residuals, ct_out) -> tuple of cotangents, one per argument` (with
    `nondiff_argnums`, those arguments come first in `bwd`).
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        self.fwd = fwd
        self.bwd = bwd

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} "
                                 "using defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        if isinstance(current_trace(), EvalTrace):
            return self.fun(*args)
        static, diff = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(diff))
        out_trees: list = []
        res_trees: list = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = self.fun(*_merge(static, tree_unflatten(in_tree, xs), self.nondiff_argnums))
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        def flat_fwd(*xs: Any) -> tuple[list, list]:
            merged = _merge(static, tree_unflatten(in_tree, xs), self.nondiff_argnums)
            result = self.fwd(*merged)
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError("Custom VJP fwd rule must return a pair (output, residuals), "
                                f"got {type(result).__name__}.")
            out_leaves, out_tree = tree_flatten(result[0])
            if out_tree != out_trees[0]:
                raise TypeError(f"Custom VJP fwd rule output structure {out_tree} differs "
                                f"from the function's output structure {out_trees[0]}.")
            res_leaves, res_tree = tree_flatten(result[1])
            res_trees[:] = [res_tree]
            return out_leaves, res_leaves

        def flat_bwd(residuals: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
            res = tree_unflatten(res_trees[0], residuals)
            ct = tree_unflatten(out_trees[0], cts)
            cts_in = self.bwd(*static, res, ct)
            if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(diff):
                raise TypeError(
                    "Custom VJP bwd rule must produce a tuple with one cotangent per "
                    f"differentiable argument ({len(diff)}), got {cts_in!r:.200}.")
            filled = [tree_map_none(c, d) for c, d in zip(cts_in, diff)]
            return tree_flatten(tuple(filled))[0]

        flat_fwd.__name__ = getattr(self.fwd, "__name__", "fwd")
        flat_bwd.__name__ = getattr(self.bwd, "__name__", "bwd")
        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves])
        opened, consts = hoist_tracer_consts(closed)
        outs = custom_vjp_call_p.bind(*consts, *leaves, jaxpr=opened, fwd=flat_fwd,
                                      bwd=flat_bwd, num_consts=len(consts),
                                      name=self.__name__)
        return tree_unflatten(out_trees[0], outs)


def tree_map_none(ct: Any, primal: Any) -> Any:
    """A cotangent with `None` entries replaced by zeros shaped like the primal."""
    if ct is None:
        leaves, tree = tree_flatten(primal)
        return tree_unflatten(tree, [zeros_like_tangent(tangent_aval(get_aval(x)))
                                     for x in leaves])
    return ct
