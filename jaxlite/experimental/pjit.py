"""`jax.experimental.pjit`: the old name of `jax.jit` with shardings, deprecated in JAX
0.10.2 (reading `pjit` warns with DeprecationWarning and gives a `jit` with `pjit`'s
parameters)."""
from __future__ import annotations

from typing import Any, Callable

from jaxlite._deprecations import deprecated_names
from jaxlite.transforms.jit import jit


def _pjit(fun: Callable[..., Any], in_shardings: Any = None, out_shardings: Any = None,
          static_argnums: Any = None, static_argnames: Any = None,
          donate_argnums: Any = None, donate_argnames: Any = None, keep_unused: bool = False,
          device: Any = None, backend: Any = None, inline: bool = False,
          compiler_options: dict[str, Any] | None = None) -> Any:
    """`jit` under its old name (mirrors the deprecated `jax.experimental.pjit.pjit`)."""
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings,
               static_argnums=static_argnums, static_argnames=static_argnames,
               donate_argnums=donate_argnums, donate_argnames=donate_argnames,
               keep_unused=keep_unused, device=device, backend=backend, inline=inline,
               compiler_options=compiler_options)


_pjit.__name__ = _pjit.__qualname__ = "pjit"


__getattr__ = deprecated_names(__name__, {"pjit": (
    "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.", _pjit)})
