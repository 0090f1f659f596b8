"""The rest of JAX 0.10.2's configuration options, so that code which sets them runs.

`jaxlite.config` defines the options jaxlite implements. Every other option JAX has is
declared here, with JAX's default and its `JAX_<NAME>` environment variable, in one of three
groups:

- `NO_EFFECT`: options about things jaxlite has no counterpart for (accelerator runtimes,
  XLA's own caches and flags, Pallas, TPU topology, logging detail, internal switches
  between equivalent implementations). Any value is accepted; none changes a result.
- `DIAGNOSTICS`: checks and explanations jaxlite runs (`jax_check_tracer_leaks`,
  `jax_explain_cache_misses`); they change what is reported, never a result.
- `DEFAULT_ONLY`: options that change what a program computes (which random bits, which
  dtype) or what it refuses. jaxlite implements their default only; asking for another
  value raises `NotImplementedError` instead of silently computing something else.

The `State` objects at the end are the functions `jax.debug_nans(True)`,
`jax.numpy_dtype_promotion("strict")`, ...: each returns a context manager that sets its
option for a block, as JAX's do.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

from jaxlite.config import config

NO_EFFECT: dict[str, Any] = {
    "check_vma": False, "eager_constant_folding": False,
    "jax2tf_associative_scan_reductions": False, "jax2tf_default_native_serialization": True,
    "jax_array_garbage_collection_guard": None, "jax_auto_pcast": True,
    "jax_backend_target": "", "jax_bcoo_cusparse_lowering": False,
    "jax_captured_constants_report_frames": 0, "jax_captured_constants_warn_bytes": 2000000000,
    "jax_check_proxy_envs": True, "jax_check_static_indices": False,
    "jax_compilation_cache_check_contents": False,
    "jax_compilation_cache_expect_pgle": False,
    "jax_compilation_cache_include_metadata_in_key": False,
    "jax_compilation_cache_max_size": -1, "jax_compiler_detailed_logging_min_ops": 10,
    "jax_compiler_enable_remat_pass": True, "jax_cpu_collectives_implementation": "gloo",
    "jax_cpu_enable_async_dispatch": True, "jax_cpu_get_global_topology_timeout_minutes": 5,
    "jax_cpu_get_local_topology_timeout_minutes": 2,
    "jax_cross_host_transfer_socket_address": "",
    "jax_cross_host_transfer_timeout_seconds": None,
    "jax_cross_host_transfer_transfer_size": None, "jax_cross_host_transport_addresses": "",
    "jax_cuda_visible_devices": "all", "jax_custom_vjp3": False,
    "jax_debug_leaked_clients_on_clear_backends": False, "jax_debug_log_modules": "",
    "jax_disable_bwd_checks": False, "jax_disable_most_optimizations": False,
    "jax_disable_vmap_shmap_error": False, "jax_disallow_mesh_context_manager": False,
    "jax_distributed_debug": False, "jax_dump_ir_modes": "stablehlo", "jax_dump_ir_to": "",
    "jax_embedded_constants_max_bytes": 32, "jax_enable_compilation_cache": True,
    "jax_enable_pgle": False, "jax_enable_preemption_service": True,
    "jax_enable_recoverability": False, "jax_exec_time_optimization_effort": 0.0,
    "jax_experimental_unsafe_xla_runtime_errors": False,
    "jax_export_calling_convention_version": 10,
    "jax_export_ignore_forward_compatibility": False,
    "jax_force_dcn_cross_host_transfers": False,
    "jax_hlo_source_file_canonicalization_regex": None,
    "jax_include_debug_info_in_dumps": True, "jax_include_full_tracebacks_in_locations": True,
    "jax_log_checkpoint_residuals": False, "jax_logging_level": "NOTSET",
    "jax_memory_fitting_effort": 0.0, "jax_memory_fitting_level": "O2",
    "jax_mock_gpu_topology": "", "jax_mosaic_allow_hlo": False,
    "jax_mutable_array_checks": True, "jax_oneapi_visible_devices": "all",
    "jax_optimization_level": "UNKNOWN", "jax_pallas_enable_debug_checks": False,
    "jax_pallas_poison_buffers": False, "jax_pallas_use_mosaic_gpu": True,
    "jax_pallas_verbose_errors": False,
    "jax_persistent_cache_enable_xla_caches": "xla_gpu_per_fusion_autotune_cache_dir",
    "jax_persistent_cache_min_compile_time_secs": 1.0,
    "jax_persistent_cache_min_entry_size_bytes": 0, "jax_pgle_aggregation_percentile": 90,
    "jax_pgle_profiling_runs": 3, "jax_pjrt_client_create_options": None,
    "jax_platform_name": "", "jax_pprint_use_color": True,
    "jax_ragged_dot_use_gpu_pallas_triton_lowering": False,
    "jax_ragged_dot_use_ragged_dot_instruction": True,
    "jax_raise_persistent_cache_errors": False, "jax_refs_to_pins": False,
    "jax_remat3": False, "jax_remove_custom_partitioning_ptr_from_cache_key": False,
    "jax_remove_size_one_mesh_axis_from_type": False, "jax_rocm_visible_devices": "all",
    "jax_scan3": False, "jax_send_traceback_to_runtime": "off",
    "jax_serialization_version": 0, "jax_share_binary_between_hosts": False,
    "jax_share_binary_between_hosts_timeout_ms": 1200000,
    "jax_sort_devices_by_process_index": True, "jax_source_url_schema": None,
    "jax_thread_guard": False, "jax_threefry_gpu_kernel_lowering": False,
    "jax_traceback_in_locations_limit": 100,
    "jax_tracer_error_num_traceback_frames": 5, "jax_use_direct_linearize": True,
    "jax_use_emit_pipeline_primitive": False, "jax_use_magma": "auto",
    "jax_use_shardy_partitioner": True, "jax_use_simplified_jaxpr_constants": False,
    "jax_xla_backend": "", "jax_xla_profile_version": 0, "mock_num_gpu_processes": 0,
    # Diagnostics jaxlite does not run yet (the debugging-tools issue): with them on, a
    # program computes the same values.
    "jax_enable_checks": False, "jax_debug_key_reuse": False,
    # Only f16 reductions exist here either way: JAX's flag refuses them when False.
    "jax_allow_f16_reductions": True,
}

# Diagnostics jaxlite runs, with their help text: they change what is reported, never a
# result, so they stay out of the tracing context.
DIAGNOSTICS: dict[str, str] = {
    "jax_check_tracer_leaks":
        "When a transformation (jit, vmap, grad, a loop body) ends, raise if a tracer it "
        "made is still referenced from outside it (a global, an attribute, a closure), naming "
        "where it was made and who holds it. Slow: it runs the garbage collector each time.",
    "jax_explain_cache_misses":
        "Log (logger 'jax._src.interpreters.partial_eval', level WARNING) why each call of a "
        "jitted function had to trace it again: a new function, or what differs from the "
        "closest signature seen before (argument types, pytree, static values, options).",
}

DEFAULT_ONLY: dict[str, tuple[Any, str]] = {
    "jax_threefry_partitionable": (True, "the other setting draws different random bits"),
    "jax_default_prng_impl": ("threefry2x32", "jaxlite has only the threefry2x32 PRNG"),
    "jax_enable_custom_prng": (False, "custom PRNG implementations are not supported"),
    "jax_high_dynamic_range_gumbel": (False, "the other setting draws different samples"),
    "jax_softmax_custom_jvp": (False, "the other setting changes softmax's derivative"),
    "jax_explicit_x64_dtypes": ("warn", "only the default handling of explicit 64-bit dtypes "
                                "with x64 off is built"),
    "jax_no_execution": (False, "execution guards are not built"),
    "jax_no_tracing": (False, "tracing guards are not built"),
    "jax_transfer_guard": (None, "transfer guards are not built"),
    "jax_transfer_guard_host_to_device": (None, "transfer guards are not built"),
    "jax_transfer_guard_device_to_host": (None, "transfer guards are not built"),
    "jax_transfer_guard_device_to_device": (None, "transfer guards are not built"),
    "jax_default_device": (None, "jaxlite has one device per platform; pass it to "
                           "device_put or jit(device=...) instead"),
    "jax_error_checking_behavior_divide": ("ignore", "runtime error checks are not built"),
    "jax_error_checking_behavior_nan": ("ignore", "runtime error checks are not built"),
    "jax_error_checking_behavior_oob": ("ignore", "runtime error checks are not built"),
}


def _env_value(name: str, default: Any) -> Any:
    raw = os.environ.get(name.upper())
    if raw is None:
        return default
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return type(default)(raw)
    return raw


def _plain(value: Any) -> Any:
    # JAX's enum-valued options accept the enum or its string value.
    return getattr(value, "value", value)


def _default_only(name: str, default: Any, why: str) -> Callable[[Any], Any]:
    def validate(value: Any) -> Any:
        value = _plain(value)
        if isinstance(value, str) and isinstance(default, str):
            value = value.lower()
        if value != default and not (isinstance(default, bool) and value == int(default)):
            raise NotImplementedError(
                f"jaxlite implements {name}={default!r} only, not {value!r}: {why}.")
        return value
    return validate


def _as_flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _declare_all() -> None:
    for name, help_text in DIAGNOSTICS.items():
        config.define(name, _env_value(name, False), help_text, _as_flag)
    for name, default in NO_EFFECT.items():
        config.define(name, _env_value(name, default),
                      "Accepted for compatibility with JAX; no effect in jaxlite.", _plain)
    for name, (default, why) in DEFAULT_ONLY.items():
        config.define(name, _env_value(name, default),
                      f"Only the default ({default!r}) is implemented: {why}.",
                      _default_only(name, default, why))


_declare_all()


class State:
    """An option as a function: `state(value)` is a context manager that sets it for a block
    (mirrors the `jax.debug_nans`, `jax.numpy_dtype_promotion`, ... objects)."""

    def __init__(self, option: str) -> None:
        self.option = option
        self.__name__ = option[len("jax_"):] if option.startswith("jax_") else option

    @property
    def value(self) -> Any:
        return config.read(self.option)

    def __call__(self, new_val: Any = True) -> contextlib.AbstractContextManager:
        return config.override(self.option, new_val)

    def __repr__(self) -> str:
        return f"<jaxlite option {self.option}={self.value!r}>"


def make_user_context(default_value: Any = None) -> State:
    """A value that `jit`'s caches key on (mirrors `jax.make_user_context`): code run under
    `with context(v):` traces and compiles anew for each new `v`."""
    count = sum(option.startswith("jaxlite_user_context_") for option in config.values)
    name = f"jaxlite_user_context_{count}"
    config.define(name, default_value, "A jit-cache key made by make_user_context.",
                  affects_tracing=True)
    return State(name)


def checking_leaks() -> contextlib.AbstractContextManager:
    """Context manager with `jax_check_tracer_leaks` on (mirrors `jax.checking_leaks`)."""
    return config.override("jax_check_tracer_leaks", True)


# The options as functions, under the names `jax` gives them.
allow_f16_reductions = State("jax_allow_f16_reductions")
array_garbage_collection_guard = State("jax_array_garbage_collection_guard")
auto_pcast = State("jax_auto_pcast")
check_tracer_leaks = State("jax_check_tracer_leaks")
debug_infs = State("jax_debug_infs")
debug_key_reuse = State("jax_debug_key_reuse")
debug_nans = State("jax_debug_nans")
default_device = State("jax_default_device")
default_matmul_precision = State("jax_default_matmul_precision")
default_prng_impl = State("jax_default_prng_impl")
enable_checks = State("jax_enable_checks")
enable_custom_prng = State("jax_enable_custom_prng")
explain_cache_misses = State("jax_explain_cache_misses")
jax2tf_associative_scan_reductions = State("jax2tf_associative_scan_reductions")
legacy_prng_key = State("jax_legacy_prng_key")
log_compiles = State("jax_log_compiles")
no_execution = State("jax_no_execution")
no_tracing = State("jax_no_tracing")
numpy_dtype_promotion = State("jax_numpy_dtype_promotion")
numpy_rank_promotion = State("jax_numpy_rank_promotion")
remove_size_one_mesh_axis_from_type = State("jax_remove_size_one_mesh_axis_from_type")
softmax_custom_jvp = State("jax_softmax_custom_jvp")
thread_guard = State("jax_thread_guard")
threefry_partitionable = State("jax_threefry_partitionable")
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host")
transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device")
transfer_guard = State("jax_transfer_guard")
