"""Write the lists of JAX's public modules and names that `tests/test_api_surface.py` checks.

Run with a Python that has jax 0.10.2 (never jaxlite's own environment):

    /tmp/jaxvenv/bin/python tools/gen_public_api.py

Each public module gets `tests/data/api/public/<module>.txt`: one line per name that `dir()`
shows without a leading underscore, with its kind (function, class, module, const) and, for
functions and classes, the call signature where Python can read one, and for functions the
parameters in a form tests compare (`name:kind`, kind one of po/pk/vp/ko/vk, `=` marking a
default). The modules are JAX's
documented public API (the `jax` package page of its documentation) plus the experimental
modules that libraries and users reach for; `SKIPPED` lists the ones left out and why.
"""
import importlib
import inspect
import pkgutil
import re
import sys
import types
import warnings
from pathlib import Path

import jax

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "api" / "public"

MODULES = """
jax jax.ad_checkpoint jax.api_util jax.core jax.custom_batching jax.custom_derivatives
jax.debug jax.distributed jax.dlpack jax.dtypes jax.errors
jax.example_libraries jax.example_libraries.optimizers jax.example_libraries.stax
jax.experimental jax.experimental.checkify jax.experimental.sparse jax.experimental.ode
jax.experimental.jet jax.experimental.shard_map jax.experimental.mesh_utils
jax.experimental.compilation_cache jax.experimental.custom_partitioning jax.experimental.layout
jax.experimental.hijax jax.experimental.compilation_cache.compilation_cache
jax.experimental.compute_on jax.experimental.key_reuse jax.experimental.pjit
jax.experimental.random jax.experimental.rnn jax.experimental.shard_alike
jax.experimental.sparse.linalg jax.experimental.xla_metadata
jax.export jax.extend jax.extend.backend jax.extend.core jax.extend.linear_util jax.extend.mlir
jax.extend.core.primitives jax.extend.random jax.extend.source_info_util jax.extend.sharding
jax.ffi jax.flatten_util jax.image jax.interpreters jax.interpreters.ad jax.interpreters.batching
jax.interpreters.mlir jax.interpreters.partial_eval jax.interpreters.pxla jax.interpreters.xla
jax.lax jax.lax.linalg jax.monitoring jax.nn jax.nn.initializers jax.numpy jax.numpy.fft
jax.numpy.linalg jax.ops jax.profiler jax.random jax.ref
jax.scipy jax.scipy.cluster jax.scipy.cluster.vq jax.scipy.fft jax.scipy.integrate
jax.scipy.interpolate jax.scipy.linalg jax.scipy.ndimage jax.scipy.optimize jax.scipy.signal
jax.scipy.sparse jax.scipy.sparse.linalg jax.scipy.spatial jax.scipy.spatial.transform
jax.scipy.special jax.scipy.stats
jax.sharding jax.stages jax.test_util jax.tree jax.tree_util jax.typing jax.version
""".split()

# Public modules of jax 0.10.2 left out of the lists, with the reason.
SKIPPED = {
    "jax.experimental.pallas": "a kernel language for TPU/GPU backends jaxlite does not have",
    "jax.experimental.mosaic": "TPU/GPU kernel compiler internals",
    "jax.experimental.jax2tf": "TensorFlow interop",
    "jax.experimental.colocated_python": "Pathways/IFRT multi-host runtime",
    "jax.experimental.array_serialization": "tensorstore checkpointing of sharded arrays",
    "jax.experimental.multihost_utils": "multi-host utilities (the scale-out issue)",
    "jax.extend.ifrt_programs": "IFRT runtime internals",
    "jax.extend.pallas": "Pallas internals",
    "jax.extend.xla": "XLA client internals",
    "jax.extend.lowering": "MLIR lowering internals",
    "jax.lib": "jaxlib's C++ extension (empty namespace)",
    "jax.tools": "command-line tools around jaxlib",
    "jax.cloud_tpu_init": "environment setup for Cloud TPU VMs",
    "jax.collect_profile": "command-line script that collects an XLA profile from a server",
    "jax.experimental.topologies": "TPU topology descriptions for compiling without devices",
    "jax.experimental.transfer": "cross-host transfer server for device arrays",
    "jax.experimental.serialize_executable": "serialized XLA executables (issue 15)",
    "jax.experimental.profiler": "XLA profile protos (device profiler internals)",
    "jax.experimental.buffer_callback": "callbacks on raw device buffers (GPU issue 16)",
    "jax.experimental.scheduling_groups": "XLA scheduling-group annotations on lowered ops",
    "jax.experimental.fused": "XLA fusion with memory-space annotations (fused_p lowering)",
    "jax.experimental.control_deps": "XLA control dependencies between ops (an ffi custom "
                                     "call)",
    "jax.experimental.roofline": "roofline estimates from XLA's cost model",
    "jax.experimental.source_mapper": "source maps between Python, jaxprs, MLIR and HLO",
    "jax.extend.mlir.dialects": "MLIR/StableHLO dialect bindings (issue 15)",
    "jax.extend.mlir.ir": "MLIR IR bindings (issue 15)",
    "jax.extend.mlir.passmanager": "MLIR pass manager bindings (issue 15)",
}
# Implementation submodules whose public names their package re-exports: left out of the
# lists, and not counted as public where their package's namespace shows them.
IMPLEMENTATION = {f"jax.experimental.sparse.{name}": "re-exported by jax.experimental.sparse"
                  for name in ("ad", "api", "bcoo", "bcsr", "coo", "csr", "random",
                               "test_util", "transform", "util")}


