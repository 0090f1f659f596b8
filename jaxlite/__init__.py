"""jaxlite: a JAX-compatible array library with its own compiler.

`import jaxlite as jax` gives the transformations (`jit`, `grad`, `vmap`, `jvp`, `vjp`, ...),
`jaxlite.numpy`, `jaxlite.lax` and `jaxlite.tree_util`, with JAX's semantics.
"""
from jaxlite.runtime import dispatch as _dispatch  # noqa: F401  (installs eager execution)
from jaxlite import lax, tree_util
from jaxlite import numpy  # noqa: F401  (fills the operator table of arrays and tracers)
from jaxlite import image, nn, ops, random, scipy  # noqa: F401
from jaxlite.transforms.autodiff import grad, jvp, linearize, value_and_grad, vjp
from jaxlite.core.basearray import Array
from jaxlite.config import config, disable_jit, enable_x64
from jaxlite import (dtypes, flatten_util, sharding, stages, tree,  # noqa: F401
                     typing)
from jaxlite.backends.base import Device
from jaxlite.runtime.array import Shard
from jaxlite.runtime.sharding import NamedSharding, make_mesh, set_mesh
from jaxlite.runtime.sharding import PartitionSpec as P
from jaxlite.sharding import reshard
from jaxlite import ref  # noqa: F401  (public module)
from jaxlite.core.avals import typeof
from jaxlite.ref import Ref, ds, empty_ref, free_ref, freeze, new_ref
from jaxlite import lib, monitoring, profiler, version  # noqa: F401  (public modules)
from jaxlite._namespaces import ad, memory
from jaxlite.runtime.environment import (host_count, host_id, host_ids, live_arrays,
                                         make_array_from_callback,
                                         make_array_from_process_local_data,
                                         make_array_from_single_device_arrays,
                                         print_environment_info, process_count,
                                         process_index, process_indices)
from jaxlite.transforms.jit import clear_caches
from jaxlite.version import __version_info__
from jaxlite.lax.custom_derivatives import custom_jvp, custom_vjp
from jaxlite.runtime.device import (block_until_ready, copy_to_host_async, default_backend,
                                    device_count, device_get, device_put, devices,
                                    local_device_count, local_devices)
from jaxlite.errors import ConcretizationTypeError, UnexpectedTracerError
from jaxlite.transforms.jacobians import hessian, jacfwd, jacobian, jacrev
from jaxlite.transforms.jit import jit
from jaxlite.lax.ad_util import stop_gradient
from jaxlite.transforms.tracing import (ShapeDtypeStruct, checkpoint, eval_shape, make_jaxpr,
                                       remat)
from jaxlite.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, \
    tree_unflatten
from jaxlite.transforms.vmap import vmap
from jaxlite.transforms.pmap import pmap
from jaxlite.transforms.shard_map import shard_map, smap
from jaxlite._callback import effects_barrier, pure_callback
from jaxlite import debug, experimental  # noqa: F401  (public modules)
from jaxlite import distributed, dlpack  # noqa: F401  (public modules)
from jaxlite import (ad_checkpoint, api_util, custom_batching,  # noqa: F401  (public modules)
                     custom_derivatives, extend, interpreters)
from jaxlite.core.source_info import named_call, named_scope
from jaxlite.core.trace_state import ensure_compile_time_eval
from jaxlite.custom_derivatives import closure_convert, custom_gradient
from jaxlite.lax.checkpoint_policies import checkpoint_policies
from jaxlite.transforms.vjp_tools import fwd_and_bwd, linear_transpose

# Options as functions: `with jax.debug_nans(True): ...` (JAX's `State` objects).
from jaxlite._jax_options import (  # noqa: E402
    allow_f16_reductions, array_garbage_collection_guard, auto_pcast, check_tracer_leaks,
    make_user_context,
    checking_leaks, debug_infs, debug_key_reuse, debug_nans, default_device,
    default_matmul_precision, default_prng_impl, enable_checks, enable_custom_prng,
    explain_cache_misses, jax2tf_associative_scan_reductions, legacy_prng_key, log_compiles,
    no_execution, no_tracing, numpy_dtype_promotion, numpy_rank_promotion,
    remove_size_one_mesh_axis_from_type, softmax_custom_jvp, thread_guard,
    threefry_partitionable, transfer_guard, transfer_guard_device_to_device,
    transfer_guard_device_to_host, transfer_guard_host_to_device)

float0 = dtypes.float0
numpy.ndarray = Array  # jnp.ndarray is jax.Array, as in JAX
from jaxlite.version import __version__  # noqa: E402

# Last: the hook module reads the finished namespace.
from jaxlite.compat import install_as_jax  # noqa: E402

__all__ = [
    "Array", "ConcretizationTypeError", "ShapeDtypeStruct", "UnexpectedTracerError",
    "block_until_ready", "checkpoint", "config", "custom_jvp", "custom_vjp", "debug", "default_backend",
    "device_count", "device_get", "device_put", "devices", "disable_jit", "dtypes", "effects_barrier", "enable_x64",
    "eval_shape", "experimental", "float0", "grad", "hessian", "install_as_jax", "jacfwd", "jacobian", "jacrev", "jit", "jvp",
    "lax", "linearize", "local_device_count", "local_devices", "make_jaxpr", "nn", "numpy", "pmap", "pure_callback",
    "random", "remat", "scipy", "shard_map", "smap", "stop_gradient", "tree_flatten", "tree_leaves", "tree_map",
    "tree_structure", "tree_unflatten", "tree_util", "value_and_grad", "vjp", "vmap",
]
