"""Looking at how arrays are laid out over devices: `jax.debug.inspect_array_sharding`,
`visualize_array_sharding` and `visualize_sharding`, for jaxlite's single device.

Every jaxlite array lives whole on one device, so its sharding is a single-device one and
the picture is one box labelled with the device ("CPU 0"), drawn as JAX draws it with
`rich` when the output is no terminal (the same sizes from `scale`, `min_width` and
`max_width`). Differences from JAX: colours are never drawn (JAX colours the box on a
terminal); under `jit` the callback of `inspect_array_sharding` runs when the function is
traced and receives the single-device sharding (JAX calls it while compiling, with a
GSPMD sharding marked replicated).
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from jaxlite.runtime.device import devices
from jaxlite.runtime.sharding import SingleDeviceSharding
from jaxlite.tree_util import tree_leaves

__all__ = ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]


def _sharding_of(value: Any) -> Any:
    sharding = getattr(value, "sharding", None)
    if sharding is not None:
        return sharding
    device = getattr(value, "device", None)  # a traced value has none: the default device
    return SingleDeviceSharding(device if device is not None else devices()[0])


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call `callback(sharding)` for each array leaf of `value` (mirrors
    `jax.debug.inspect_array_sharding`): at once, also inside a traced function."""
    for leaf in tree_leaves(value):
        callback(_sharding_of(leaf))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print the sharding of the 1-d or 2-d array `arr` (mirrors
    `jax.debug.visualize_array_sharding`); `kwargs` go to `visualize_sharding`."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s, **kwargs))


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Print a box per device of `sharding` over an array of `shape` (1 or 2 dimensions),
    sized as JAX sizes it (mirrors `jax.debug.visualize_sharding`; no colours)."""
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    device_set = sharding.device_set
    if len(device_set) != 1:
        raise NotImplementedError(
            f"visualize_sharding draws single-device shardings only; {sharding!r} spans "
            f"{len(device_set)} devices.")
    device = next(iter(device_set))
    label = f"{device.platform.upper()} {device.id}"
    base_height = int(10 * scale)
    aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
    width = int(int(base_height * aspect_ratio) * 2.5)  # the whole array: one chunk
    width = min(max(width, min_width), max_width)
    height = int(base_height) if len(shape) == 2 else 1
    left, extra = divmod(width - len(label) - 2, 2)
    right = left + extra
    top, extra = divmod(height - 2, 2)
    bottom = top + extra
    left, right, top, bottom = (max(n, 0) for n in (left, right, top, bottom))
    inner = left + len(label) + right
    rows = ([" " * inner] * top + [" " * left + label + " " * right] + [" " * inner] * bottom)
    lines = (["\u250c" + "\u2500" * inner + "\u2510"] + [f"\u2502{row}\u2502" for row in rows]
             + ["\u2514" + "\u2500" * inner + "\u2518"])
    sys.stdout.write("\n".join(lines) + "\n")
