"""The fast Fourier transform: the fft primitive and its wrapper (mirrors `jax.lax.fft`).

One primitive transforms the trailing `len(fft_lengths)` (1 to 3) dimensions of its operand;
the leading ones are batch dimensions. Four kinds, as XLA's Fft instruction has them:

- FFT and IFFT: complex to complex, forward and inverse (the inverse divides by the product
  of the lengths);
- RFFT: real to complex, keeping `n // 2 + 1` entries of the last dimension (the others are
  the complex conjugates of these);
- IRFFT: the inverse of RFFT, complex to real, reading only those `n // 2 + 1` entries (it
  ignores the imaginary parts of the zero-frequency and, for even `n`, Nyquist entries).

All four are linear over the reals, so the jvp is the transform of the tangent. Transposes
(with `N` the product of the lengths and `w` the weight 1 on the zero-frequency and Nyquist
entries of the last dimension, 2 on the others, i.e. how often an entry of the half spectrum
stands for an entry of the full one):

- FFT and IFFT are symmetric matrices (and so are their tensor products), so each is its
  own transpose;
- IRFFT computes `Re(sum_k w_k z_k e^{+i theta}) / N`, whose transpose is
  `w * conj(RFFT(ct)) / N`;
- RFFT's transpose is `Re(sum_k ct_k e^{-i theta})` over the half spectrum, which IRFFT
  computes from `N * conj(ct) / w` (IRFFT doubles every entry that `w` divides by 2).

The compiler has no fft opcode: the primitive lowers to a custom-call `jaxlite_fft`, whose
target (registered here in `jaxlite.xla.evaluator.CUSTOM_CALL_TARGETS`) runs numpy's
pocketfft, the same code as the eager reference.
"""
from __future__ import annotations

import enum
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.ad import Zero
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.arithmetic import conj, mul
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.convert import convert_element_type
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["FftType", "fft", "fft_p"]

MAX_FFT_RANK = 3  # XLA's Fft transforms at most three dimensions at once
CUSTOM_CALL_TARGET = "jaxlite_fft"


class FftType(enum.IntEnum):
    """Which transform `fft` computes (mirrors `jax.lax.FftType`)."""

    FFT = 0
    """Complex to complex, forward."""
    IFFT = 1
    """Complex to complex, inverse (divided by the product of the lengths)."""
    RFFT = 2
    """Real to complex, forward (the non-redundant half of the last dimension)."""
    IRFFT = 3
    """Complex to real, inverse of RFFT."""


fft_p = Primitive("fft")


def _half_length(n: int) -> int:
    """How many entries of the last dimension a real transform of length `n` keeps."""
    return n // 2 + 1


def _fft_abstract_eval(operand: ShapedArray, *, fft_type: FftType,
                       fft_lengths: tuple[int, ...]) -> ShapedArray:
    shape, dtype, rank = tuple(operand.shape), np.dtype(operand.dtype), len(fft_lengths)
    if not 1 <= rank <= MAX_FFT_RANK:
        raise ValueError(f"fft: fft_lengths must have 1 to {MAX_FFT_RANK} entries, got "
                         f"{fft_lengths}; transform more dimensions with several calls.")
    if rank > len(shape):
        raise ValueError(f"fft: the operand of shape {shape} has fewer dimensions than "
                         f"fft_lengths {fft_lengths}.")
    if any(n < 0 for n in fft_lengths):
        raise ValueError(f"fft: fft_lengths must be nonnegative, got {fft_lengths}.")
    batch, minor = shape[:-rank], shape[-rank:]
    if fft_type == FftType.RFFT:
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"fft: RFFT input must be float32 or float64, got {dtype.name}; "
                             "convert it first.")
        expected, out_dtype = fft_lengths, dtypes.to_complex_dtype(dtype)
        out_shape = batch + fft_lengths[:-1] + (_half_length(fft_lengths[-1]),)
    else:
        if not dtypes.is_complex(dtype):
            raise ValueError(f"fft: {fft_type.name} input must be complex64 or complex128, "
                             f"got {dtype.name}; convert it first.")
        if fft_type == FftType.IRFFT:
            expected = fft_lengths[:-1] + (_half_length(fft_lengths[-1]),)
            out_shape, out_dtype = batch + fft_lengths, dtypes.real_dtype(dtype)
        else:
            expected, out_shape, out_dtype = fft_lengths, shape, dtype
    if minor != expected:
        raise ValueError(f"fft: {fft_type.name} with fft_lengths {fft_lengths} needs the "
                         f"operand's trailing dimensions to be {expected}, got shape "
                         f"{shape}.")
    return ShapedArray(out_shape, out_dtype, operand.weak_type)


