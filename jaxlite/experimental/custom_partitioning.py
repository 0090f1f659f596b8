"""Functions with their own partitioning rules (mirrors
`jax.experimental.custom_partitioning`).

`custom_partitioning(fun)` wraps a function whose sharded lowering the user writes:
`def_partition` records the partition callback, the sharding-propagation callbacks and the
Shardy `sharding_rule`. The call traces `fun` to a jaxpr and binds the primitive
`custom_partitioning` with it. On one device JAX lowers that jaxpr as written and never
calls the callbacks; jaxlite has one device, so it always does the same: the callbacks are
kept on the primitive for the partitioner of the scale-out issue. As in JAX, the primitive
has no differentiation or batching rule (grad and vmap raise NotImplementedError).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from jaxlite.config import config
from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Tracer
from jaxlite.errors import UnexpectedTracerError
from jaxlite.experimental._sharding_rule import (BATCHING, ArrayMapping, CompoundFactor,
                                                 SdyShardingRule, str_to_sdy_sharding_rule)
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax import _lowering_util as hlo
from jaxlite.tree_util import tree_flatten, tree_leaves, tree_unflatten
from jaxlite.xla.ir import HloInstruction

__all__ = ["ArrayMapping", "BATCHING", "CompoundFactor", "SdyShardingRule",
           "custom_partitioning", "custom_partitioning_p"]

custom_partitioning_p = Primitive("custom_partitioning", multiple_results=True)


def _abstract_eval(*avals: Any, call: ClosedJaxpr, **params: Any) -> list[Any]:
    return list(call.out_avals)


def _reference(*args: Any, call: ClosedJaxpr, **params: Any) -> list[Any]:
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _lower(ctx: LoweringContext, *args: HloInstruction, call: ClosedJaxpr,
           **params: Any) -> list[HloInstruction]:
    # One device: the function's own lowering, as JAX lowers it without devices to split.
    return hlo.call_jaxpr(ctx, call, args, "custom_partitioning")


def _no_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    raise NotImplementedError("Differentiation rule for 'custom_partitioning' not implemented")


def _no_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
    raise NotImplementedError("Batching rule for 'custom_partitioning' not implemented")


custom_partitioning_p.abstract_eval = _abstract_eval
custom_partitioning_p.reference = _reference
custom_partitioning_p.lower = _lower
custom_partitioning_p.jvp = _no_jvp
custom_partitioning_p.batch = _no_batch


class custom_partitioning:  # noqa: N801  (JAX's name)
    """Wrap `fun` so that its sharded lowering can be given by `def_partition` (mirrors
    `jax.experimental.custom_partitioning.custom_partitioning`). Arguments at
    `static_argnums` are passed as Python values (they must not be traced)."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.static_argnums = static_argnums
        self.partition = None
        self.propagate_user_sharding = None
        self.infer_sharding_from_operands = None
        self.sharding_rule = None

    def __getattr__(self, name: str) -> Any:
        # Attributes of the wrapped function (its __name__, __doc__...), as JAX forwards.
        return getattr(self.__dict__["fun"], name)

    def def_partition(self, partition: Callable, infer_sharding_from_operands: Any = None,
                      propagate_user_sharding: Any = None, decode_shardings: bool = True,
                      sharding_rule: Any = None, *, reduction_factors: tuple = (),
                      need_replication_factors: tuple = (), permutation_factors: tuple = (),
                      **factor_sizes: int) -> Callable:
        """Record the partition callback, the propagation callbacks and the Shardy rule (an
        `SdyShardingRule`, a callable, or a rule string with the keyword factor sets and
        sizes); returns `partition`."""
        self.partition = partition
        self.propagate_user_sharding = propagate_user_sharding
        self.infer_sharding_from_operands = infer_sharding_from_operands
        self.decode_shardings = decode_shardings
        if sharding_rule is None or callable(sharding_rule) or \
                isinstance(sharding_rule, SdyShardingRule):
            extra = dict(factor_sizes)
            for key, value in (("reduction_factors", reduction_factors),
                               ("need_replication_factors", need_replication_factors),
                               ("permutation_factors", permutation_factors)):
                if value:
                    extra[key] = value
            if extra:
                raise ValueError(f"Unknown keyword arguments: {extra}")
            self.sharding_rule = sharding_rule
        else:
            self.sharding_rule = str_to_sdy_sharding_rule(
                sharding_rule, reduction_factors=reduction_factors,
                need_replication_factors=need_replication_factors,
                permutation_factors=permutation_factors, **factor_sizes)
        return partition

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = _positional(self.fun, args, kwargs)
        static = set(self.static_argnums)
        static_args = tuple(args[i] for i in self.static_argnums)
        if any(isinstance(leaf, Tracer) for leaf in tree_leaves(static_args)):
            raise UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to acustom_partitioning "
                "function in a position indicated as static bystatic_argnums. ")
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        flat, in_tree = tree_flatten(dynamic)
        out_tree_box: list[Any] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            full = list(args)
            dyn = iter(tree_unflatten(in_tree, list(leaves)))
            for i in range(len(full)):
                if i not in static:
                    full[i] = next(dyn)
            out_leaves, out_tree = tree_flatten(self.fun(*full))
            out_tree_box.append(out_tree)
            return out_leaves

        call, consts = hoist_tracer_consts(trace_to_jaxpr(flat_fun,
                                                          [get_aval(x) for x in flat]))
        rule, propagate, infer = self._rules_for_partitioner()
        outs = custom_partitioning_p.bind(
            *consts, *flat, call=call, partition=self.partition,
            propagate_user_sharding=propagate, infer_sharding_from_operands=infer,
            decode_shardings=self.decode_shardings, sharding_rule=rule, in_tree=in_tree,
            out_tree=out_tree_box[0], static_args=static_args)
        return tree_unflatten(out_tree_box[0], list(outs))

    def _rules_for_partitioner(self) -> tuple[Any, Any, Any]:
        """(sharding_rule, propagate_user_sharding, infer_sharding_from_operands) as the
        partitioner in use takes them: Shardy reads the rule only."""
        decode = self.decode_shardings  # AttributeError before def_partition, as in JAX
        del decode
        if not config.read("jax_use_shardy_partitioner"):
            return None, self.propagate_user_sharding, self.infer_sharding_from_operands
        if self.sharding_rule is None and (self.propagate_user_sharding is not None or
                                           self.infer_sharding_from_operands is not None):
            raise NotImplementedError(
                "Shardy is used, but sharding propagation callbacks instead of sharding_rule "
                "are provided. Need to provide sharding_rule to migrate to Shardy.")
        return self.sharding_rule, None, None


def _positional(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """All arguments by position, defaults filled in, as JAX passes them."""
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError("keyword arguments could not be resolved to positions")
    return bound.args