def stats_modules():
    import jax.scipy.stats as stats
    return sorted(m.name for m in pkgutil.iter_modules(stats.__path__, "jax.scipy.stats.")
                  if not m.name.rsplit(".", 1)[1].startswith("_"))


def kind_of(value):
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    return "const"


def signature_of(value):
    try:
        text = str(inspect.signature(value))
    except (TypeError, ValueError):
        return ""
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # default values' addresses change every run


def incidental(module_name, name, value, kind, public):
    """Whether a name is an import that happens to sit in the namespace (`os`, `typing.Any`,
    `jnp` in a module that uses it) rather than part of the module's API."""
    if kind == "module":
        return f"{module_name}.{name}" not in public
    if type(value).__module__ == "__future__":
        return True  # `from __future__ import annotations`
    origin = getattr(value, "__module__", None) or ""
    own_name = getattr(value, "__name__", None) or getattr(value, "_name", None)
    # `typing.Any` imported as `Any` is incidental; `ArrayLike = Union[...]` is an alias the
    # module defines, though its __module__ says typing.
    return origin.split(".")[0] in sys.stdlib_module_names and own_name == name


_KIND_CODES = {"POSITIONAL_ONLY": "po", "POSITIONAL_OR_KEYWORD": "pk", "VAR_POSITIONAL": "vp",
               "KEYWORD_ONLY": "ko", "VAR_KEYWORD": "vk"}


def parameters_of(value):
    """`name:kind[=]` per parameter (kind po/pk/vp/ko/vk, `=` when it has a default)."""
    try:
        params = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return ""
    return ",".join(f"{p.name}:{_KIND_CODES[p.kind.name]}"
                    f"{'=' if p.default is not inspect.Parameter.empty else ''}"
                    for p in params)


def write(module_name, public):
    module = importlib.import_module(module_name)
    lines = [f"# {module_name} public names, jax {jax.__version__} (dir(), no leading underscore,"
             " imports of stdlib names and of non-public modules left out)"]
    for name in sorted(n for n in dir(module) if not n.startswith("_")):
        value = getattr(module, name)
        kind = kind_of(value)
        if incidental(module_name, name, value, kind, public):
            continue
        sig = signature_of(value) if kind in ("function", "class") else ""
        params = parameters_of(value) if kind == "function" else ""
        lines.append(f"{name}\t{kind}\t{sig}\t{params}".rstrip())
    (OUT / f"{module_name}.txt").write_text("\n".join(lines) + "\n")
    return len(lines) - 1


def unaccounted_modules():
    """JAX's public modules (no part starting with `_`) in none of MODULES, SKIPPED and
    IMPLEMENTATION; a module under a skipped one counts as skipped."""
    listed = set(MODULES + stats_modules())
    found = []
    for info in pkgutil.walk_packages(jax.__path__, "jax.", onerror=lambda name: None):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")) or name in listed:
            continue
        left_out = {**SKIPPED, **IMPLEMENTATION}
        if not any(name == s or name.startswith(s + ".") for s in left_out):
            found.append(name)
    return found


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    total = 0
    public = set(MODULES + stats_modules()) | set(SKIPPED)
    for name in MODULES + stats_modules():
        total += write(name, public)
    print(f"{total} names in {len(MODULES) + len(stats_modules())} modules -> {OUT}",
          file=sys.stderr)
    # Last: walking the packages imports them, which adds submodules to their parents.
    missing = unaccounted_modules()
    if missing:
        sys.exit(f"public modules in neither MODULES nor SKIPPED: {missing}")


if __name__ == "__main__":
    main()
