"""User-defined derivative rules: `custom_jvp` and `custom_vjp` (mirror `jax.custom_jvp` etc.).

Calling a decorated function outside every transformation just runs it. Under a
transformation it becomes one `custom_jvp_call` / `custom_vjp_call` equation carrying the
traced function and the user's rule, flattened to lists of leaves; the rules of those
primitives (in `lax.higher_order`) call the user's rule when differentiating.

With `symbolic_zeros=True` a rule sees which tangents (or cotangents) are zero: they come
as `SymbolicZero` leaves, a `custom_vjp` forward rule gets each input leaf as a
`CustomVJPPrimal(value, perturbed)`, and rules may return `SymbolicZero` (or `None`).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Sequence

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.trace import EvalTrace, current_trace
from jaxlite.interpreters.ad import Zero, add_tangents, tangent_aval
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax.ad_util import zeros_like_tangent
from jaxlite.lax.higher_order import custom_jvp_call_p, custom_vjp_call_p
from jaxlite.tree_util import tree_flatten, tree_map, tree_unflatten


class SymbolicZero:
    """A zero tangent or cotangent passed to a rule defined with `symbolic_zeros=True`
    (mirrors `jax.custom_derivatives.SymbolicZero`); `shape`, `dtype` and the other
    attributes come from its abstract value."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return "SymbolicZero"

    def __getattr__(self, name: str) -> Any:
        if name == "aval":  # not set yet (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val: Any) -> "SymbolicZero":
        return SymbolicZero(tangent_aval(get_aval(val)))


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """An input of a `custom_vjp` forward rule defined with `symbolic_zeros=True`: its
    value, and whether it is perturbed (has a nonzero tangent) (mirrors JAX's)."""

    value: Any
    perturbed: bool


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for the pytree `val`: arrays of zeros (float0 for non-float leaves), or
    `SymbolicZero`s (mirrors `jax.custom_derivatives.zero_from_primal`)."""
    def zero(x: Any) -> Any:
        aval = get_aval(x).to_tangent_aval()
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_tangent(aval)
    return tree_map(zero, val)


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """`tree` with each `CustomVJPPrimal` leaf replaced by its value (mirrors JAX's)."""
    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree)


def _to_internal_zero(t: Any) -> Any:
    return Zero(t.aval) if isinstance(t, SymbolicZero) else t


def _to_symbolic_zero(t: Any) -> Any:
    return SymbolicZero(t.aval) if isinstance(t, Zero) else t


def _instantiate(t: Any) -> Any:
    return zeros_like_tangent(t.aval) if isinstance(t, (Zero, SymbolicZero)) else t


def _resolve_args(fun: Callable[..., Any], args: tuple, kwargs: dict, kind: str) -> tuple:
    """The arguments as positional ones, omitted ones given their defaults (as JAX binds
    them: a default may be a nondiff argument); keyword-only parameters cannot be (JAX's
    error)."""
    name = getattr(fun, "__name__", fun)
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):
        if not kwargs:
            return args
        raise
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{name}: {error}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"The input arguments to the {kind}-decorated function {name} could not be "
            "resolved to positional-only arguments. Binding failed with the error:\nThe "
            "following keyword arguments could not be resolved to positions: "
            f"{', '.join(bound.kwargs)}")
    return bound.args


