"""Setting up the persistent compilation cache (mirrors
`jax.experimental.compilation_cache.compilation_cache`).

The cache is the option `jax_compilation_cache_dir`: when it names a folder, the CPU backend
stores each compiled program's object code there and reuses it in later processes. The
backend reads the option at every compilation, so a new folder takes effect at once and
there is no opened cache for `reset_cache` to forget.
"""
from __future__ import annotations

from typing import Any

from jaxlite.config import config

__all__ = ["reset_cache", "set_cache_dir"]


def set_cache_dir(path: Any) -> None:
    """Store compiled programs in the folder `path` and look for them there before
    compiling; None turns the persistent cache off (mirrors
    `jax.experimental.compilation_cache.compilation_cache.set_cache_dir`).

    As the option's, `path` must be a str or None (a `pathlib.Path` is refused, as in
    JAX). The folder is created private (0700); one that another user owns or may
    write to is refused with a warning, since its entries are code this process runs.
    """
    if path is not None and not isinstance(path, str):
        raise ValueError(f"new string config value must be None or of type str, got {path} "
                         f"of type {type(path)}.")
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Forget the cache opened so far (mirrors
    `jax.experimental.compilation_cache.compilation_cache.reset_cache`): the folder option is
    kept, as in JAX; jaxlite opens no cache object between compilations, so the next
    compilation already reads the folder afresh."""
