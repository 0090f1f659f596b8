"""Convolution: the `conv_general_dilated` primitive (XLA's Convolution) and its rules.

Mirrors `jax.lax.conv_general_dilated`. Dimension numbers are a `ConvDimensionNumbers` of
three index tuples: `lhs_spec` (batch, feature, spatial...), `rhs_spec` (output feature,
input feature, spatial...) and `out_spec` (batch, feature, spatial...). With
`feature_group_count` G the lhs features and the kernel output features split group-major
into G independent convolutions; with `batch_group_count` B the lhs batch and the kernel
output features split group-major and each batch group meets its own outputs.

Rules: jvp (bilinear); transposes for either operand, with feature and batch groups (the
lhs cotangent convolves the cotangent with the flipped, group-regrouped kernel, the forward
strides becoming lhs dilation; the kernel cotangent convolves the lhs with the cotangent,
batch and feature roles exchanged, feature groups becoming batch groups and vice versa);
batching by folding the mapped axis into the batch, the kernel outputs or the groups; lowering
to HLO `convolution`. The public wrappers (string padding and dimension numbers, `conv`,
`conv_transpose`) are at the end of this module; the shape rule and the numpy reference are
in `jaxlite.lax._conv_util`.
"""
from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, add_tangents, tangent_aval
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._conv_util import (ConvDimensionNumbers, Pairs, _conv_abstract_eval,
                                    _conv_reference, dilate_dim)
from jaxlite.lax.ad_util import zeros
from jaxlite.lax.broadcast import broadcast, moveaxis, reshape, transpose
from jaxlite.lax.convert import _convert_element_type
from jaxlite.lax.dot import _dot_compute_dtype, canonicalize_precision
from jaxlite.lax.shape_ops import rev
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape_inference_base import Window

__all__ = ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers",
           "conv_general_dilated_p", "conv_general_dilated",
           "conv_dimension_numbers", "conv", "conv_with_general_padding", "conv_transpose",
           "padtype_to_pads"]

# What a `dimension_numbers` argument may be (mirrors `jax.lax`'s alias of that name).
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


# ---------------------------------------------------------------------- jvp

def _matching(x: Any, aval: ShapedArray) -> Any:
    x_aval = get_aval(x)
    if x_aval.dtype == aval.dtype and x_aval.weak_type == aval.weak_type:
        return x
    return _convert_element_type(x, aval.dtype, weak_type=aval.weak_type)


def _conv_jvp(primals: Sequence[Any], tangents: Sequence[Any],
              **params: Any) -> tuple[Any, Any]:
    lhs, rhs = primals
    lhs_dot, rhs_dot = tangents
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    out_aval = get_aval(out)
    tangent: Any = Zero(tangent_aval(out_aval))
    if not dtypes.is_inexact(out_aval.dtype):
        return out, tangent
    if not isinstance(lhs_dot, Zero):
        tangent = add_tangents(tangent, _matching(
            conv_general_dilated_p.bind(lhs_dot, rhs, **params), out_aval))
    if not isinstance(rhs_dot, Zero):
        tangent = add_tangents(tangent, _matching(
            conv_general_dilated_p.bind(lhs, rhs_dot, **params), out_aval))
    return out, tangent


# ---------------------------------------------------------------------- transpose

def _leftover(size: int, kernel: int, stride: int, pad: tuple[int, int], lhs_dil: int,
              rhs_dil: int) -> int:
    """Elements at the high end of the padded input that no window reaches."""
    padded = dilate_dim(size, lhs_dil) + pad[0] + pad[1]
    extent = dilate_dim(kernel, rhs_dil)
    if padded < extent:
        return 0
    return (padded - extent) % stride


