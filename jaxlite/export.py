"""Exporting jitted functions as portable programs (mirrors `jax.export`).

`export(jit(f))(*args)` gives an `Exported`: the program for those argument types, with its
pytree structures and avals, callable (`call`, under jit and grad), printable as StableHLO
(`mlir_module()`), and serializable to bytes (`serialize` / `deserialize`, a versioned
format without pickles, see `jaxlite.transforms.export.serialization`).
`from_stablehlo(text)` (jaxlite's own) makes an `Exported` of StableHLO text that
`jax.jit(f).lower(*args).as_text()` printed. Implemented in `jaxlite.transforms.export`.

Not yet: shape polymorphism (`symbolic_shape` and `symbolic_args_specs` raise
NotImplementedError), shardings over several devices.
"""
from __future__ import annotations

from typing import Any

from jaxlite.transforms.export.exported import (CALLING_CONVENTION_VERSION, Exported,
                                                default_export_platform, deserialize, export)
from jaxlite.transforms.export.from_stablehlo import from_stablehlo
from jaxlite.transforms.export.serialization import (register_namedtuple_serialization,
                                                     register_pytree_node_serialization)

__all__ = ["DisabledSafetyCheck", "Exported", "SymbolicScope", "default_export_platform",
           "deserialize", "export", "from_stablehlo", "is_symbolic_dim",
           "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
           "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape"]

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = CALLING_CONVENTION_VERSION

_NO_SHAPE_POLYMORPHISM = ("jaxlite.export does not support shape polymorphism yet "
                          "(symbolic dimensions); export the function once per concrete "
                          "shape instead.")


class DisabledSafetyCheck:
    """A safety check that `export` may skip (mirrors `jax.export.DisabledSafetyCheck`)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @classmethod
    def platform(cls) -> "DisabledSafetyCheck":
        """Allow calling on a platform the function was not exported for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> "DisabledSafetyCheck":
        """Allow a custom call to `target_name` that is not known to be stable."""
        return cls(f"custom_call:{target_name}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"DisabledSafetyCheck({self._name!r})"


class SymbolicScope:
    """A scope for symbolic dimensions (mirrors `jax.export.SymbolicScope`); refused until
    jaxlite has shape polymorphism."""

    def __init__(self, constraints_str: Any = ()) -> None:
        raise NotImplementedError(_NO_SHAPE_POLYMORPHISM)


def symbolic_shape(shape_spec: str | None, *, constraints: Any = (), scope: Any = None,
                   like: Any = None) -> tuple:
    """Mirrors `jax.export.symbolic_shape`; raises NotImplementedError (see above)."""
    raise NotImplementedError(_NO_SHAPE_POLYMORPHISM)


def symbolic_args_specs(args: Any, shapes_specs: Any, constraints: Any = (),
                        scope: Any = None) -> Any:
    """Mirrors `jax.export.symbolic_args_specs`; raises NotImplementedError (see above)."""
    raise NotImplementedError(_NO_SHAPE_POLYMORPHISM)


def is_symbolic_dim(p: Any) -> bool:
    """Whether `p` is a symbolic dimension: never, in jaxlite (mirrors
    `jax.export.is_symbolic_dim`)."""
    return False
