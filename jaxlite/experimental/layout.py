"""Array layouts (mirrors `jax.experimental.layout`).

jaxlite arrays are always row-major (major-to-minor order `(0, 1, ..., n-1)`, untiled): a
`Layout` asking for that is accepted everywhere, and any other raises
`NotImplementedError` where it would take effect.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Format", "Layout", "with_layout_constraint"]


@dataclass(frozen=True)
class Layout:
    """The order of an array's dimensions in memory, major to minor, and its tiling."""

    major_to_minor: tuple[int, ...]
    tiling: tuple[tuple[int, ...], ...] | None = None
    sub_byte_element_size_in_bits: int = 0

    def is_row_major(self) -> bool:
        return tuple(self.major_to_minor) == tuple(range(len(self.major_to_minor))) and \
            not self.tiling


@dataclass(frozen=True)
class Format:
    """A layout together with a sharding (mirrors `jax.experimental.layout.Format`)."""

    layout: Any = None
    sharding: Any = None


def with_layout_constraint(x: Any, layouts: Any) -> Any:
    """Ask for `x` in `layouts` (mirrors `jax.experimental.layout.with_layout_constraint`):
    `x` itself for row-major layouts, which is how jaxlite stores every array."""
    layouts_list = layouts if isinstance(layouts, (list, tuple)) else [layouts]
    for layout in layouts_list:
        if isinstance(layout, Layout) and not layout.is_row_major():
            raise NotImplementedError(f"with_layout_constraint: {layout} is not row-major; "
                                      "jaxlite stores every array row-major.")
    return x