def _fft_reference(x: np.ndarray, *, fft_type: FftType,
                   fft_lengths: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    out = _fft_abstract_eval(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                             fft_lengths=fft_lengths)
    # pocketfft refuses empty transforms; an empty sum is zero
    if math.prod(out.shape) == 0 or math.prod(fft_lengths) == 0:
        return np.zeros(out.shape, out.dtype)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    transform = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn,
                 FftType.RFFT: np.fft.rfftn, FftType.IRFFT: np.fft.irfftn}[fft_type]
    # numpy keeps single precision (complex64 stays complex64); the cast fixes the rest
    return transform(x, s=fft_lengths, axes=axes).astype(out.dtype, copy=False)


def _last_axis_weights(ct: Any, fft_lengths: tuple[int, ...], power: int) -> Any:
    """`w ** power` along the last axis of `ct`, broadcast to its shape (see the module's
    docstring for `w`), in `ct`'s dtype."""
    n = fft_lengths[-1]
    weights = np.full(_half_length(n), 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    aval = get_aval(ct)
    return broadcast_in_dim(np.asarray(weights ** power, aval.dtype), aval.shape,
                            (len(aval.shape) - 1,))


def _fft_transpose(ct: Any, operand: Any, *, fft_type: FftType,
                   fft_lengths: tuple[int, ...]) -> list[Any]:
    size = math.prod(fft_lengths)
    if size == 0:
        return [Zero(operand.aval)]
    if fft_type == FftType.RFFT:
        half = mul(conj(ct), _last_axis_weights(ct, fft_lengths, -1))
        scaled = mul(half, np.asarray(size, get_aval(half).dtype))
        return [fft_p.bind(scaled, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)]
    if fft_type == FftType.IRFFT:
        spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        weighted = mul(conj(spectrum), _last_axis_weights(spectrum, fft_lengths, 1))
        return [mul(weighted, np.asarray(1 / size, get_aval(weighted).dtype))]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _fft_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
               fft_type: FftType, fft_lengths: tuple[int, ...]) -> tuple[Any, int]:
    # the transformed dimensions are the trailing ones, so a leading batch axis is free
    x = move_batch_axis(args[0], dims[0], axis_size, 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


def _backend_config(fft_type: FftType, fft_lengths: tuple[int, ...]) -> str:
    return json.dumps({"fft_type": fft_type.name, "fft_length": list(fft_lengths)})


def _fft_lower(ctx: LoweringContext, x: HloInstruction, *, fft_type: FftType,
               fft_lengths: tuple[int, ...]) -> HloInstruction:
    return hlo.result(ctx, Opcode.CUSTOM_CALL, (x,), target=CUSTOM_CALL_TARGET,
                      backend_config=_backend_config(fft_type, fft_lengths),
                      custom_call_has_side_effect=False)  # pure: may be CSE'd or dropped


def _fft_custom_call(inst: HloInstruction, x: np.ndarray) -> np.ndarray:
    """The `jaxlite_fft` custom-call target: the transform its backend_config describes."""
    config = json.loads(inst.attr("backend_config"))
    return _fft_reference(x, fft_type=FftType[config["fft_type"]],
                          fft_lengths=tuple(int(n) for n in config["fft_length"]))


fft_p.abstract_eval = _fft_abstract_eval
fft_p.reference = _fft_reference
ad.deflinear(fft_p)
fft_p.transpose = _fft_transpose
fft_p.batch = _fft_batch
fft_p.lower = _fft_lower
CUSTOM_CALL_TARGETS[CUSTOM_CALL_TARGET] = _fft_custom_call


# ---------------------------------------------------------------------------- wrapper

_FFT_TYPE_NAMES = {**{t.name: t for t in FftType}, **{t.name.lower(): t for t in FftType}}


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type not in _FFT_TYPE_NAMES:
            raise ValueError(f"Unknown FFT type '{fft_type}'; use one of FFT, IFFT, RFFT, "
                             "IRFFT (or lax.FftType).")
        return _FFT_TYPE_NAMES[fft_type]
    raise TypeError(f"Unknown FFT type value '{fft_type}'; pass a lax.FftType or one of the "
                    "strings 'FFT', 'IFFT', 'RFFT', 'IRFFT'.")


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """Fourier transform of the trailing `len(fft_lengths)` dimensions of `x`
    (mirrors `jax.lax.fft`).

    Parameters
    ----------
    x : array. Converted first: to its complex type for FFT, IFFT and IRFFT (int32 ->
        complex64), to its floating type for RFFT (which rejects complex inputs).
    fft_type : a `FftType` or its name ("FFT", "ifft", ...).
    fft_lengths : the lengths of the trailing dimensions (at most 3); for IRFFT the last
        input dimension must be `fft_lengths[-1] // 2 + 1`. Empty: `x` is returned converted.
    """
    kind = _fft_type(fft_type)
    source = dtypes.dtype(x)
    if kind == FftType.RFFT:
        if dtypes.is_complex(source):
            raise ValueError("only real valued inputs supported for rfft; take the real "
                             "part or use FftType.FFT.")
        target = dtypes.to_inexact_dtype(source)
    else:
        target = dtypes.to_complex_dtype(source)
    x = convert_element_type(x, dtypes.canonicalize_dtype(target))
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=kind, fft_lengths=lengths)
