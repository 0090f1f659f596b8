"""`jax.extend.backend`: the backends, over jaxlite's registry (`jaxlite.backends.registry`).

A backend here is a jaxlite `Client` (`jaxlite.backends.base`), not an XLA client: a
factory given to `register_backend_factory` must return one.
"""
from __future__ import annotations

from typing import Any, Callable

from jaxlite.backends import registry
from jaxlite.backends.base import Client, CompileOptions, Device
from jaxlite.runtime import device as _device

__all__ = ["backend_xla_version", "backends", "clear_backends",
           "clear_in_memory_compilation_cache", "get_backend", "get_compile_options",
           "get_default_device", "register_backend_cache", "register_backend_factory"]

# Caches that hold on to backends, emptied by clear_backends (JAX's register_backend_cache).
_backend_caches: list[Any] = []


def backends() -> dict[str, Client]:
    """The backends that start, by platform name (mirrors `jax.extend.backend.backends`)."""
    return registry.backends()


def get_backend(platform: None | str | Client = None) -> Client:
    """The backend of `platform`, or the default one (mirrors `get_backend`); a client
    passed in is returned as is."""
    if isinstance(platform, Client):
        return platform
    return registry.get_backend(platform)


def get_default_device() -> Device:
    """The device computations run on by default (mirrors `get_default_device`)."""
    return _device.devices()[0]


def backend_xla_version(platform: str | None = None) -> int | None:
    """XLA's version of the backend's compiler: None, jaxlite's backends are not XLA's."""
    return None


def clear_backends(_crash: bool = False) -> None:
    """Forget every started backend and the caches registered with
    `register_backend_cache` (mirrors `clear_backends`)."""
    for cache in _backend_caches:
        cache.cache_clear()
    registry.default_registry().clear()


def register_backend_cache(cache: Any, for_what: str) -> None:
    """Have `clear_backends` empty `cache` (anything with `cache_clear()`) too."""
    _backend_caches.append(cache)


def clear_in_memory_compilation_cache() -> None:
    """Empty the in-memory caches of compiled programs (mirrors JAX's): jaxlite compiles
    per backend client, so this starts the backends afresh."""
    clear_backends()


def register_backend_factory(name: str, factory: Callable[[], Client], *, priority: int = 0,
                             fail_quietly: bool = True, experimental: bool = False,
                             make_topology: Any = None, c_api: Any = None) -> None:
    """Register a backend: `factory()` returns a jaxlite `Client` (mirrors
    `register_backend_factory`; a failing factory is recorded with its reason, as with
    `fail_quietly`)."""
    registry.register_backend_factory(name, factory, priority)


def get_compile_options(num_replicas: int, num_partitions: int, device_assignment: Any = None,
                        env_options_overrides: dict[str, str] | None = None,
                        fdo_profile: bytes | None = None, detailed_logging: bool = True,
                        backend: Any = None) -> CompileOptions:
    """Compile options for one replica and one partition (mirrors `get_compile_options`);
    jaxlite compiles for one device, so more replicas or partitions are refused."""
    if num_replicas != 1 or num_partitions != 1:
        raise NotImplementedError(
            f"get_compile_options(num_replicas={num_replicas}, num_partitions="
            f"{num_partitions}): jaxlite compiles for one device (1 replica, 1 partition).")
    return CompileOptions()
