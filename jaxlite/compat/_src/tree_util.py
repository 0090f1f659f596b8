"""`jax._src.tree_util` under the hook. Needed by flax.nnx (graphlib), which tests
`type(x) in _registry` to know whether a type is a registered pytree node."""
from jaxlite.pytree.treedef import default_registry

_registry = default_registry.nodes

__all__ = ["_registry"]
