"""The one place where a backend compiles an HLO module (mirrors `jax._src.compiler`).

Dispatch calls `backend_compile_and_load` through this module's attribute at each
compilation, so a library that wraps it (chex's `restrict_backends` patches the attribute
under the import hook, where `jax._src.compiler` is this module) sees every compile.
"""
from __future__ import annotations

from jaxlite.backends.base import Client, CompileOptions, Executable
from jaxlite.xla.ir import HloModule


def backend_compile_and_load(backend: Client, module: HloModule,
                             options: CompileOptions) -> Executable:
    """Compile `module` with `backend`'s compiler into a loaded executable."""
    return backend.compile(module, options)


def backend_compile(backend: Client, module: HloModule,
                    options: CompileOptions) -> Executable:
    """As `backend_compile_and_load` (jaxlite's executables are always loaded)."""
    return backend_compile_and_load(backend, module, options)
