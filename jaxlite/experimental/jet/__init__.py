"""`jaxlite.experimental.jet` (mirrors `jax.experimental.jet`): Taylor-mode automatic
differentiation.

`jet(fun, primals, series)` pushes a truncated Taylor series of the inputs through `fun`
in one pass, giving its higher derivatives along a curve without nesting first-order
differentiation. `_trace` holds the jet trace and `jet`; `_rules`, the rule of each
primitive (extend `jet_rules` with `defzero`, `deflinear`, `def_deriv`, `def_comp`).
"""
from jaxlite.core.util import safe_zip, unzip2, weakref_lru_cache
from jaxlite.experimental.jet._rules import (def_comp, def_deriv, deflinear, defzero,
                                             deriv_prop, linear_prop, zero_prop)
from jaxlite.experimental.jet._trace import (JetTrace, JetTracer, ZeroSeries, ZeroTerm,
                                             call_param_updaters, fact, jet, jet2, jet_fun,
                                             jet_rules, jet_subtrace, traceable, zero_series,
                                             zero_term)
from jaxlite.tree_util import (register_pytree_node, tree_flatten, tree_structure,
                               tree_unflatten, treedef_is_leaf)

__all__ = ["JetTrace", "JetTracer", "ZeroSeries", "ZeroTerm", "call_param_updaters",
           "def_comp", "def_deriv", "deflinear", "defzero", "deriv_prop", "fact", "jet",
           "jet2", "jet_fun", "jet_rules", "jet_subtrace", "linear_prop",
           "register_pytree_node", "safe_zip", "traceable", "tree_flatten", "tree_structure",
           "tree_unflatten", "treedef_is_leaf", "unzip2", "weakref_lru_cache", "zero_prop",
           "zero_series", "zero_term"]
