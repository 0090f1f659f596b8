"""`custom_vmap`: a function with its own batching rule (mirrors
`jax.custom_batching.custom_vmap` and `sequential_vmap`).

    @custom_vmap
    def f(x, y): ...

    @f.def_vmap
    def rule(axis_size, in_batched, *args):   # in_batched: like args, with bools
        ...
        return out, out_batched                # out_batched: like out, with bools

Called outside `vmap`, `f` runs its body. Under `vmap` the rule runs instead, on the
arguments with the mapped axis first (unmapped ones as they are), and says which outputs
are mapped. The function is one `custom_vmap_call` equation carrying its jaxpr and the
rule. Forward mode differentiates it into a `custom_vmap_call` of the jvp, whose rule is
the jvp of the user's rule, so a vmap of a jvp still uses the rule; reverse mode is not
supported, as in JAX.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import EvalTrace, current_trace
from jaxlite.interpreters.ad import Zero, instantiate, jvp_flat, tangent_aval
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.scan_functions import map as lax_map
from jaxlite.tree_util import tree_flatten, tree_map, tree_unflatten
from jaxlite.xla.ir import HloInstruction

__all__ = ["custom_vmap", "sequential_vmap", "custom_vmap_call_p"]

custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)

# A flat rule: rule(axis_size, batched_flags, *leaves) -> (out_leaves, out_batched_flags),
# where the leaves include the hoisted constants first.
FlatRule = Callable[[int, Sequence[bool], Sequence[Any]], "tuple[list, list[bool]]"]


def _abstract_eval(*avals: ShapedArray, call: ClosedJaxpr, rule: FlatRule) -> list:
    return list(call.out_avals)


def _reference(*args: Any, call: ClosedJaxpr, rule: FlatRule) -> list[Any]:
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, call: ClosedJaxpr,
           rule: FlatRule) -> tuple[list, list]:
    batched = [d is not None for d in dims]
    front = [move_batch_axis(a, d, axis_size, 0) if d is not None else a
             for a, d in zip(args, dims)]
    outs, out_batched = rule(axis_size, batched, front)
    return list(outs), [0 if b else None for b in out_batched]


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, call: ClosedJaxpr,
         rule: FlatRule) -> tuple[list, list]:
    nonzero = [not isinstance(t, Zero) for t in tangents]
    num_in, num_out = len(primals), len(call.out_avals)

    def call_jvp(*xs: Any) -> list[Any]:
        given = iter(xs[num_in:])
        ts = [next(given) if nz else Zero(tangent_aval(get_aval(p)))
              for p, nz in zip(xs[:num_in], nonzero)]
        outs, out_ts = jvp_flat(lambda *a: eval_jaxpr(call.jaxpr, call.consts, *a),
                                xs[:num_in], ts)
        return list(outs) + [instantiate(t) for t in out_ts]

    def rule_jvp(axis_size: int, batched: Sequence[bool], xs: Sequence[Any]
                 ) -> tuple[list, list[bool]]:
        # A pair is mapped when its primal or its tangent is; the other is broadcast.
        given_batched = iter(batched[num_in:])
        t_batched = [next(given_batched) if nz else False for nz in nonzero]
        pair = [pb or tb for pb, tb in zip(batched[:num_in], t_batched)]
        ps = [move_batch_axis(p, None, axis_size, 0) if m and not pb else p
              for p, pb, m in zip(xs[:num_in], batched[:num_in], pair)]
        given = iter(xs[num_in:])
        ts = []
        for p, nz, tb, m in zip(ps, nonzero, t_batched, pair):
            if not nz:
                ts.append(Zero(tangent_aval(get_aval(p))))
                continue
            t = next(given)
            ts.append(move_batch_axis(t, None, axis_size, 0) if m and not tb else t)
        out_batched: list[list[bool]] = []

        def run_rule(*a: Any) -> list[Any]:
            outs, flags = rule(axis_size, pair, list(a))
            out_batched.append(list(flags))
            return list(outs)
        outs, out_ts = jvp_flat(run_rule, ps, ts)
        flags = out_batched[0]
        return list(outs) + [instantiate(t) for t in out_ts], flags + flags

    avals = [get_aval(p) for p in primals] + [get_aval(t) for t, nz in zip(tangents, nonzero)
                                             if nz]
    jvp_call, consts = hoist_tracer_consts(trace_to_jaxpr(call_jvp, avals))
    if consts:
        raise NotImplementedError("custom_vmap: the jvp of the function closes over traced "
                                  "values; pass them as arguments.")
    outs = custom_vmap_call_p.bind(*primals, *[t for t in tangents if not isinstance(t, Zero)],
                                   call=jvp_call, rule=rule_jvp)
    return outs[:num_out], outs[num_out:]


def _transpose(cts: Sequence[Any], *args: Any, call: ClosedJaxpr, rule: FlatRule) -> list:
    raise ValueError("Linearization failed to produce known values for all output primals. "
                     "This is typically caused by attempting to differentiate a function "
                     "uses an operation that does not support reverse-mode autodiff "
                     "(custom_vmap supports forward mode only).")


def _lower(ctx: LoweringContext, *args: HloInstruction, call: ClosedJaxpr,
           rule: FlatRule) -> list[HloInstruction]:
    # The rule only matters to vmap, which has happened by now.
    return hlo.call_jaxpr(ctx, call, args, "custom_vmap_call")


custom_vmap_call_p.abstract_eval = _abstract_eval
custom_vmap_call_p.reference = _reference
custom_vmap_call_p.jvp = _jvp
custom_vmap_call_p.transpose = _transpose
custom_vmap_call_p.batch = _batch
custom_vmap_call_p.lower = _lower


class custom_vmap:
    """A function with a custom batching rule (mirrors `jax.custom_batching.custom_vmap`)."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the rule: `rule(axis_size, in_batched, *args) -> (out, out_batched)`."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("custom_vmap functions take positional arguments only.")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{self.__name__} using def_vmap.")
        if isinstance(current_trace(), EvalTrace):
            return self.fun(*args)
        leaves, in_tree = tree_flatten(args)
        out_trees: list = []

        def flat_fun(*xs: Any) -> list[Any]:
            out, tree = tree_flatten(self.fun(*tree_unflatten(in_tree, xs)))
            out_trees.append(tree)
            return out
        closed, consts = hoist_tracer_consts(trace_to_jaxpr(flat_fun,
                                                            [get_aval(x) for x in leaves]))
        user_rule = self.vmap_rule
        num_consts = len(consts)

        def flat_rule(axis_size: int, batched: Sequence[bool], xs: Sequence[Any]
                      ) -> tuple[list, list[bool]]:
            if any(batched[:num_consts]):
                raise NotImplementedError(
                    "custom_vmap: the function closes over a value that vmap maps; pass it "
                    "as an argument instead.")
            in_batched = list(tree_unflatten(in_tree, list(batched[num_consts:])))
            out, out_batched = user_rule(axis_size, in_batched,
                                         *tree_unflatten(in_tree, list(xs[num_consts:])))
            out_leaves, tree = tree_flatten(out)
            flags = _broadcast_flags(out_batched, out)
            if tree != out_trees[0]:
                raise ValueError(f"custom_vmap rule output structure {tree} differs from the "
                                 f"function's output structure {out_trees[0]}.")
            return out_leaves, flags

        outs = custom_vmap_call_p.bind(*consts, *leaves, call=closed, rule=flat_rule)
        return tree_unflatten(out_trees[0], outs)


def _broadcast_flags(out_batched: Any, out: Any) -> list[bool]:
    """One bool per output leaf, from `out_batched` (a bool for a whole subtree allowed)."""
    if isinstance(out_batched, bool):
        return [out_batched] * len(tree_flatten(out)[0])
    flags = tree_map(lambda b, o: [bool(b)] * len(tree_flatten(o)[0]), out_batched, out,
                     is_leaf=lambda b: isinstance(b, bool))
    return [f for group in tree_flatten(flags, is_leaf=lambda x: isinstance(x, list))[0]
            for f in group]


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """`f` batched by a loop over the mapped axis, one call per example (mirrors
    `jax.custom_batching.sequential_vmap`)."""
    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size: int, in_batched: list, *args: Any) -> tuple[Any, Any]:
        flags = tree_flatten(in_batched)[0]
        leaves, tree = tree_flatten(args)
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(mapped_leaves: list) -> Any:
            it = iter(mapped_leaves)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return g(*tree_unflatten(tree, full))
        out = lax_map(one, mapped)
        return out, tree_map(lambda _: True, out)
    return g

