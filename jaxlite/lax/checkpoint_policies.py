"""The policies `jax.checkpoint` accepts (mirrors `jax.checkpoint_policies`).

A policy is called as `policy(primitive, *input_avals, **params)` for each equation of a
checkpointed function and answers whether its outputs are saved for the backward pass
(True or `Saveable`, or `Offloadable`, which jaxlite treats as saved: it has one memory)
or recomputed (False or `Recompute`). See `lax.remat` for how the answer is used.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable

from jaxlite.lax.convolution import conv_general_dilated_p
from jaxlite.lax.dot import dot_general_p
from jaxlite.lax.remat import Offloadable, Recompute, Saveable, name_p

__all__ = ["checkpoint_policies", "everything_saveable", "nothing_saveable", "dots_saveable",
           "dots_with_no_batch_dims_saveable", "save_only_these_names",
           "save_any_names_but_these", "save_anything_except_these_names",
           "save_from_both_policies", "save_and_offload_only_these_names",
           "offload_dot_with_no_batch_dims"]


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every value, as without checkpointing."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing but the inputs: recompute everything (checkpoint's default)."""
    return False


def _dot_has_no_batch_dims(params: dict[str, Any]) -> bool:
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


@dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix products (and convolutions, unless only products without
    batch dimensions are asked for)."""

    only_if_no_batch_dims: bool

    def __call__(self, prim: Any, *avals: Any, **params: Any) -> bool:
        if self.only_if_no_batch_dims:
            return prim is dot_general_p and _dot_has_no_batch_dims(params)
        return prim is dot_general_p or prim is conv_general_dilated_p


dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


@dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values named (with `checkpoint_name`) by one of `saveable_names`."""

    saveable_names: frozenset

    def __call__(self, prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in self.saveable_names


@dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only named values, except those with one of `names`."""

    names: frozenset

    def __call__(self, prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names_which_can_be_saved: str) -> SaveOnlyTheseNames:
    """Save only the values named by one of the given names."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save: str) -> SaveAnyNamesButThese:
    """Save only named values, excluding the given names."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_anything_except_these_names(*names_not_to_save: str) -> Callable[..., bool]:
    """Save any value except those with the given names (JAX 0.10.2 saves everything: its
    implementation ignores the names; so does this one, to give JAX's results)."""
    return lambda *_, **__: True


def save_from_both_policies(policy_1: Callable[..., Any],
                            policy_2: Callable[..., Any]) -> Callable[..., bool]:
    """Save what either policy saves (both must answer with bools)."""
    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        out1, out2 = policy_1(prim, *avals, **params), policy_2(prim, *avals, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got: "
                f"{out1} and {out2}. Please write a custom policy function directly, rather "
                "than using this helper function.")
        return out1 or out2
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved: Any,
                                      names_which_can_be_offloaded: Any, offload_src: Any,
                                      offload_dst: Any) -> Callable[..., Any]:
    """Save the values with the first names, offload those with the second (jaxlite has
    one memory: offloaded values are saved)."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    common = saved & offloaded
    if common:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={common}")

    def policy(prim: Any, *avals: Any, **params: Any) -> Any:
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def offload_dot_with_no_batch_dims(offload_src: Any, offload_dst: Any) -> Callable[..., Any]:
    """Offload the results of products without batch dimensions (saved, in jaxlite)."""
    def policy(prim: Any, *avals: Any, **params: Any) -> Any:
        if prim is dot_general_p and _dot_has_no_batch_dims(params):
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)
