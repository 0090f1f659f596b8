"""Window arithmetic shared by the window primitives (`windows`, `general_windows`,
`select_scatter`): output sizes, parameter checks, and the strided slices of a padded
operand that hold each window element's values at every output position."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Pairs = tuple[tuple[int, int], ...]

WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                 "window_dilation")


def out_size(size: int, window: int, stride: int, low: int, high: int, base: int,
             dilation: int) -> int:
    padded = ((size - 1) * base + 1 if size else 0) + low + high
    extent = (window - 1) * dilation + 1
    return 0 if padded < extent else (padded - extent) // stride + 1


def check_params(ndim: int, window_dimensions: Sequence[int], window_strides: Sequence[int],
                 padding: Pairs, base_dilation: Sequence[int], window_dilation: Sequence[int],
                 name: str) -> None:
    # JAX's key phrases first (it names the op "reduce_window" for every windowed op).
    if len(window_dimensions) != ndim:
        raise TypeError(f"reduce_window got the wrong number of window_dimensions for operand: "
                        f"got an operand of rank {ndim} with window_dimensions "
                        f"{tuple(window_dimensions)} ({name}).")
    for what, value in (("window_strides", window_strides), ("padding", padding),
                        ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(value) != ndim:
            raise TypeError(f"reduce_window got inconsistent {what} and window_dimensions: got "
                            f"{what} {tuple(value)} and window_dimensions "
                            f"{tuple(window_dimensions)} ({name}).")
    for what, value in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides)):
        if any(v < 1 for v in value):
            raise TypeError(f"reduce_window {what} must have every element be strictly "
                            f"positive, got {tuple(value)} ({name}).")
    for value in (base_dilation, window_dilation):
        if any(v < 1 for v in value):
            raise TypeError(f"All dilations must be positive, got {tuple(value)} ({name}).")


def out_shape(shape: Sequence[int], window: dict) -> tuple[int, ...]:
    return tuple(out_size(n, w, s, lo, hi, b, d) for n, w, s, (lo, hi), b, d in zip(
        shape, *(window[k] for k in WINDOW_PARAMS)))


def pad_config(window: dict) -> tuple:
    return tuple((lo, hi, b - 1) for (lo, hi), b in zip(window["padding"],
                                                        window["base_dilation"]))


def element_slices(out_shape: tuple, window: dict) -> list[tuple[list, list, tuple]]:
    """(starts, limits, strides) into the padded operand of each window element's values
    at every output position, in row-major window order."""
    slices = []
    for offsets in np.ndindex(*window["window_dimensions"]):
        starts = [k * d for k, d in zip(offsets, window["window_dilation"])]
        limits = [start + (o - 1) * s + 1 if o else start
                  for start, o, s in zip(starts, out_shape, window["window_strides"])]
        slices.append((starts, limits, tuple(window["window_strides"])))
    return slices
