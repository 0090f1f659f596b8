"""Convolution on the GPU as im2col plus one GEMM (the approach of cuDNN's IMPLICIT_GEMM
family made explicit; XLA's GPU backend calls cuDNN instead).

`ConvolutionPlan(inst)` prepares:
- an *im2col* kernel: the patch matrix of shape (groups, batch x output positions,
  input features of a group x window taps), each element the input at the position a
  window tap reads (strides, padding, window dilation and input dilation applied; a tap
  in the padding or between dilated inputs reads 0), computed in float32 (or float64);
- the filter as the matching matrix (groups, features x taps, outputs of a group),
  reordered and flipped (window reversal) with `xp` — filters are small;
- one batched `xp.matmul` (cuBLAS / hipBLAS through CuPy), then the product moved into
  the output's dimension order and layout and rounded to its type.

Integer convolutions gather their patches as 64-bit unsigned integers and multiply with
CuPy's integer matmul: sums wrap modulo 2**64, and the cast to the result type keeps the
low bits (JAX's wrap-around; see `device_ops.summing_dtype`). Complex ones gather the
real and the imaginary parts of the input with the same real-typed kernel (gathering is
linear: the patches of z are those of Re z plus i times those of Im z; the renderer has
no complex type), then multiply with cuBLAS's complex GEMM.

A convolution inside an output fusion (a bias, an activation after it) splits like a dot
(`dot_epilogue`): the convolution as above, then the epilogue's loop kernel reading the
product. Convolutions of bools, mixed integer and floating-point ones and
`batch_group_count` > 1 are not built (the host runs them). The patch matrix costs
(output positions x taps x features) floats of memory: for the bench's 32x56x56x64 3x3
convolution, 231 MB.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (BuildOptions, FusionKernels, grid_stride,
                                                 kernel_name)
from jaxlite.backends.gpu.hlo_elemental import UnsupportedFusion
from jaxlite.backends.gpu.index_math import add, delinearize, div, linear_index, mul, rem
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import RuleContext, conv_dims_of, window_of

__all__ = ["ConvolutionPlan"]


class ConvolutionPlan:
    """How convolution `inst` runs: `kernels` (im2col) and `run`.

    Parameters
    ----------
    inst : the convolution (its operands' shapes and attributes are read).
    options : the launcher's build options.
    """

    def __init__(self, inst: HloInstruction, options: BuildOptions) -> None:
        lhs, rhs = (o.shape for o in inst.operands)
        ctx = RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)
        self.dims = conv_dims_of(ctx, lhs.rank, rhs.rank)
        self.window = window_of(ctx, len(self.dims.lhs_spatial))
        self.groups = int(inst.attr("feature_group_count", 1))
        if int(inst.attr("batch_group_count", 1)) != 1:
            raise UnsupportedFusion(f"convolution %{inst.name} with batch_group_count > 1")
        self.inst = inst
        self.compute, self.gathered = _compute_types(inst)
        d = self.dims
        self.batch = lhs.dims[d.lhs_batch]
        self.features = lhs.dims[d.lhs_feature] // self.groups
        self.outputs = rhs.dims[d.rhs_output] // self.groups
        self.taps = tuple(rhs.dims[k] for k in d.rhs_spatial)
        self.out_spatial = tuple(inst.shape.dims[k] for k in d.out_spatial)
        # the patch matrix's element type: the product's, or its real part's
        self.patch_type = np.dtype(self.compute).name if self.compute.kind != "c" else \
            self.gathered
        self.patches = Shape(np.dtype(self.patch_type), (self.groups, self.batch) +
                             self.out_spatial + (self.features,) + self.taps)
        self.kernels = self._im2col(options)

    def _im2col(self, options: BuildOptions) -> FusionKernels:
        d, w, lhs = self.dims, self.window, self.inst.operands[0].shape
        source = ir.Buffer("in0", self.gathered)
        inputs = ((source, Shape(ir.dtype_of(self.gathered), lhs.dims, lhs.layout)),)
        name = kernel_name(self.inst, options) + "_im2col"
        out = ir.Buffer("out0", self.patch_type)
        p = ir.Var("p", "int32")
        index = delinearize(p, self.patches)
        spatial = len(d.lhs_spatial)
        g, n = index[0], index[1]
        s, c, t = index[2:2 + spatial], index[2 + spatial], index[3 + spatial:]
        inside: ir.Expr = ir.Const(True, "bool")
        at = [ir.index_const(0)] * lhs.rank
        at[d.lhs_batch] = n
        at[d.lhs_feature] = add(mul(g, self.features), c)
        for k in range(spatial):
            # the tap's position in the padded, dilated input
            q = add(add(mul(s[k], w.stride[k]), mul(t[k], w.window_dilation[k])),
                    -w.pad_low[k])
            dilation, size = w.base_dilation[k], lhs.dims[d.lhs_spatial[k]]
            ok = ir.Binary("and", ir.Binary("ge", q, ir.index_const(0)),
                           ir.Binary("lt", div(q, dilation), ir.index_const(size)))
            if dilation > 1:
                ok = ir.Binary("and", ok, ir.Binary("eq", rem(q, dilation),
                                                    ir.index_const(0)))
            inside = ir.Binary("and", inside, ok)
            at[d.lhs_spatial[k]] = div(q, dilation)
        load = ir.Load(source, linear_index(tuple(at), lhs))
        value = ir.Select(inside, ir.Cast(load, self.patch_type),
                          ir.Const(0, self.patch_type))
        grid, first, step = grid_stride(options, self.patches.size)
        loop = ir.For(p, first, ir.index_const(self.patches.size), step,
                      (ir.Store(out, p, value),))
        kernel = ir.Kernel(name, (source, out), (loop,), grid, options.block,
                           options.warp_size, notes=("im2col of a convolution",))
        return FusionKernels(name, (kernel,), inputs, ((out, self.patches),))

    def run(self, xp: Any, launch: Callable[[list[Any]], Any], lhs: Any, rhs: Any) -> Any:
        """The convolution of flat `lhs` and `rhs` (launch: the im2col kernels' launcher
        on [lhs]), as flat memory in the result's layout."""
        d, shape = self.dims, self.inst.shape
        rows = self.batch * int(np.prod(self.out_spatial, dtype=np.int64))
        columns = self.features * int(np.prod(self.taps, dtype=np.int64))
        patches = self._patches(xp, launch, lhs).reshape(self.groups, rows, columns)
        filters = _logical(xp, rhs, self.inst.operands[1].shape)
        filters = xp.transpose(filters, (d.rhs_output, d.rhs_input) + d.rhs_spatial)
        flips = tuple(2 + k for k, r in enumerate(self.window.reversal) if r)
        if flips:
            filters = xp.flip(filters, flips)
        filters = filters.astype(self.compute).reshape(self.groups, self.outputs, columns)
        product = xp.matmul(patches.astype(self.compute), xp.transpose(filters, (0, 2, 1)))
        # (groups, batch, spatial..., outputs) -> (batch, spatial..., groups, outputs)
        product = product.reshape((self.groups, self.batch) + self.out_spatial +
                                  (self.outputs,))
        spatial = len(self.out_spatial)
        product = xp.moveaxis(product, 0, 1 + spatial)
        logical = product.reshape((self.batch,) + self.out_spatial +
                                  (self.groups * self.outputs,))
        # into the output's dimension order, then its layout
        order = (d.out_batch,) + tuple(d.out_spatial) + (d.out_feature,)
        logical = xp.transpose(logical, tuple(int(k) for k in np.argsort(order)))
        major_to_minor = tuple(reversed(shape.layout))
        memory = xp.ascontiguousarray(xp.transpose(logical, major_to_minor))
        return memory.astype(shape.dtype).reshape(-1)


    def _patches(self, xp: Any, launch: Callable[[list[Any]], Any], lhs: Any) -> Any:
        """The patch matrix of flat `lhs`: for a complex input, that of its real parts
        plus i times that of its imaginary parts (two runs of the real-typed kernel)."""
        if lhs.dtype.kind != "c":
            return launch([lhs])
        real = launch([xp.ascontiguousarray(lhs.real)])
        imaginary = launch([xp.ascontiguousarray(lhs.imag)])
        return real.astype(self.compute) + imaginary.astype(self.compute) * \
            self.compute.type(1j)


def _compute_types(inst: HloInstruction) -> tuple[np.dtype, str]:
    """(the type the product is summed in, the type the im2col kernel reads the input
    as) of a convolution; `UnsupportedFusion` for the kinds not built."""
    lhs, rhs, out = inst.operands[0].shape.dtype, inst.operands[1].shape.dtype, \
        inst.shape.dtype
    kinds = {lhs.kind, rhs.kind, out.kind}
    if kinds == {"f"}:
        wide = max(lhs.itemsize, rhs.itemsize, out.itemsize)
        compute = np.dtype(np.float64 if wide == 8 else np.float32)
        return compute, lhs.name
    if kinds <= {"i", "u"}:
        return np.dtype(np.uint64), lhs.name
    if out.kind == "c" and kinds <= {"f", "c"}:
        double = any(d in (np.float64, np.complex128) for d in (lhs, rhs, out))
        compute = np.dtype(np.complex128 if double else np.complex64)
        part = lhs if lhs.kind == "f" else np.empty(0, lhs).real.dtype
        return compute, part.name
    raise UnsupportedFusion(f"convolution %{inst.name} of {lhs} and {rhs} into {out}: "
                            "only floating-point, integer and complex ones are built")


def _logical(xp: Any, flat: Any, shape: Shape) -> Any:
    order = tuple(reversed(shape.layout))
    physical = flat.reshape([shape.dims[k] for k in order])
    return xp.transpose(physical, tuple(int(k) for k in np.argsort(order)))
