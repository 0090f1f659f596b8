"""`jaxlite.example_libraries` (mirrors `jax.example_libraries`): JAX's small example
libraries, `optimizers` (first-order optimizers as init/update/get_params triples) and
`stax` (neural networks as init/apply pairs of functions)."""
