"""Ordering tokens: `create_token` and `after_all` (and their primitives).

Mirrors `jax.lax.create_token` and `jax.lax.after_all`. A token orders side effects; it
carries no data. jaxlite orders side effects by program order and has no token type in its
core, so a token is represented by an empty bool array (`bool[0]`): it flows through `jit`,
`vmap` and `grad` like any value, and `after_all` joins tokens into a new one.

Differences from JAX: a token is a `bool[0]` array, not a `jax.core.Token` object, and any
`bool[0]` array is accepted where a token is expected.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.tree_util import tree_flatten
from jaxlite.xla.ir import HloInstruction

__all__ = ["create_token", "after_all", "create_token_p", "after_all_p"]

TOKEN = ShapedArray((0,), np.dtype(np.bool_))


def _is_token(aval: ShapedArray) -> bool:
    return aval.shape == TOKEN.shape and aval.dtype == TOKEN.dtype


def _lower_token(ctx: LoweringContext, *operands: HloInstruction, **params: Any) -> Any:
    return hlo.constant(ctx, False, np.bool_, (0,))


create_token_p = Primitive("create_token")
create_token_p.abstract_eval = lambda *operands: TOKEN
create_token_p.reference = lambda *operands: np.zeros((0,), np.bool_)
create_token_p.batch = lambda axis_size, args, dims: (create_token_p.bind(*args), None)
create_token_p.lower = _lower_token
ad.defjvp_zero(create_token_p)


def _after_all_abstract_eval(*operands: ShapedArray) -> ShapedArray:
    if not all(_is_token(o) for o in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return TOKEN


after_all_p = Primitive("after_all")
after_all_p.abstract_eval = _after_all_abstract_eval
after_all_p.reference = lambda *operands: np.zeros((0,), np.bool_)
after_all_p.batch = lambda axis_size, args, dims: (after_all_p.bind(*args), None)
after_all_p.lower = _lower_token
ad.defjvp_zero(after_all_p)


def create_token(_: Any = None) -> Any:
    """A new ordering token (mirrors `jax.lax.create_token`); the argument is ignored."""
    return create_token_p.bind()


def after_all(*operands: Any) -> Any:
    """A token ordered after all of `operands`, which must be tokens (mirrors
    `jax.lax.after_all`)."""
    return after_all_p.bind(*tree_flatten(list(operands))[0])