def _nondiff_positions(fun: Callable[..., Any], nondiff_argnums: Sequence[int],
                       nondiff_argnames: Sequence[str]) -> tuple[int, ...]:
    """`nondiff_argnums` with the positions of the parameters named in `nondiff_argnames`."""
    positions = set(nondiff_argnums)
    if nondiff_argnames:
        params = list(inspect.signature(fun).parameters)
        for name in nondiff_argnames:
            if name not in params:
                raise TypeError(f"nondiff_argnames: {getattr(fun, '__name__', fun)} has no "
                                f"parameter named {name!r}")
            positions.add(params.index(name))
    return tuple(sorted(positions))


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
    (with `nondiff_argnums` / `nondiff_argnames`, those arguments come first:
    `jvp(*nondiff, primals, tangents)`). Reverse mode works by transposing the rule, which
    must be linear in the tangents.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable:
        """Set the rule; with `symbolic_zeros`, zero tangents reach it as `SymbolicZero`."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
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
        args = _resolve_args(self.fun, args, kwargs, "custom_jvp")
        if isinstance(current_trace(), EvalTrace):
            return self.fun(*args)
        static, diff = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(diff))
        out_trees: list = []
        symbolic = self.symbolic_zeros

        def flat_fun(*xs: Any) -> list[Any]:
            out = self.fun(*_merge(static, tree_unflatten(in_tree, xs), self.nondiff_argnums))
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        def flat_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
            p = tuple(tree_unflatten(in_tree, primals))
            t = tuple(tree_unflatten(in_tree, [_to_symbolic_zero(x) for x in tangents]))
            out, tangent_out = self.jvp(*static, p, t)
            out_leaves, out_tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(tangent_out)
            if out_tree != out_trees[0] or t_tree != out_trees[0]:
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with the same "
                    f"container (pytree) structure as the function's output {out_trees[0]}; "
                    f"got primal output {out_tree} and tangent output {t_tree}.")
            _check_tangent_types(out_leaves, t_leaves)
            convert = _to_internal_zero if symbolic else _instantiate
            return out_leaves, [convert(x) for x in t_leaves]

        flat_jvp.__name__ = getattr(self.jvp, "__name__", "jvp")
        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves])
        opened, consts = hoist_tracer_consts(closed)
        outs = custom_jvp_call_p.bind(*consts, *leaves, jaxpr=opened, jvp=flat_jvp,
                                      num_consts=len(consts), symbolic_zeros=symbolic,
                                      name=self.__name__)
        return tree_unflatten(out_trees[0], outs)


def _check_tangent_types(primals: Sequence[Any], tangents: Sequence[Any]) -> None:
    """JAX's TypeError when a custom JVP rule's tangent has another shape or dtype than the
    tangent type of its primal output (a float0 tangent space accepts any zeros)."""
    for p, t in zip(primals, tangents):
        if t is None or isinstance(t, Zero) or not hasattr(t, "dtype"):
            continue
        want, got = tangent_aval(get_aval(p)), get_aval(t)
        if str(want.dtype) == "float0":
            continue
        if tuple(want.shape) != tuple(got.shape) or want.dtype != got.dtype:
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with corresponding "
                f"shapes and dtypes. Expected {_type_name(want)} (tangent type of "
                f"{_type_name(get_aval(p))}) but got {_type_name(got)}.")


def _type_name(aval: Any) -> str:
    """JAX's spelling of an array type in messages: float32[3,4]."""
    return f"{aval.dtype}[{','.join(map(str, aval.shape))}]"


class custom_vjp:
    """A function with a custom reverse-mode derivative (mirrors `jax.custom_vjp`).

    Define it with `f.defvjp(fwd, bwd)`: `fwd(*args) -> (out, residuals)` and
    `bwd(residuals, ct_out) -> tuple of cotangents, one per argument` (with
    `nondiff_argnums` / `nondiff_argnames`, those arguments come first in `bwd`; `None`
    stands for a zero cotangent). `optimize_remat` is accepted for JAX's signature: it
    changes only what JAX keeps in memory, never values.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        self.optimize_remat = False

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} "
                                 "using defvjp.")
        args = _resolve_args(self.fun, args, kwargs, "custom_vjp")
        if isinstance(current_trace(), EvalTrace):
            return self.fun(*args)
        static, diff = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(diff))
        # The bwd rule needs the arguments' types only; holding the values (tracers) in its
        # closure kept their traces alive as long as the equation.
        diff_types = tree_unflatten(in_tree, [get_aval(x) for x in leaves])
        out_trees: list = []
        res_trees: list = []
        symbolic = self.symbolic_zeros

        def flat_fun(*xs: Any) -> list[Any]:
            out = self.fun(*_merge(static, tree_unflatten(in_tree, xs), self.nondiff_argnums))
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        def flat_fwd(*xs: Any, perturbed: Sequence[bool]) -> tuple[list, list]:
            if symbolic:
                xs = tuple(CustomVJPPrimal(x, p) for x, p in zip(xs, perturbed))
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
            convert = _to_symbolic_zero if symbolic else _instantiate
            ct = tree_unflatten(out_trees[0], [convert(c) for c in cts])
            cts_in = self.bwd(*static, res, ct)
            if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(diff_types):
                raise TypeError(
                    "Custom VJP bwd rule must produce a tuple with one cotangent per "
                    f"differentiable argument ({len(diff_types)}), got {cts_in!r:.200}.")
            filled = [fill_zero_cotangents(c, d) for c, d in zip(cts_in, diff_types)]
            return tree_flatten(tuple(filled))[0]

        flat_fwd.__name__ = getattr(self.fwd, "__name__", "fwd")
        flat_bwd.__name__ = getattr(self.bwd, "__name__", "bwd")
        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves])
        opened, consts = hoist_tracer_consts(closed)
        outs = custom_vjp_call_p.bind(*consts, *leaves, jaxpr=opened, fwd=flat_fwd,
                                      bwd=flat_bwd, num_consts=len(consts),
                                      name=self.__name__)
        return tree_unflatten(out_trees[0], outs)


def fill_zero_cotangents(ct: Any, primal: Any) -> Any:
    """A bwd rule's cotangent for `primal` with `None` (for any subtree) and `SymbolicZero`
    leaves replaced by zeros shaped like the primal."""
    def fill(c: Any, p: Any) -> Any:
        if c is None:
            leaves, tree = tree_flatten(p)
            return tree_unflatten(tree, [zeros_like_tangent(tangent_aval(get_aval(x)))
                                         for x in leaves])
        return _instantiate(c)
    return tree_map(fill, ct, primal,
                    is_leaf=lambda x: x is None or isinstance(x, SymbolicZero))

