"""Small namespaces `jax` exports: `jax.memory` (memory spaces) and `jax.ad` (the markers
of JAX's experimental gradient-accumulation interface)."""
from __future__ import annotations

import dataclasses
import enum
import types


class MemorySpace(enum.Enum):
    """Where an array lives (mirrors `jax.memory.Space`); jaxlite has device memory only."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()


memory = types.SimpleNamespace(Space=MemorySpace)


@dataclasses.dataclass(frozen=True)
class DontWant:
    """Marks an input whose cotangent is not wanted."""


@dataclasses.dataclass(frozen=True)
class DidntWant:
    """Stands for a cotangent that was not asked for."""


@dataclasses.dataclass(frozen=True)
class GradRef:
    """Stands for a cotangent accumulated into a ref."""


@dataclasses.dataclass(frozen=True)
class GradValue:
    """Asks for a cotangent returned as a value (the default)."""


ad = types.SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef,
                           GradValue=GradValue)
