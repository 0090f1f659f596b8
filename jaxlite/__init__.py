"""jaxlite: a JAX-compatible array library with its own compiler.

`import jaxlite as jax` gives the transformations (`jit`, `grad`, `vmap`, `jvp`, `vjp`, ...),
`jaxlite.numpy`, `jaxlite.lax`, `jaxlite.tree_util` and the rest of JAX 0.10.2's public
modules and names, with JAX's semantics. Code written for `jax` runs unchanged under
`python -m jaxlite.run` or after `jaxlite.install_as_jax()`.
"""
# Order matters in the first lines: eager execution is installed before anything computes,
# and jaxlite.numpy fills the operator table of arrays and tracers.
from jaxlite.runtime import dispatch as _dispatch  # noqa: F401
from jaxlite.runtime import eager_loops as _eager_loops  # noqa: F401
from jaxlite import lax, numpy, tree_util  # noqa: F401

# The public modules.
from jaxlite import (ad_checkpoint, api_util, custom_batching, custom_derivatives,  # noqa: F401
                     debug, distributed, dlpack, dtypes, experimental, export,
                     extend, ffi, flatten_util, image, interpreters, lib, monitoring, nn, ops,
                     profiler, random, ref, scipy, sharding, stages, tree, typing, version)

# Arrays, devices and the runtime.
from jaxlite.core.avals import typeof
from jaxlite.core.basearray import Array
from jaxlite.backends.base import Device
from jaxlite.runtime.array import Shard
from jaxlite.runtime.device import (block_until_ready, copy_to_host_async, default_backend,
                                    device_count, device_get, device_put, devices,
                                    local_device_count, local_devices)
from jaxlite.runtime.environment import (host_count, host_id, host_ids, live_arrays,
                                         make_array_from_callback,
                                         make_array_from_process_local_data,
                                         make_array_from_single_device_arrays,
                                         print_environment_info, process_count,
                                         process_index, process_indices)
from jaxlite.runtime.sharding import NamedSharding, make_mesh, set_mesh
from jaxlite.runtime.sharding import PartitionSpec as P
from jaxlite.sharding import reshard
from jaxlite.ref import Ref, ds, empty_ref, free_ref, freeze, new_ref

# Transformations.
from jaxlite.transforms.autodiff import grad, jvp, linearize, value_and_grad, vjp
from jaxlite.transforms.jacobians import hessian, jacfwd, jacobian, jacrev
from jaxlite.transforms.jit import clear_caches, jit
from jaxlite.transforms.pmap import pmap
from jaxlite.transforms.shard_map import shard_map, smap
from jaxlite.transforms.tracing import (ShapeDtypeStruct, checkpoint, eval_shape, make_jaxpr,
                                       remat)
from jaxlite.transforms.vjp_tools import fwd_and_bwd, linear_transpose
from jaxlite.transforms.vmap import vmap
from jaxlite.lax.ad_util import stop_gradient
from jaxlite.lax.checkpoint_policies import checkpoint_policies
from jaxlite.lax.custom_derivatives import custom_jvp, custom_vjp
from jaxlite.custom_derivatives import closure_convert, custom_gradient
from jaxlite._callback import effects_barrier, pure_callback
from jaxlite._namespaces import ad, memory
from jaxlite.core.source_info import named_call, named_scope
from jaxlite.core.trace_state import ensure_compile_time_eval
from jaxlite.tree_util import (tree_flatten, tree_leaves, tree_map, tree_structure,
                               tree_unflatten)

# Configuration; each option also as a function (`with jax.debug_nans(True): ...`).
from jaxlite.config import config, disable_jit, enable_x64
from jaxlite._jax_options import (
    allow_f16_reductions, array_garbage_collection_guard, auto_pcast, check_tracer_leaks,
    checking_leaks, debug_infs, debug_key_reuse, debug_nans, default_device,
    default_matmul_precision, default_prng_impl, enable_checks, enable_custom_prng,
    explain_cache_misses, jax2tf_associative_scan_reductions, legacy_prng_key, log_compiles,
    make_user_context, no_execution, no_tracing, numpy_dtype_promotion,
    numpy_rank_promotion, remove_size_one_mesh_axis_from_type, softmax_custom_jvp,
    thread_guard, threefry_partitionable, transfer_guard, transfer_guard_device_to_device,
    transfer_guard_device_to_host, transfer_guard_host_to_device)
from jaxlite.errors import ConcretizationTypeError, UnexpectedTracerError
from jaxlite.version import __version__, __version_info__

float0 = dtypes.float0
numpy.ndarray = Array  # jnp.ndarray is jax.Array, as in JAX

# Last: the hook's `jax` module reads the finished namespace.
from jaxlite.compat import install_as_jax  # noqa: E402
