"""Dots through the generated GEMM (`jaxlite.backends.cpu.gemm`), and the epilogue of a dot
fusion as a second, elementwise kernel (mirrors XLA's CPU dot emitter choosing a tiled GEMM
for matrix products).

`gemm_call(dot, out_shape)` maps a dot onto a (batched) GEMM when its operands and result
are float32 or float64 of one type and each group of dimensions (rows, columns, contracted)
is one strided run of memory in each operand and in the result: any transposition, any
layout that keeps the groups contiguous. The batch dimensions may form two runs (attention's
batch and heads, with the heads between sequence and features in memory): the inner one is
the GEMM's batch, and the kernel loops over the outer one, a slice per GEMM call. The result must have unit stride
along the rows or the columns; with unit stride along the rows (a result laid out
transposed) the GEMM computes the transposed product, B^T A^T, with the operands swapped.
Anything else is computed by the loop kernels (an inner loop per output element).

A dot fusion (kOutput) becomes two kernels when its dot maps onto a GEMM: the GEMM writes
the product into the fusion's result buffer, then an elementwise kernel applies the
epilogue in place, reading the product back where it writes.
"""
from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass

import numpy as np

from jaxlite.backends.cpu.codegen.indexing import strides_of
from jaxlite.backends.cpu.codegen.kernel import Kernel, PLACEHOLDER
from jaxlite.backends.cpu.gemm import GemmSpec, emit_gemm_modules, plan_gemm
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["GemmCall", "gemm_call", "gemm_kernel", "dot_of", "epilogue_fusion",
           "SCRATCH_ALIGN", "MIN_GEMM_FLOPS"]

_O = Opcode
SCRATCH_ALIGN = 64
# Below this many multiply-adds the loop kernels are as fast, and compile faster.
MIN_GEMM_FLOPS = 4096


