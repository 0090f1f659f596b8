"""Every registered primitive has every rule it needs, and a test record."""
from __future__ import annotations

import pytest

import jaxlite  # noqa: F401  (declares every primitive)
from jaxlite.core.primitive import registry
from records import all_records

# Primitives that carry a jaxpr: their rules transform the inner jaxpr, and they are tested
# through the user functions that make them (tests/test_transformations.py and friends).
TESTED_THROUGH_TRANSFORMATIONS = {
    "jit": "jax.jit in tests/test_jit.py",
    "dim_as_value": "sizes used as values of shape-polymorphic exports (x / x.shape[0], "
                    "fori_loop(0, b)) in tests/test_export_shape_poly.py",
    "pure_callback": "jax.pure_callback in tests/test_callbacks.py and tests/test_debug.py",
    "io_callback": "jax.experimental.io_callback in tests/test_callbacks.py",
    "debug_callback": "jax.debug.print/callback/breakpoint in tests/test_debug.py",
    "call_exported": "jax.export's Exported.call in tests/test_export.py and "
                     "tests/test_export_shape_poly.py (eager, jit, grad through the exported "
                     "vjp, serialized round trips)",
    "ffi_call": "jax.ffi.ffi_call in tests/test_ffi.py (C/C++ handlers built at test time: "
                "eager, jit, every vmap_method, grad through custom_vjp)",
    "checkpoint": "jax.checkpoint in tests/test_transformations.py",
    "custom_jvp_call": "jax.custom_jvp in tests/test_custom_derivatives.py",
    "custom_vjp_call": "jax.custom_vjp in tests/test_custom_derivatives.py",
    "custom_lin": "the backward pass of jax.custom_vjp in tests/test_custom_derivatives.py",
    "custom_vmap_call": "jax.custom_batching.custom_vmap in tests/extend/test_custom_batching.py",
    "linear_call": "jax.custom_derivatives.linear_call in tests/extend/test_custom_derivatives.py",
    "name": "jax.ad_checkpoint.checkpoint_name in tests/extend/test_ad_checkpoint.py",
    "custom_partitioning": "jax.experimental.custom_partitioning in "
                           "tests/api/test_custom_partitioning.py",
    "ragged_all_to_all": "no map resolves it (nor does JAX 0.10.2's vmap): its shape rule and "
                         "error in tests/named_axes/test_named_axes.py",
}
# Primitives checked against JAX 0.10.2's recorded outputs (values, jit, vmap and grads) by
# their module's tests, where a numpy reference would only re-implement them.
TESTED_AGAINST_JAX = {
    "random_gamma": "jax.random.gamma/loggamma/beta/dirichlet: tests/random/test_against_jax.py "
                    "and test_distributions.py (bits, jit, vmap, implicit-reparameterised grads)",
    "random_wrap": "jax.random.wrap_key_data: tests/random/test_typed_keys.py",
    "random_unwrap": "jax.random.key_data: tests/random/test_typed_keys.py",
    "check": "jax.experimental.checkify.check: tests/experimental/test_checkify.py",
}
# Rules a primitive may lack, with the reason.
NOT_NEEDED = {
    ("custom_lin", "jvp"): "it only appears in linear jaxprs, which are transposed, not "
                           "differentiated",
    ("custom_jvp_call", "transpose"): "not linear",
    ("custom_vjp_call", "transpose"): "not linear",
}
REQUIRED = ("abstract_eval", "jvp", "batch")


@pytest.mark.parametrize("name", sorted(registry))
def test_primitive_has_rules(name):
    primitive = registry[name]
    missing = [slot for slot in REQUIRED
               if not primitive.has_rule(slot) and (name, slot) not in NOT_NEEDED]
    if not primitive.has_rule("reference") and primitive.impl is None:
        missing.append("reference")
    if getattr(primitive, "is_linear", False) and not primitive.has_rule("transpose"):
        missing.append("transpose")
    assert not missing, f"primitive {name} lacks rules: {missing}"


@pytest.mark.parametrize("name", sorted(registry))
def test_primitive_has_test_record(name):
    if name in TESTED_THROUGH_TRANSFORMATIONS or name in TESTED_AGAINST_JAX:
        return
    assert name in all_records(), f"primitive {name} has no test record in tests/lax/records_*"
