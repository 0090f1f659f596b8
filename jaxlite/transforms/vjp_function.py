"""The function `vjp` returns (mirrors the `VJP` object of `jax.vjp`).

It is a pytree whose leaves are the residuals of the linearized function: passed into `jit`
(or `vmap`, or returned from a jitted function) it travels as those arrays, and the linear
jaxpr that consumes them rides in the tree's static part. Calling it transposes that jaxpr
for a cotangent shaped like the primal output.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import Jaxpr
from jaxlite.interpreters.ad import Zero, tangent_aval
from jaxlite.interpreters.transpose import UndefinedPrimal, backward_pass
from jaxlite.lax.ad_util import zeros_like_tangent
from jaxlite.tree_util import PyTreeDef, register_pytree_node, tree_flatten, tree_unflatten

__all__ = ["VJP", "flat_pullback"]


@dataclass(frozen=True)
class _Signature:
    """What a pullback needs besides its residuals; hashable, so that trees holding a VJP
    can key jit's caches."""

    jaxpr: Jaxpr
    ignored_outputs: tuple[Any, ...]  # avals of outputs given zero cotangents (aux)
    in_avals: tuple[Any, ...]
    differentiable: tuple[bool, ...]


def flat_pullback(signature: _Signature, residuals: Sequence[Any],
                  cotangents: Sequence[Any]) -> list[Any]:
    """The cotangents of the inputs' leaves, given the outputs' (zeros where an input is
    not differentiable)."""
    cts = list(cotangents) + [Zero(a) for a in signature.ignored_outputs]
    undefined = [UndefinedPrimal(v.aval) for v in signature.jaxpr.invars]
    results = iter(backward_pass(signature.jaxpr, list(residuals), undefined, cts))
    grads = []
    for aval, diff in zip(signature.in_avals, signature.differentiable):
        ct = next(results) if diff else Zero(tangent_aval(aval))
        grads.append(zeros_like_tangent(ct.aval) if isinstance(ct, Zero) else ct)
    return grads


class VJP:
    """The pullback of `jaxlite.vjp`: `f_vjp(cotangent)` returns one cotangent per primal
    argument, as a tuple (mirrors JAX's `VJP`); a pytree of its residuals."""

    def __init__(self, signature: _Signature, residuals: Sequence[Any], in_tree: PyTreeDef,
                 out_tree: PyTreeDef, out_avals: tuple[Any, ...]) -> None:
        self.signature = signature
        self.residuals = list(residuals)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.out_avals = out_avals

    def __call__(self, cotangent: Any) -> Any:
        ct_leaves, ct_tree = tree_flatten(cotangent)
        if ct_tree != self.out_tree:
            raise ValueError(f"unexpected tree structure: the cotangent passed to the vjp "
                             f"function must have the structure of the primal output "
                             f"{self.out_tree}, got {ct_tree}.")
        for ct, aval in zip(ct_leaves, self.out_avals):
            _check_cotangent(get_aval(ct), aval)
        return tree_unflatten(self.in_tree, flat_pullback(self.signature, self.residuals,
                                                          ct_leaves))

    def __repr__(self) -> str:
        return f"VJP(residuals={len(self.residuals)}, out_tree={self.out_tree})"


def _check_cotangent(ct_aval: Any, out_aval: Any) -> None:
    expected = tangent_aval(out_aval)
    if ct_aval.shape != expected.shape or ct_aval.dtype != expected.dtype:
        raise ValueError(
            "unexpected type for the cotangent passed to the vjp function: got "
            f"{ct_aval.str_short()}, but expected {expected.str_short()} because the "
            f"corresponding output of the differentiated function is {out_aval.str_short()}.")


register_pytree_node(
    VJP,
    lambda v: (v.residuals, (v.signature, v.in_tree, v.out_tree, v.out_avals)),
    lambda static, residuals: VJP(static[0], residuals, *static[1:]))
