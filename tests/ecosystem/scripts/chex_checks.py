"""chex: dataclasses, shape/tree assertions, and variants over jit and no-jit."""
import json

import chex
import jax
import jax.numpy as jnp


@chex.dataclass
class State:
    w: chex.Array
    step: int


state = State(w=jnp.arange(3.0), step=1)
chex.assert_shape(state.w, (3,))
chex.assert_type(state.w, jnp.float32)
chex.assert_trees_all_close(state, State(w=jnp.arange(3.0) * (1 + 1e-7), step=1))
doubled = jax.tree.map(lambda v: v * 2, state)
results = {}
for variant_name, wrap in (("jit", jax.jit), ("nojit", lambda f: f)):
    f = wrap(lambda s: jnp.sum(s.w ** 2))
    results[variant_name] = float(f(doubled))


@jax.jit
@chex.assert_max_traces(n=1)
def traced_once(v):
    return v + 1


traced_once(jnp.ones(2))
traced_once(jnp.zeros(2))
try:
    chex.assert_rank(state.w, 2)
    raised = False
except AssertionError:
    raised = True
print(json.dumps({"results": results, "raised": raised, "step": doubled.step}))