def _canonical(spec: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(range(len(spec)))


def _transpose_lhs(ct: Any, rhs: Any, lhs_aval: ShapedArray, params: dict) -> Any:
    """The lhs cotangent: the cotangent convolved with the flipped kernel, the forward
    strides becoming lhs dilation and the forward lhs dilation becoming strides."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    g, b = params["feature_group_count"], params["batch_group_count"]
    n_spatial = lhs_aval.ndim - 2
    k = transpose(rhs, rhs_spec)  # (O, I, spatial...)
    o, i_feat, *ksizes = get_aval(k).shape
    groups = max(g, b)
    # Swap the roles of the kernel's features within each group: (groups*I, O/groups, ...).
    k = reshape(k, (groups, o // groups, i_feat, *ksizes))
    k = transpose(k, (0, 2, 1) + tuple(range(3, 3 + n_spatial)))
    k = reshape(k, (groups * i_feat, o // groups, *ksizes))
    k = rev(k, tuple(range(2, 2 + n_spatial)))
    pads = []
    for d in range(n_spatial):
        size = lhs_aval.shape[lhs_spec[2 + d]]
        stride, (lo, hi) = params["window_strides"][d], params["padding"][d]
        ld, rd = params["lhs_dilation"][d], params["rhs_dilation"][d]
        extent = dilate_dim(ksizes[d], rd)
        rem = _leftover(size, ksizes[d], stride, (lo, hi), ld, rd)
        pads.append((extent - 1 - lo, extent - 1 - hi + rem))
    dn = ConvDimensionNumbers(out_spec, _canonical(rhs_spec), _canonical(lhs_spec))
    result = conv_general_dilated_p.bind(
        ct, k, window_strides=tuple(params["lhs_dilation"]), padding=tuple(pads),
        lhs_dilation=tuple(params["window_strides"]), rhs_dilation=params["rhs_dilation"],
        dimension_numbers=dn, feature_group_count=groups, batch_group_count=1,
        precision=params["precision"], preferred_element_type=None)
    n_out, _, *sizes = get_aval(result).shape
    if b > 1:  # features came out as (group, lhs feature); the groups belong to the batch
        result = reshape(result, (n_out, b, i_feat, *sizes))
        result = transpose(result, (1, 0) + tuple(range(2, 3 + n_spatial)))
        result = reshape(result, (b * n_out, i_feat, *sizes))
    return _matching(transpose(result, tuple(int(d) for d in np.argsort(lhs_spec))), lhs_aval)


def _swap(spec: tuple[int, ...]) -> tuple[int, ...]:
    return (spec[1], spec[0]) + tuple(spec[2:])


def _transpose_rhs(ct: Any, lhs: Any, rhs_aval: ShapedArray, params: dict) -> Any:
    """The kernel cotangent: the lhs convolved with the cotangent as kernel, batch and
    feature roles exchanged, the forward strides becoming rhs dilation."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    g, b = params["feature_group_count"], params["batch_group_count"]
    lhs_aval = get_aval(lhs)
    pads = []
    for d in range(lhs_aval.ndim - 2):
        size = lhs_aval.shape[lhs_spec[2 + d]]
        kernel = rhs_aval.shape[rhs_spec[2 + d]]
        stride, (lo, hi) = params["window_strides"][d], params["padding"][d]
        ld, rd = params["lhs_dilation"][d], params["rhs_dilation"][d]
        pads.append((lo, hi - _leftover(size, kernel, stride, (lo, hi), ld, rd)))
    dn = ConvDimensionNumbers(_swap(lhs_spec), _swap(out_spec), _swap(rhs_spec))
    result = conv_general_dilated_p.bind(
        lhs, ct, window_strides=tuple(params["rhs_dilation"]), padding=tuple(pads),
        lhs_dilation=params["lhs_dilation"], rhs_dilation=tuple(params["window_strides"]),
        dimension_numbers=dn, feature_group_count=b, batch_group_count=g,
        precision=params["precision"], preferred_element_type=None)
    return _matching(result, rhs_aval)


def _conv_transpose_rule(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list[Any]:
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("conv_general_dilated is bilinear, not linear: it cannot be "
                         "transposed with respect to both operands at once.")
    if isinstance(ct, Zero):
        return [None, None]
    undefined = lhs if is_undefined(lhs) else rhs
    if any(n == 0 for n in get_aval(ct).shape) or any(
            n == 0 for n in (undefined.aval.shape)):
        return [zeros(lhs.aval), None] if is_undefined(lhs) else [None, zeros(rhs.aval)]
    if is_undefined(lhs):
        return [_transpose_lhs(ct, rhs, lhs.aval, params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, params)]


# ---------------------------------------------------------------------- batching

def _merge_leading(x: Any, position: int) -> Any:
    """Move the leading (mapped) axis of `x` just before `position` of the unmapped
    layout and merge the two, the mapped axis major."""
    x = moveaxis(x, 0, position)
    shape = list(get_aval(x).shape)
    shape[position:position + 2] = [shape[position] * shape[position + 1]]
    return reshape(x, tuple(shape))


def _split_out(out: Any, dim: int, axis_size: int) -> tuple[Any, int]:
    """Split dimension `dim` of `out` into (axis_size, rest); the mapped axis is `dim`."""
    shape = list(get_aval(out).shape)
    shape[dim:dim + 1] = [axis_size, shape[dim] // axis_size]
    return reshape(out, tuple(shape)), dim


def _conv_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
                **params: Any) -> tuple[Any, int]:
    """Fold the mapped axis into the operands. A mapped lhs alone (no batch groups) joins
    the lhs batch; a mapped kernel alone (no groups) joins the kernel outputs; otherwise
    the unmapped operand is broadcast and the mapped axis makes `axis_size` times more
    feature groups (lhs features and kernel outputs) or batch groups (lhs batch and kernel
    outputs)."""
    lhs, rhs = args
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    grouped = params["feature_group_count"] > 1 or params["batch_group_count"] > 1
    if dims[1] is None and params["batch_group_count"] == 1:
        lhs = _merge_leading(moveaxis(lhs, dims[0], 0), lhs_spec[0])
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _split_out(out, out_spec[0], axis_size)
    if dims[0] is None and not grouped:
        rhs = _merge_leading(moveaxis(rhs, dims[1], 0), rhs_spec[0])
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _split_out(out, out_spec[1], axis_size)
    lhs = moveaxis(lhs, dims[0], 0) if dims[0] is not None else broadcast(lhs, (axis_size,))
    rhs = moveaxis(rhs, dims[1], 0) if dims[1] is not None else broadcast(rhs, (axis_size,))
    new = dict(params)
    if params["batch_group_count"] > 1:
        lhs = _merge_leading(lhs, lhs_spec[0])
        new["batch_group_count"] = params["batch_group_count"] * axis_size
    else:
        lhs = _merge_leading(lhs, lhs_spec[1])
        new["feature_group_count"] = params["feature_group_count"] * axis_size
    rhs = _merge_leading(rhs, rhs_spec[0])
    out = conv_general_dilated_p.bind(lhs, rhs, **new)
    return _split_out(out, out_spec[1], axis_size)


# ---------------------------------------------------------------------- lowering

def _labels(spec: tuple[int, ...], letters: str) -> str:
    chars = [""] * len(spec)
    chars[spec[0]], chars[spec[1]] = letters[0], letters[1]
    for i, d in enumerate(spec[2:]):
        chars[d] = str(i)
    return "".join(chars)


def dim_labels(dimension_numbers: ConvDimensionNumbers) -> str:
    """XLA's `dim_labels` text for dimension numbers, e.g. ``b01f_01io->b01f``."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    return (f"{_labels(lhs_spec, 'bf')}_{_labels(rhs_spec, 'oi')}->"
            f"{_labels(out_spec, 'bf')}")


def _conv_lower(ctx: LoweringContext, lhs: HloInstruction, rhs: HloInstruction, *,
                window_strides: tuple, padding: Pairs, lhs_dilation: tuple,
                rhs_dilation: tuple, dimension_numbers: ConvDimensionNumbers,
                feature_group_count: int, batch_group_count: int, precision: Any,
                preferred_element_type: Any) -> HloInstruction:
    out_shape = ctx.shape(ctx.avals_out[0])
    compute = _dot_compute_dtype(lhs.shape.dtype, rhs.shape.dtype, out_shape.dtype)
    rhs_spec = dimension_numbers.rhs_spec
    n_spatial = len(window_strides)
    window = Window(tuple(rhs.shape.dims[d] for d in rhs_spec[2:]), tuple(window_strides),
                    tuple(p[0] for p in padding), tuple(p[1] for p in padding),
                    tuple(lhs_dilation), tuple(rhs_dilation), (False,) * n_spatial)
    product = hlo.emit(ctx, Opcode.CONVOLUTION, out_shape.with_dtype(compute),
                       (hlo.convert(ctx, lhs, compute), hlo.convert(ctx, rhs, compute)),
                       window=window, dim_labels=dim_labels(dimension_numbers),
                       feature_group_count=feature_group_count,
                       batch_group_count=batch_group_count)
    return hlo.convert(ctx, product, out_shape.dtype)


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.abstract_eval = _conv_abstract_eval
conv_general_dilated_p.reference = _conv_reference
conv_general_dilated_p.jvp = _conv_jvp
conv_general_dilated_p.transpose = _conv_transpose_rule
conv_general_dilated_p.batch = _conv_batch
conv_general_dilated_p.lower = _conv_lower


# ---------------------------------------------------------------------- wrappers

def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """Explicit (low, high) pads for a padding name (mirrors `jax.lax.padtype_to_pads`).

    'VALID' pads nothing; 'SAME' pads so that the output has ceil(size / stride) elements,
    the extra element (if the total is odd) at the high end; 'SAME_LOWER' puts it low.
    """
    name = str(getattr(padding, "name", padding)).upper()
    if name == "VALID":
        return [(0, 0)] * len(in_shape)
    if name not in ("SAME", "SAME_LOWER"):
        raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                         f"'SAME_LOWER', got {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if name == "SAME" else (large, small))
    return pads


def _spec_from_strings(lhs: str, rhs: str, out: str) -> ConvDimensionNumbers:
    if len(lhs) != len(rhs) or len(lhs) != len(out):
        raise TypeError(f"conv_dimension_numbers: the specs {lhs!r}, {rhs!r}, {out!r} must "
                        "have one length (the operands' rank).")
    for spec, letters in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if any(spec.count(c) != 1 for c in letters) or len(set(spec)) != len(spec):
            raise TypeError(f"conv_dimension_numbers: spec {spec!r} must name {letters[0]!r} "
                            f"and {letters[1]!r} once each and no dimension twice.")
    spatial = [c for c in rhs if c not in "OI"]
    for spec in (lhs, out):
        if sorted(c for c in spec if c not in "NC") != sorted(spatial):
            raise ValueError(f"conv_dimension_numbers: spatial dimensions of {spec!r} must be "
                             f"those of the kernel spec {rhs!r}.")
    return ConvDimensionNumbers(
        (lhs.index("N"), lhs.index("C")) + tuple(lhs.index(c) for c in spatial),
        (rhs.index("O"), rhs.index("I")) + tuple(rhs.index(c) for c in spatial),
        (out.index("N"), out.index("C")) + tuple(out.index(c) for c in spatial))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """Dimension numbers as a `ConvDimensionNumbers` (mirrors
    `jax.lax.conv_dimension_numbers`).

    `dimension_numbers` is None (NCHW, OIHW, NCHW order of any rank), a
    `ConvDimensionNumbers`, or three strings such as ('NHWC', 'HWIO', 'NHWC'), in which
    spatial dimensions pair up by letter, in the order the kernel string lists them.
    """
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)} (shapes {tuple(lhs_shape)} and "
                        f"{tuple(rhs_shape)}).")
    if dimension_numbers is None:
        default = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    try:
        lhs, rhs, out = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("conv_dimension_numbers: dimension_numbers must be None, a "
                        "ConvDimensionNumbers or three strings such as ('NHWC', 'HWIO', "
                        f"'NHWC'), got {dimension_numbers!r}.") from None
    if all(isinstance(s, str) for s in (lhs, rhs, out)):
        numbers = _spec_from_strings(lhs, rhs, out)
        if len(numbers.lhs_spec) != len(lhs_shape):
            raise TypeError(f"conv_dimension_numbers: specs {dimension_numbers} do not match "
                            f"operands of rank {len(lhs_shape)}.")
        return numbers
    return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in (lhs, rhs, out)))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """General n-d convolution with dilations and groups (mirrors
    `jax.lax.conv_general_dilated`).

    Parameters
    ----------
    lhs, rhs : the input and the kernel, of one rank n + 2.
    window_strides : n strides.
    padding : 'VALID', 'SAME', 'SAME_LOWER', or n (low, high) pairs (negative crops).
    lhs_dilation, rhs_dilation : n dilation factors (default ones); string padding is not
        allowed with lhs dilation (use `conv_transpose`).
    dimension_numbers : None, a `ConvDimensionNumbers` or strings (see
        `conv_dimension_numbers`).
    feature_group_count, batch_group_count : grouped convolution (at most one above 1).
    precision : as for `dot_general` (no effect on the CPU).
    preferred_element_type : the result and accumulation dtype.

    Differences from JAX: `out_sharding` must be None.
    """
    if out_sharding is not None:
        raise NotImplementedError("jaxlite does not support out_sharding in "
                                  "lax.conv_general_dilated.")
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    numbers = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n_spatial = len(lhs_shape) - 2
    ones = (1,) * n_spatial
    lhs_dilation = ones if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = ones if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        kernel = [dilate_dim(rhs_shape[d], r) for d, r in zip(numbers.rhs_spec[2:],
                                                               rhs_dilation)]
        padding = padtype_to_pads([lhs_shape[d] for d in numbers.lhs_spec[2:]], kernel,
                                  window_strides, padding)
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError("conv_general_dilated: padding must be 'VALID', 'SAME', "
                         f"'SAME_LOWER' or a sequence of (low, high) pairs, got {padding!r}."
                         ) from None
    preferred = (None if preferred_element_type is None else dtypes.
                 check_and_canonicalize_user_dtype(preferred_element_type,
                                                   "conv_general_dilated"))
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides), padding=pads,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=numbers,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=preferred)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Convolution in NCHW / OIHW layout (mirrors `jax.lax.conv`); see
    `conv_general_dilated`."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """Convolution in NCHW / OIHW layout with dilations (mirrors
    `jax.lax.conv_with_general_padding`); see `conv_general_dilated`."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_padding(kernel: int, stride: int, padding: Any) -> tuple[int, int]:
    """Pads of the fractionally strided convolution that undoes a forward convolution with
    padding 'SAME' or 'VALID' (or explicit forward pads) of a dilated kernel extent."""
    if isinstance(padding, str):
        if padding == "SAME":
            total = kernel + stride - 2
            low = kernel - 1 if stride > kernel - 1 else -(-total // 2)
        elif padding == "VALID":
            total = kernel + stride - 2 + max(kernel - stride, 0)
            low = kernel - 1
        else:
            raise ValueError("Padding mode must be `SAME` or `VALID`.")
        return low, total - low
    lo, hi = padding
    return kernel - 1 - int(lo), kernel - 1 - int(hi)


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """Fractionally strided ("transposed") convolution (mirrors `jax.lax.conv_transpose`).

    The input is dilated by `strides` and convolved with stride one. `padding` 'SAME' or
    'VALID' names the forward convolution's padding; explicit pairs are the transposed
    convolution's own pads, unless `use_consistent_padding`, where they are the forward
    pads too. Default layouts are TensorFlow's (NC, NHC, NHWC, NHWDC with kernels IO, HIO,
    HWIO, HWDIO). `transpose_kernel` flips the kernel's spatial axes and swaps its input
    and output feature axes (the gradient of `conv_general_dilated`).
    """
    ndim = np.ndim(lhs)
    if ndim != np.ndim(rhs) or ndim < 2:
        raise TypeError(f"conv_transpose: lhs and rhs must have one rank, at least 2, got "
                        f"shapes {np.shape(lhs)} and {np.shape(rhs)}.")
    if dimension_numbers is None:
        spatial = "HWD"[:ndim - 2] if ndim <= 5 else None
        if spatial is None:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = ("N" + spatial + "C", spatial + "IO", "N" + spatial + "C")
    numbers = conv_dimension_numbers(np.shape(lhs), np.shape(rhs), dimension_numbers)
    n_spatial = ndim - 2
    rhs_dilation = (1,) * n_spatial if rhs_dilation is None else tuple(rhs_dilation)
    kernel = [dilate_dim(np.shape(rhs)[d], r) for d, r in zip(numbers.rhs_spec[2:],
                                                               rhs_dilation)]
    if isinstance(padding, str) and padding not in ("SAME", "VALID"):
        raise ValueError("Padding mode must be `SAME` or `VALID`.")
    if use_consistent_padding or isinstance(padding, str):
        each = [padding] * n_spatial if isinstance(padding, str) else list(padding)
        pads = [_transpose_padding(k, int(s), p) for k, s, p in zip(kernel, strides, each)]
    else:
        pads = list(padding)
    if transpose_kernel:
        rhs = rev(rhs, tuple(numbers.rhs_spec[2:]))
        perm = list(range(ndim))
        o, i = numbers.rhs_spec[0], numbers.rhs_spec[1]
        perm[o], perm[i] = i, o
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * n_spatial, pads, lhs_dilation=tuple(strides),
                                rhs_dilation=rhs_dilation, dimension_numbers=numbers,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
