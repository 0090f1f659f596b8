"""Patches written straight into the GEMM's packed-A format (`conv_kernel`'s panel form).

The GEMM's micro-kernel reads A as panels of `PANEL` rows: for each step along k, the
`PANEL` rows' elements side by side. A panel of patch rows in that order is a matrix with
unit row stride and a column stride of `PANEL`, which the GEMM reads in place; so writing
the patches in it saves the GEMM's copy of each block of patches into its packed panels.

The input gives each pixel's features as a contiguous run (one vector of 16 float32 per
16 features); the panel wants each feature's 8 pixels side by side. Eight such vectors
(8 pixels x 16 features) are transposed in registers by three rounds of two-input shuffles
(each round swaps one bit of the pixel number, which vector, with one bit of the feature
number, which lane), then stored as 128 contiguous elements.
"""
from __future__ import annotations

import functools

from jaxlite.backends.cpu.codegen.conv_gemm_util import coordinates, run_value, tap_source
from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Lin, Var
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape_inference_base import ConvDims, Window

__all__ = ["PANEL", "PANEL_LANES", "copy_panel", "transpose_steps"]

PANEL = 8         # rows of a panel: the float32 GEMM's micro-kernel rows (8x3)
PANEL_LANES = 16  # float32 lanes of one vector

# (vector, lane) of element (pixel r, feature j) of the 8 x 16 tile before, between and
# after the three rounds; round i moves pixel bit i into the lanes and feature bit i + 1
# into the vector number, the last also puts the lanes in panel order (j & 1, r).
_LAYOUTS = (
    lambda r, j: (r, j),
    lambda r, j: ((r & 6) | (j >> 1) & 1, (j & 12) | (r & 1) << 1 | (j & 1)),
    lambda r, j: ((r & 4) | (j & 6) >> 1, (j & 8) | (r & 3) << 1 | (j & 1)),
    lambda r, j: (j >> 1, (j & 1) << 3 | r),
)


@functools.lru_cache(maxsize=1)
def transpose_steps() -> tuple[tuple[tuple[int, int, tuple[int, ...]], ...], ...]:
    """Per round, per output vector: (first source, second source, shuffle mask)."""
    rounds = []
    for old, new in zip(_LAYOUTS, _LAYOUTS[1:]):
        outputs = []
        for vector in range(PANEL):
            sources: list[int] = []
            mask = [0] * PANEL_LANES
            for r in range(PANEL):
                for j in range(PANEL_LANES):
                    where, lane = new(r, j)
                    if where != vector:
                        continue
                    source, source_lane = old(r, j)
                    if source not in sources:
                        sources.append(source)
                    mask[lane] = sources.index(source) * PANEL_LANES + source_lane
            assert len(sources) == 2
            outputs.append((sources[0], sources[1], tuple(mask)))
        rounds.append(tuple(outputs))
    return tuple(rounds)


def _transpose(em: Elemental, vectors: list[str]) -> list[str]:
    ty = f"<{PANEL_LANES} x float>"
    for round_ in transpose_steps():
        vectors = [em.fb.op(f"shufflevector {ty} {vectors[a]}, {ty} {vectors[b]}, "
                            f"<{PANEL_LANES} x i32> <"
                            + ", ".join(f"i32 {i}" for i in mask) + ">", "tr")
                   for a, b, mask in round_]
    return vectors


def copy_panel(em: Elemental, lhs: HloInstruction, cd: ConvDims, window: Window,
               first: str, pixels: int, spatial: list[int], taps: list[list[int]],
               target: str) -> None:
    """Write the patches of pixels [first, first + PANEL) as one packed panel at `target`
    (float32 elements from %scratch): element (pixel r, k) at k * PANEL + r, k = the tap's
    number times the input features plus the feature."""
    fb = em.fb
    features = lhs.shape.dims[cd.lhs_feature]
    where = []
    for r in range(PANEL):
        pixel = fb.op(f"add i64 {first}, {r}", "pp")
        where.append(coordinates(em, pixel, pixels, spatial))
    lanes = Lin.of(Var("0", "lanes", 0, features, PANEL_LANES))
    for number, tap in enumerate(taps):
        sources = [tap_source(em, lhs, cd, window, (cd.lhs_batch, batch), coords,
                              [Lin.of(t) for t in tap]) for batch, coords in where]
        for chunk in range(0, features, PANEL_LANES):
            rows = [run_value(em, lhs, s, cd.lhs_feature, lanes + chunk).ref
                    for s in sources]
            base = (number * features + chunk) * PANEL
            for q, vector in enumerate(_transpose(em, rows)):
                at = fb.op(f"add i64 {target}, {base + q * PANEL_LANES}", "po")
                p = fb.op(f"getelementptr inbounds float, ptr %scratch, i64 {at}", "pp")
                fb.do(f"store <{PANEL_LANES} x float> {vector}, ptr {p}, align 4")
