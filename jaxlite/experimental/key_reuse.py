"""`jax.experimental.key_reuse`: checking that random keys are used once.

In JAX 0.10.2 this module has no public names left (the checks are switched on with the
option `jax_debug_key_reuse`); it exists so that `import jax.experimental.key_reuse` works.
"""