@dataclass(frozen=True)
class GemmCall:
    """A GEMM computing a dot: the spec, and whether the operands are swapped (the GEMM's A
    is the dot's rhs)."""

    spec: GemmSpec
    swapped: bool
    # Batch dimensions the GEMM's one strided batch run cannot take (attention's batch and
    # heads, when the heads sit between sequence and features in memory): the kernel calls
    # the GEMM once per slice, at (count, A, B and C strides in elements).
    outer: tuple[int, int, int, int] = (1, 0, 0, 0)

    @property
    def scratch(self) -> int:
        """Scratch bytes per thread, rounded up to the alignment the GEMM wants."""
        size = plan_gemm(self.spec).scratch_bytes
        return -(-size // SCRATCH_ALIGN) * SCRATCH_ALIGN


def _group(dims: list[int], sizes: tuple[int, ...], strides: tuple[int, ...]
           ) -> tuple[int, int] | None:
    """(size, stride) of dimensions `dims` (in their logical order) as one strided run."""
    dims = [d for d in dims if sizes[d] != 1]
    if not dims:
        return 1, 1
    for outer, inner in zip(dims, dims[1:]):
        if strides[outer] != strides[inner] * sizes[inner]:
            return None
    return math.prod(sizes[d] for d in dims), strides[dims[-1]]


def _batch_runs(lb: list[int], rb: list[int], lhs: Shape, rhs: Shape, out: Shape,
                ls: tuple[int, ...], rs: tuple[int, ...], os: tuple[int, ...]
                ) -> list[tuple[int, int, int, int]]:
    """The batch dimensions as strided runs, outermost first: (size, lhs, rhs and out
    strides) per run, split wherever one of the three arrays is not contiguous across a
    pair of neighbouring batch dimensions."""
    dims = [i for i in range(len(lb)) if out.dims[i] != 1]
    runs: list[list[int]] = []
    for i in dims:
        if runs:
            j = runs[-1][-1]
            joined = (ls[lb[j]] == ls[lb[i]] * lhs.dims[lb[i]]
                      and rs[rb[j]] == rs[rb[i]] * rhs.dims[rb[i]]
                      and os[j] == os[i] * out.dims[i])
            if joined:
                runs[-1].append(i)
                continue
        runs.append([i])
    return [(math.prod(out.dims[i] for i in run), ls[lb[run[-1]]], rs[rb[run[-1]]],
             os[run[-1]]) for run in runs]


def dot_of(inst: HloInstruction) -> HloInstruction | None:
    """The dot a bare dot or a dot fusion computes."""
    if inst.opcode is _O.DOT:
        return inst
    if inst.opcode is _O.FUSION and inst.attr("kind") == "kOutput":
        dots = [i for i in inst.called[0].instructions if i.opcode is _O.DOT]
        return dots[0] if len(dots) == 1 else None
    return None


def gemm_call(dot: HloInstruction, out: Shape) -> GemmCall | None:
    """The GEMM that computes `dot` into a buffer of shape `out`, or None."""
    if out.is_tuple:
        return None
    lhs, rhs = dot.operands[0].shape, dot.operands[1].shape
    dtype = np.dtype(out.dtype)
    if dtype.name not in ("float32", "float64") or lhs.dtype != dtype or rhs.dtype != dtype:
        return None
    if out.dims != dot.shape.dims:
        return None
    lc, rc = list(dot.attr("lhs_contracting", ())), list(dot.attr("rhs_contracting", ()))
    lb, rb = list(dot.attr("lhs_batch", ())), list(dot.attr("rhs_batch", ()))
    lf = [d for d in range(lhs.rank) if d not in lc + lb]
    rf = [d for d in range(rhs.rank) if d not in rc + rb]
    nb = len(lb)
    ls, rs = strides_of(lhs.dims, lhs.layout), strides_of(rhs.dims, rhs.layout)
    os = strides_of(out.dims, out.layout)
    runs = _batch_runs(lb, rb, lhs, rhs, out, ls, rs, os)
    if len(runs) > 2:
        return None
    outer = runs[0] if len(runs) == 2 else (1, 0, 0, 0)
    batch, bl, br, bo = runs[-1] if runs else (1, 1, 1, 1)
    groups = [_group(lf, lhs.dims, ls), _group(list(range(nb, nb + len(lf))), out.dims, os),
              _group(rf, rhs.dims, rs), _group(list(range(nb + len(lf), out.rank)), out.dims, os),
              _group(lc, lhs.dims, ls), _group(rc, rhs.dims, rs)]
    if any(g is None for g in groups):
        return None
    (m, ml), (_, mo), (n, nr), (_, no), (k, kl), (_, kr) = groups  # type: ignore[misc]
    if 2 * outer[0] * batch * m * n * k < MIN_GEMM_FLOPS:
        return None
    count, ol, or_, oo = outer
    if n == 1 or no == 1:
        fields = dict(m=m, n=n, k=k, a_strides=(bl, ml, kl), b_strides=(br, kr, nr),
                      c_strides=(bo, mo, 1))
        swapped, outer = False, (count, ol, or_, oo)
    elif m == 1 or mo == 1:
        fields = dict(m=n, n=m, k=k, a_strides=(br, nr, kr), b_strides=(bl, kl, ml),
                      c_strides=(bo, no, 1))
        swapped, outer = True, (count, or_, ol, oo)
    else:
        return None
    key = repr(sorted(fields.items())) + dtype.name + str(batch)
    name = "gemm." + hashlib.sha256(key.encode()).hexdigest()[:12]
    return GemmCall(GemmSpec(name=name, dtype=dtype.name, batch=batch, **fields), swapped,
                    outer)


def gemm_kernel(call: GemmCall) -> Kernel:
    """A kernel `(ptr lhs, ptr rhs, ptr out, [ptr scratch,] i64 lo, i64 hi)` running work
    items [lo, hi) of the GEMM; without a scratch parameter when the GEMM needs none (a dot
    form, an empty product), as the kernel convention says, and then it passes null."""
    plan = plan_gemm(call.spec)
    a, b = ("%in1", "%in0") if call.swapped else ("%in0", "%in1")
    scratch_param, scratch = ("ptr %scratch, ", "%scratch") if call.scratch else ("", "null")
    head = (f"define internal void @{PLACEHOLDER}(ptr %in0, ptr %in1, ptr %out0, "
            f"{scratch_param}i64 %lo, i64 %hi) nounwind {{")
    if call.outer[0] == 1:
        body = ["entry:", f"  call void @\"{plan.range_name}\"(ptr {a}, ptr {b}, ptr %out0, "
                f"ptr {scratch}, i64 %lo, i64 %hi)", "  ret void"]
    else:
        body = _slice_loop(call, plan.range_name, plan.items, a, b, scratch)
    text = "\n".join([head, *body, "}"]) + "\n"
    declaration = f'declare void @"{plan.range_name}"(ptr, ptr, ptr, ptr, i64, i64)'
    spec = call.spec
    work = call.outer[0] * spec.batch * spec.m * spec.n * max(spec.k, 1)
    return Kernel(text, 2, 1, call.outer[0] * plan.items, 1, work, call.scratch,
                  _gemm_texts(spec), (declaration,))


def _slice_loop(call: GemmCall, range_name: str, items: int, a: str, b: str, scratch: str
                ) -> list[str]:
    """The body of a kernel running work items [lo, hi) of `outer` GEMMs one after another:
    item u is item u mod `items` of the GEMM at slice u div `items`."""
    elem = "float" if call.spec.dtype == "float32" else "double"
    _, sa, sb, sc = call.outer
    return [
        "entry:",
        "  %empty = icmp sge i64 %lo, %hi",
        "  br i1 %empty, label %done, label %start",
        "start:",
        f"  %first = udiv i64 %lo, {items}",
        "  br label %head",
        "head:",
        "  %s = phi i64 [%first, %start], [%s.next, %body]",
        f"  %base = mul i64 %s, {items}",
        "  %more = icmp slt i64 %base, %hi",
        "  br i1 %more, label %body, label %done",
        "body:",
        "  %lo.rel = sub i64 %lo, %base",
        "  %lo.neg = icmp slt i64 %lo.rel, 0",
        "  %lo.s = select i1 %lo.neg, i64 0, i64 %lo.rel",
        "  %hi.rel = sub i64 %hi, %base",
        f"  %hi.big = icmp sgt i64 %hi.rel, {items}",
        f"  %hi.s = select i1 %hi.big, i64 {items}, i64 %hi.rel",
        f"  %oa = mul i64 %s, {sa}",
        f"  %ob = mul i64 %s, {sb}",
        f"  %oc = mul i64 %s, {sc}",
        f"  %pa = getelementptr inbounds {elem}, ptr {a}, i64 %oa",
        f"  %pb = getelementptr inbounds {elem}, ptr {b}, i64 %ob",
        f"  %pc = getelementptr inbounds {elem}, ptr %out0, i64 %oc",
        f"  call void @\"{range_name}\"(ptr %pa, ptr %pb, ptr %pc, ptr {scratch}, "
        "i64 %lo.s, i64 %hi.s)",
        "  %s.next = add i64 %s, 1",
        "  br label %head",
        "done:",
        "  ret void"]


@functools.lru_cache(maxsize=256)
def _gemm_texts(spec: GemmSpec) -> tuple[str, ...]:
    """The GEMM's modules (generated once per process per spec; see `emit_gemm_modules`)."""
    return emit_gemm_modules(spec)


def epilogue_fusion(fusion: HloInstruction) -> HloInstruction | None:
    """The elementwise part of a dot fusion, reading the product as one more parameter (the
    fusion's own result buffer); None when the root is the dot itself."""
    body = fusion.called[0]
    dot = dot_of(fusion)
    if dot is None or body.root is dot:
        return None
    product = HloInstruction("product", _O.PARAMETER, fusion.shape,
                             attrs={"number": len(fusion.operands)})
    new: dict[int, HloInstruction] = {id(dot): product}
    instructions = [product]
    for inst in body.instructions:
        if inst is dot:
            continue
        operands = tuple(new.get(id(o), o) for o in inst.operands)
        copy = inst if operands == inst.operands else inst.replace(operands=operands)
        new[id(inst)] = copy
        instructions.append(copy)
    root = new[id(body.root)]
    comp = HloComputation(f"{body.name}.epilogue", tuple(instructions), root)
    return HloInstruction(f"{fusion.name}.epilogue", _O.FUSION, fusion.shape,
                          fusion.operands + (fusion,), {"kind": "kLoop"}, (comp,))
