"""What the two GEMM convolution kernels share (`conv_kernel`, `conv_weight_kernel`): their
GEMMs' specs and modules, the bounds of a block of rows, mixed-radix coordinates and the
copy of one run of an operand into scratch memory, zeros where it falls in the padding."""
from __future__ import annotations

import functools
import hashlib

from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Lin, Multi, Var
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder, Val
from jaxlite.backends.cpu.codegen.loops import Emitters, vector_loop
from jaxlite.backends.cpu.codegen.window_loops import all_of, window_position
from jaxlite.backends.cpu.gemm import GemmSpec, emit_gemm_modules
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape_inference_base import ConvDims, Window

__all__ = ["BLOCK_BYTES", "gemm_spec", "gemm_texts", "block_bounds", "coordinates",
           "copy_run", "tap_source", "run_value"]

# Bytes of a kernel's block of patches in scratch memory: about half of a core's L2.
BLOCK_BYTES = 512 * 1024


def gemm_spec(dtype: str, **fields: object) -> GemmSpec:
    """A GEMM spec named by a digest of its fields (equal GEMMs share their code)."""
    key = repr(sorted(fields.items())) + dtype
    name = "gemm." + hashlib.sha256(key.encode()).hexdigest()[:12]
    return GemmSpec(name=name, dtype=dtype, **fields)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=64)
def gemm_texts(spec: GemmSpec) -> tuple[str, ...]:
    return emit_gemm_modules(spec)


def block_bounds(fb: FunctionBuilder, block: str, size: int, total: int, hint: str
                 ) -> tuple[str, str]:
    """[first, last) of block number `block` of `size` rows out of `total`."""
    first = fb.op(f"mul i64 {block}, {size}", hint + "lo")
    last = fb.op(f"add i64 {first}, {size}", hint + "hi")
    return first, fb.op(f"call i64 @llvm.smin.i64(i64 {last}, i64 {total})", hint + "hi")


def coordinates(em: Elemental, index: str, total: int, sizes: list[int]
                ) -> tuple[Lin, list[Lin]]:
    """(the leading rest, the coordinates of `sizes`, innermost last) of `index` < total."""
    rest = Lin.of(Var(index, "scalar", 0, total))
    coords = []
    for size in reversed(sizes):
        rest, where = em.ix.divmod(rest, size)
        coords.append(where)
    coords.reverse()
    return rest, coords


def tap_source(em: Elemental, lhs: HloInstruction, cd: ConvDims, window: Window,
               fixed: tuple[int, Lin], out: list[Lin], taps: list[Lin]
               ) -> tuple[list[Lin], Val | None]:
    """(the index of `lhs` read at window tap `taps` of output position `out`, its run
    dimension left 0; the condition under which it is a real element, None for always)."""
    shape = lhs.shape
    parts: list[Lin] = [Lin()] * shape.rank
    parts[fixed[0]] = fixed[1]
    conds = []
    for i, d in enumerate(cd.lhs_spatial):
        part, c = window_position(em, out[i], taps[i], window, i, shape.dims[d])
        parts[d] = part
        conds += c
    return parts, all_of(em, conds)


def run_value(e: Elemental, lhs: HloInstruction, source: tuple[list[Lin], Val | None],
              run_dim: int, element: Lin) -> Val:
    """The element(s) `element` of the run at `source` (`tap_source`); zeros where the tap
    falls in the padding or between dilated elements."""
    parts, valid = source
    index = list(parts)
    index[run_dim] = element
    value = e.value(lhs, Multi(tuple(index)))
    if valid is not None:
        value = e.select(valid, value, e.arith.const(0.0, lhs.shape.dtype))
    return value


def copy_run(em: Elemental, lhs: HloInstruction, cd: ConvDims, window: Window,
             fixed: tuple[int, Lin], out: list[Lin], taps: list[Lin], run_dim: int,
             start: Lin, width: int) -> None:
    """Copy the run of `lhs` along `run_dim` at window tap `taps` of output position `out`
    (with `fixed` = (dimension, index) for the remaining dimension) to scratch memory from
    element `start`; zeros where the tap falls in the padding or between dilated
    elements."""
    source = tap_source(em, lhs, cd, window, fixed, out, taps)
    extent = lhs.shape.dims[run_dim]

    def body(e: Elemental, element: Lin, copy: int) -> None:
        e.store("%scratch", start + element, run_value(e, lhs, source, run_dim, element))
    vector_loop(em.fb, Emitters(em), "0", str(extent), extent, width, 1, body, "run")
