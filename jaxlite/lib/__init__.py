"""`jax.lib`: in JAX 0.10.2 an empty namespace over jaxlib's C++ extension (jaxlite has no
jaxlib); present so that `import jax.lib` succeeds, as code probing for it expects."""
