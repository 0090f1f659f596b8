"""HLO passes: each a function `HloModule -> HloModule` in its own module, with its contract
in that module's docstring (mirrors XLA's HloPassInterface, one pass per file).

A pass returns the very same module object when it changed nothing; `jaxlite.xla.pipeline`
lists the order in which the compiler runs them and repeats groups to a fixed point.
"""
from jaxlite.xla.passes.algebraic_simplifier import simplify_algebra
from jaxlite.xla.passes.constant_folding import fold_constants
from jaxlite.xla.passes.cse import eliminate_common_subexpressions
from jaxlite.xla.passes.dce import eliminate_dead_code

__all__ = [
           "eliminate_common_subexpressions",
           "eliminate_dead_code",
           "fold_constants",
           "simplify_algebra",
]
