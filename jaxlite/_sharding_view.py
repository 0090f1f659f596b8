"""Looking at how arrays are laid out over devices: `jax.debug.inspect_array_sharding`,
`visualize_array_sharding` and `visualize_sharding`.

The picture is JAX's: a table with one box per block of the array (rows split dimension 0,
columns dimension 1; a 1-d array is one row), each labelled with the devices holding that
block ("CPU 0", or "CPU 0,4" for copies), drawn as JAX draws it with `rich` when the
output is no terminal: the same sizes from `scale`, `min_width` and `max_width`, and the
same narrowing to a console `max_width` columns wide (a label whose padding leaves it no room is not
drawn, as rich drops it; one squeezed is wrapped as rich wraps it). Differences from JAX:
colours are never drawn (JAX colours the boxes on a terminal); under `jit` the callback of `inspect_array_sharding` runs when the function is
traced and receives the default device's sharding (JAX calls it while compiling, with the
GSPMD sharding of the value).
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
    """Print a table with a box per block of `sharding` over an array of `shape` (1 or 2
    dimensions), each labelled with the devices holding it, sized and laid out as JAX's
    `rich` table prints it on a non-terminal (mirrors `jax.debug.visualize_sharding`; no
    colours)."""
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    blocks = _blocks(shape, sharding)
    rows = sorted({r for r, _ in blocks})
    cols = sorted({c for _, c in blocks})
    base_height = int(10 * scale)
    aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect_ratio)
    cells = []
    for row in rows:
        cells.append([])
        for col in cols:
            devices = blocks[row, col]
            label = f"{devices[0].platform.upper()} {','.join(str(d.id) for d in devices)}"
            width = int((col[1] - col[0]) / shape[-1] * base_width * 2.5)
            width = min(max(width, min_width), max_width)
            height = int((row[1] - row[0]) / shape[0] * base_height) if len(shape) == 2 else 1
            left, extra = divmod(width - len(label) - 2, 2)
            top, more = divmod(height - 2, 2)
            cells[-1].append((label, max(top, 0), max(left, 0), max(left + extra, 0),
                              max(top + more, 0)))
    sys.stdout.write(_table(cells, max_width) + "\n")


def _blocks(shape: Sequence[int], sharding: Any) -> dict[tuple, list]:
    """The devices holding each block, by ((row start, stop), (column start, stop)); a
    1-d array is one row of columns."""
    blocks: dict[tuple, list] = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        spans = [s.indices(n)[:2] for s, n in zip(index, shape)]
        key = (spans[0], spans[1]) if len(shape) == 2 else ((0, 1), spans[0])
        blocks.setdefault(key, []).append(device)
    return {key: sorted(devices, key=lambda d: d.id) for key, devices in blocks.items()}


def _table(cells: list[list[tuple]], console_width: int) -> str:
    """The box-drawn table of padded labels, each column as wide as its widest cell, and
    the columns narrowed as rich narrows them to fit a console `console_width` wide (JAX
    draws on one `max_width` wide)."""
    count = len(cells[0])
    room = console_width - (count + 1)  # less the vertical rules
    widths = [min(max(left + len(label) + right for label, _, left, right, _ in column), room)
              for column in zip(*cells)]
    widths = _narrowed(widths, room)
    lines = ["\u250c" + "\u252c".join("\u2500" * w for w in widths) + "\u2510"]
    for i, row in enumerate(cells):
        if i:
            lines.append("\u251c" + "\u253c".join("\u2500" * w for w in widths) + "\u2524")
        rendered = [_cell(cell, w) for cell, w in zip(row, widths)]
        height = max(1, *(len(r) for r in rendered))  # (a row is at least one line)
        for r, w in zip(rendered, widths):
            r += [" " * w] * (height - len(r))
        lines += ["\u2502" + "\u2502".join(r[k] for r in rendered) + "\u2502"
                  for k in range(height)]
    lines.append("\u2514" + "\u2534".join("\u2500" * w for w in widths) + "\u2518")
    return "\n".join(lines)


def _cell(cell: tuple, width: int) -> list[str]:
    """The lines of one padded label in a column `width` wide: the label centred, or
    wrapped at spaces when the padding leaves it less room (a word too long is cut with
    an ellipsis), or not drawn when it leaves none (as rich draws a padded label)."""
    label, top, left, right, bottom = cell
    room = width - left - right
    words = _wrapped(label, room) if room >= 1 else []
    block = max((len(w) for w in words), default=0)
    indent = left + (room - block) // 2
    middle = [(" " * indent + w).ljust(width) for w in words]
    return [" " * width] * top + middle + [" " * width] * bottom


def _wrapped(label: str, room: int) -> list[str]:
    lines: list[str] = []
    for word in label.split(" "):
        if len(word) > room:
            word = word[:room - 1] + "\u2026"
        if lines and len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _narrowed(widths: list[int], room: int) -> list[int]:
    """Column widths reduced to fit `room`: the widest columns first, down towards the next
    widest, the excess shared in proportion, rounding as Python rounds (rich's rule)."""
    widths = list(widths)
    while sum(widths) > room:
        widest = max(widths)
        next_widest = max((w for w in widths if w != widest), default=0)
        if widest == next_widest:
            break
        share = [1 if w == widest else 0 for w in widths]
        widths = _shared_reduction(sum(widths) - room, share, widest - next_widest, widths)
    return widths


def _shared_reduction(excess: int, share: list[int], most: int, widths: list[int]
                      ) -> list[int]:
    """Take `excess` columns off the widths marked in `share`, each giving its part of
    what is left (rounded) and at most `most`."""
    parts = sum(share)
    out = []
    for marked, width in zip(share, widths):
        if marked:
            taken = min(most, round(excess / parts))
            excess -= taken
            parts -= 1
            width -= taken
        out.append(width)
    return out
