"""Developer tools that exercise jaxlite as a whole (top layer): `jaxlite.tools.fuzz`, the
differential fuzzer that runs random programs eagerly, under jit on each backend, through
grad and vmap, and beside real JAX in another interpreter."""
