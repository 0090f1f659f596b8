"""`from_stablehlo(text)`: an `Exported` of a StableHLO module that JAX (or jaxlite) printed,
run by jaxlite's own pipeline.

What a JAX user has in hand is `jax.jit(f).lower(*args).as_text()`; this turns that text
back into something callable, the way `jax.export.deserialize` turns bytes into an
`Exported`. The text carries no pytree structure, so the Exported is flat: `call(*arrays)`
takes one array per argument of `@main` (`in_avals` from its signature) and returns one
array when `@main` has one result, else a tuple of them (`out_avals`). It has no VJP (there
is no Python function to differentiate), and names itself after the module (`jit_f`).
A module with dynamic sizes (`tensor<?x4xf32>`, shape polymorphism) gives an Exported with
symbolic sizes that each call specializes (`from_stablehlo_dynamic.py`).
"""
from __future__ import annotations

from jaxlite.core.avals import ShapedArray
from jaxlite.transforms.export.exported import Exported
from jaxlite.transforms.export.from_stablehlo_dynamic import RefinedExported, symbolic_avals
from jaxlite.tree_util import tree_flatten
from jaxlite.xla.stablehlo.builder import entry_results
from jaxlite.xla.stablehlo.parser import parse
from jaxlite.xla.stablehlo.reader import entry_arguments, parse_module
from jaxlite.xla.stablehlo.refinement import is_dynamic
from jaxlite.xla.text import print_module

__all__ = ["from_stablehlo"]


def from_stablehlo(text: str, platforms: tuple[str, ...] = ("cpu",)) -> Exported:
    """The `Exported` of StableHLO text as `jax.jit(f).lower(*args).as_text()` prints it
    (jaxlite's counterpart of reading `jax.export`'s serialized module): flat arguments,
    one result or a tuple. Raises NotImplementedError naming an op and its line that
    jaxlite cannot read."""
    parsed = parse(text)
    if any(is_dynamic(shape) for shape in entry_arguments(parsed)):
        in_avals, out_avals = symbolic_avals(parsed, entry_results(parsed))
        _, in_tree = tree_flatten((tuple(in_avals), {}))
        _, out_tree = tree_flatten(out_avals[0] if len(out_avals) == 1 else out_avals)
        return RefinedExported(parsed.name, in_tree, in_avals, out_tree, out_avals,
                               tuple(platforms), "", stablehlo_text=text)
    module = parse_module(text)
    in_avals = tuple(ShapedArray(p.shape.dims, p.shape.dtype)
                     for p in module.entry.parameters)
    root = module.entry.root.shape
    out_avals = tuple(ShapedArray(s.dims, s.dtype)
                      for s in (root.tuple_shapes if root.is_tuple else (root,)))
    _, in_tree = tree_flatten((tuple(in_avals), {}))
    _, out_tree = tree_flatten(out_avals[0] if len(out_avals) == 1 else out_avals)
    return Exported(module.name, in_tree, in_avals, out_tree, out_avals, tuple(platforms),
                    print_module(module))
