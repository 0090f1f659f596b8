"""From an optimized HLO module to GPU kernels: which builder makes the kernels of each
fusion (the GPU side of XLA's IrEmitterUnnested, for fusions).

- kLoop fusions reading a parameter transposed: `transpose_kernels` (shared-memory tiles);
- other kLoop fusions: `fusion_kernels.build_loop_fusion` (grid-stride, vector accesses);
- kInput fusions whose tiling says `row_kernel`, or that reduce the most minor dimensions
  of at least `BuildOptions.row_kernel_min_rows` rows: `reduction_kernels.build_row_fusion`
  (the cpu tiling's choice is about its L1 cache; a GPU block has no such limit);
- other kInput fusions: `reduction_kernels.build_tree_fusion` (two-stage tree);
- multi-output fusions none of these takes whole (outputs of different shapes, reductions
  over different dimensions): one fusion per output, built in turn (`split_outputs`; the
  work the outputs share is computed again by each, but nothing goes to the host);
- fusions whose root is one reduce of several operands (argmax, argmin):
  `variadic_reductions` (two loop kernels evaluating the combiner's HLO);
- fusions reducing a reduction (a cross-entropy's mean of row sums): the inner
  reductions first, into scratch buffers, then the rest (`split_nested_reductions`).
Anything else (dot epilogues, sorts, ...) raises `UnsupportedFusion`.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (BuildOptions, FusionKernels, build_loop_fusion,
                                                 kernel_name, output_buffers)
from jaxlite.backends.gpu.fusion_split import split_nested_reductions, split_outputs
from jaxlite.backends.gpu.hlo_elemental import UnsupportedFusion
from jaxlite.backends.gpu.reduction_kernels import build_row_fusion, build_tree_fusion
from jaxlite.backends.gpu.transpose_kernels import build_transpose_fusion, tiled_transpose
from jaxlite.backends.gpu.variadic_reductions import (build_variadic_reduction,
                                                      is_variadic_reduction)
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import INPUT, LOOP
from jaxlite.xla.passes.tiling import tiling_for, tiling_of

__all__ = ["BuildOptions", "ModuleKernels", "UnsupportedFusion", "build_fusion",
           "build_module", "split_outputs"]


def build_fusion(fusion: HloInstruction, options: BuildOptions | None = None) -> FusionKernels:
    """The kernels of one fusion instruction of an optimized module; a multi-output
    fusion no builder takes whole is built output by output (`split_outputs`)."""
    options = options or BuildOptions()
    try:
        return _build_whole(fusion, options)
    except UnsupportedFusion:
        if is_variadic_reduction(fusion):
            return build_variadic_reduction(fusion, options)
        staged = split_nested_reductions(fusion)
        if staged is not None:
            return _build_staged(fusion, *staged, options)
        if not fusion.shape.is_tuple:
            raise
    return _build_split(fusion, options)


def _build_whole(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    kind = fusion.attr("kind")
    body = fusion.called[0]
    has_reduce = any(i.opcode is Opcode.REDUCE for i in body.instructions)
    if kind == LOOP and not has_reduce:
        if tiled_transpose(fusion) is not None:
            return build_transpose_fusion(fusion, options)
        return build_loop_fusion(fusion, options)
    if kind == INPUT and has_reduce:
        tiling = tiling_of(fusion) or tiling_for(fusion)
        if tiling.row_kernel or _many_minor_rows(tiling, options):
            return build_row_fusion(fusion, options)
        return build_tree_fusion(fusion, options)
    raise UnsupportedFusion(f"fusion %{fusion.name} of kind {kind}: no gpu kernel builder "
                            "yet")


def _many_minor_rows(tiling, options: BuildOptions) -> bool:
    """Whether the reduced dimensions are the most minor and the kept ones many."""
    reduced = set(tiling.reduced_dims)
    rank = len(tiling.iteration_shape)
    minor = set(tiling.loop_order[rank - len(reduced):]) if reduced else set()
    rows = 1
    for d in range(rank):
        rows *= 1 if d in reduced else tiling.iteration_shape[d]
    return bool(reduced) and minor == reduced and rows >= options.row_kernel_min_rows


def _build_split(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    """The kernels of each output of `fusion` in turn, their result buffers renamed to
    the fusion's `out<k>`."""
    kernels, scratch = [], []
    inputs = outputs = None
    for k, part in enumerate(split_outputs(fusion)):
        built = _build_whole(part, options)
        names = {built.outputs[0][0].name: f"out{k}"}
        kernels += [ir.rename_buffers(kernel, names) for kernel in built.kernels]
        scratch += built.scratch
        inputs = built.inputs
    outputs = output_buffers(fusion)
    return FusionKernels(kernel_name(fusion, options), tuple(kernels), inputs, outputs,
                         tuple(scratch))


def _build_staged(fusion: HloInstruction, first: HloInstruction, second: HloInstruction,
                  options: BuildOptions) -> FusionKernels:
    """The kernels of `first` (the inner reductions), writing scratch buffers that
    `second` (the rest) reads as its extra operands."""
    one, two = build_fusion(first, options), build_fusion(second, options)
    name = kernel_name(fusion, options)
    count = len(fusion.operands)
    middle = [ir.Buffer(f"{name}_mid{k}", b.dtype, "global", s.size)
              for k, (b, s) in enumerate(one.outputs)]
    kernels = [ir.rename_buffers(k, {b.name: m.name for (b, _), m in zip(one.outputs, middle)})
               for k in one.kernels]
    kernels += [ir.rename_buffers(k, {f"in{count + j}": m.name for j, m in enumerate(middle)})
                for k in two.kernels]
    return FusionKernels(name, tuple(kernels), two.inputs[:count], two.outputs,
                         one.scratch + two.scratch + tuple(middle))


@dataclass(frozen=True)
class ModuleKernels:
    """The kernels of every fusion of a module's entry computation, in program order, and
    the fusions no builder handles yet (with the reason)."""
    fusions: tuple[tuple[HloInstruction, FusionKernels], ...]
    unsupported: tuple[tuple[HloInstruction, str], ...]


def build_module(module: HloModule, options: BuildOptions | None = None) -> ModuleKernels:
    """Builds the kernels of every fusion of `module`'s entry computation."""
    built, unsupported = [], []
    for inst in module.entry.instructions:
        if inst.opcode is not Opcode.FUSION:
            continue
        try:
            built.append((inst, build_fusion(inst, options)))
        except UnsupportedFusion as error:
            unsupported.append((inst, str(error)))
        except (ValueError, TypeError, KeyError) as error:
            # A case the builders do not know yet (complex fusions, ...): the host computes
            # it, with the same numbers, and `text("kernels")` says why.
            unsupported.append((inst, f"the kernel builders failed on it "
                                      f"({type(error).__name__}: {error})"))
    return ModuleKernels(tuple(built), tuple(unsupported))
