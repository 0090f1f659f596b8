"""Structural primitives on typed keys, rewritten on the keys' physical data.

Mirrors what JAX's extended-dtype rules do for `key<fry>` arrays. Reshaping, slicing,
indexing, broadcasting, transposing, concatenating and selecting do not look at the values,
so applied to keys they are the same operation on the uint32 key data, mapped over the data's
trailing `key_shape` axes: each rule unwraps the keys, `vmap`s the primitive over those axes
and wraps the result. `eq` and `ne` compare the data and reduce over those axes. The rules
are installed as the primitives' `extended_rule` (see `Primitive.bind`), so the staged jaxpr
holds `random_unwrap`, the physical operation and `random_wrap`, and no lowering or backend
ever sees a key dtype.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite import lax
from jaxlite.core.primitive import Primitive, registry
from jaxlite.random._prng import KeyTy, is_typed_key, random_unwrap, random_wrap
from jaxlite.transforms.vmap import vmap

__all__ = ["install_key_rules"]


def _all(n: int) -> range:
    return range(n)


def _first(n: int) -> range:
    return range(1)


def _first_two(n: int) -> range:
    return range(2)


def _cases(n: int) -> range:
    return range(1, n)  # select_n(which, *cases)


def _scatter_operands(n: int) -> tuple[int, ...]:
    return (0, 2)  # scatter(operand, indices, updates)


# primitive name -> the positions of its operands that are keys (the others never are).
_KEY_OPERANDS: dict[str, Callable[[int], Sequence[int]]] = {
    "broadcast_in_dim": _first, "reshape": _first, "transpose": _first, "squeeze": _first,
    "slice": _first, "rev": _first, "dynamic_slice": _first, "gather": _first,
    "dynamic_update_slice": _first_two, "pad": _first_two, "concatenate": _all,
    "select_n": _cases, "scatter": _scatter_operands, "stop_gradient": _first,
    "split": _first, "unstack": _first, "stack": _all, "tile": _first,
    "eq": _first_two, "ne": _first_two,
}


def _operand_error(primitive: Primitive, args: Sequence[Any]) -> TypeError:
    names = ", ".join(str(getattr(a, "dtype", type(a).__name__)) for a in args)
    return TypeError(f"{primitive.name} does not accept dtypes {names}: typed PRNG keys only "
                     "take part in structural operations (indexing, reshaping, concatenating, "
                     "selecting, comparing); use jax.random.key_data for their bits.")


def _check_operands(primitive: Primitive, args: Sequence[Any]) -> KeyTy:
    """The key dtype of the operands, which must be keys exactly where keys belong."""
    positions = set(_KEY_OPERANDS[primitive.name](len(args)))
    key_dtypes = {a.dtype for a in args if is_typed_key(a)}
    if len(key_dtypes) != 1 or any(is_typed_key(a) != (i in positions)
                                   for i, a in enumerate(args)):
        raise _operand_error(primitive, args)
    return key_dtypes.pop()


def _on_physical_data(primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
    """`primitive` applied to the keys' data, mapped over the data's key_shape axes."""
    dtype = _check_operands(primitive, args)
    keyed = tuple(is_typed_key(a) for a in args)
    data = [random_unwrap(a) if k else a for a, k in zip(args, keyed)]

    def apply(*operands: Any) -> Any:
        return primitive.bind(*operands, **params)
    for _ in dtype.physical_shape:  # innermost map first: the last axis is mapped outermost
        apply = vmap(apply, in_axes=tuple(-1 if k else None for k in keyed), out_axes=-1)
    return apply(*data), dtype


def _structural_rule(primitive: Primitive) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        out, dtype = _on_physical_data(primitive, args, params)
        if primitive.multiple_results:
            return [random_wrap(o, impl=dtype.impl) for o in out]
        return random_wrap(out, impl=dtype.impl)
    return rule


def _comparison_rule(primitive: Primitive, combine: Callable[..., Any]) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        out, dtype = _on_physical_data(primitive, args, params)
        k = len(dtype.physical_shape)
        return combine(out, tuple(range(np.ndim(out) - k, np.ndim(out))))
    return rule


def _convert_rule(operand: Any, *, new_dtype: Any, **params: Any) -> Any:
    # Keys convert only to their own dtype (jnp.asarray(keys) does that).
    if new_dtype == operand.dtype and is_typed_key(operand):
        return operand
    raise TypeError(f"convert_element_type cannot convert {operand.dtype} to {new_dtype}: "
                    "typed PRNG keys are not numbers; use jax.random.key_data for their bits.")


# Higher-order primitives pass keys on to their jaxprs unchanged, and identities pass them
# through as their data.
_PASSING_KEYS = ("jit", "cond", "while", "scan", "checkpoint", "custom_jvp_call",
                 "custom_vjp_call", "custom_lin", "copy", "device_put", "optimization_barrier")


def install_key_rules() -> None:
    """Set the `extended_rule` of every structural primitive, and let the higher-order
    primitives take keys (once, at import)."""
    for name in _PASSING_KEYS:
        registry[name].takes_extended = True
    for name in _KEY_OPERANDS:
        primitive = registry[name]
        if name == "eq":
            primitive.extended_rule = _comparison_rule(primitive, lax.reduce_and)
        elif name == "ne":
            primitive.extended_rule = _comparison_rule(primitive, lax.reduce_or)
        else:
            primitive.extended_rule = _structural_rule(primitive)
    registry["convert_element_type"].extended_rule = _convert_rule
