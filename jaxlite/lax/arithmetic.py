"""Elementwise arithmetic: add, sub, mul, div, rem, neg, integer_pow, sign, floor, ceil, and
the complex parts real, imag, conj, complex.

Mirrors those `jax.lax` functions (XLA's Add, Subtract, Multiply, Divide, Remainder, Negate,
Sign, Floor, Ceil, Real, Imag, Complex; integer_pow expands into multiplies). Also owns the
operand preparation every elementwise `lax` wrapper shares (`elementwise_operands`) and the
constant builders `full` and `full_like`. The arithmetic whose derivatives need comparisons
or `select` (max, min, pow, abs) lives in `math_functions`, which comes after `comparisons`
and `selection` in the import order (they import this module's operand helper); round is
there too, and nextafter in `special_functions`, to keep modules short.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.shape_poly import canonical_dim, is_symbolic_dim
from jaxlite.interpreters import ad
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import COMPLEX, FLOATING, INEXACT, INTEGER, NUMERIC, elementwise
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.convert import _convert_element_type, convert_element_type
from jaxlite.lax.dimension_value import dimension_as_value
from jaxlite.xla.complex_division import complex_divide
from jaxlite.xla.complex_special_values import complex_sign
from jaxlite.xla.opcodes import Opcode

__all__: list[str] = [
    "full", "full_like",
    "add", "add_p", "sub", "sub_p", "mul", "mul_p", "div", "div_p", "rem", "rem_p",
    "neg", "neg_p", "integer_pow", "integer_pow_p", "sign", "sign_p", "floor", "floor_p",
    "ceil", "ceil_p", "real", "real_p", "imag", "imag_p", "complex", "complex_p",
    "conj", "conj_p",
]


# ------------------------------------------------------------------ operand preparation

def _is_python_scalar(x: Any) -> bool:
    # bool is a strong type with one width: it is treated as a bool array, not a weak scalar.
    return dtypes.is_python_scalar(x) and not isinstance(x, bool)


def _scalar_fits(value: Any, dtype: np.dtype) -> bool:
    """Whether a Python scalar may silently take `dtype` (its weak kind promotes to it)."""
    try:
        return dtypes.result_type(dtype, type(value)) == dtype
    except (TypeError, ValueError):
        return False


def _check_int_range(name: str, value: Any, dtype: np.dtype) -> None:
    if isinstance(value, int) and dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"lax.{name}: Python int {value} is out of bounds for the "
                                f"operand dtype {np.dtype(dtype).name} "
                                f"(range [{info.min}, {info.max}]).")


def elementwise_operands(name: str, *args: Any) -> list[Any]:
    """Prepare the operands of an elementwise `lax` function for binding.

    Python scalars (int, float, complex; not bool) take the dtype shared by the array
    operands, as weak-typed values, when their kind promotes to it (an int scalar with a
    float array, a float scalar with a complex array); otherwise, or when every operand is
    a scalar, they take their own default dtype, and the primitive's dtype check reports the
    mismatch. Operands of different shapes are then broadcast with `broadcast_in_dim`.

    Parameters
    ----------
    name : the lax function's name, used in error messages.
    *args : the operands.

    Returns
    -------
    list
        The operands, all of one shape, ready for `Primitive.bind`.

    Shapes follow JAX's rule (`elementwise_shape`): 0-d operands broadcast, others must
    share a rank and broadcast only size-1 dimensions.

    Differences from JAX: `jax.lax` gives Python scalars their default dtype (so
    `lax.add(bf16_array, 1.0)` fails there); jaxlite lets scalars join the array operand's
    dtype.
    """
    operands = typed_operands(name, *args)
    shapes = [tuple(np.shape(a)) for a in operands]
    if all(s == shapes[0] for s in shapes):
        return operands
    shape = elementwise_shape(name, shapes)
    return [_broadcast_to(a, s, shape) for a, s in zip(operands, shapes)]


def typed_operands(name: str, *args: Any) -> list[Any]:
    """The operands with Python scalars given a dtype as `elementwise_operands` does, but
    left unbroadcast (for primitives such as `clamp` that take 0-d operands as they are)."""
    array_dtypes = {_operand_dtype(get_aval(a).dtype) for a in args
                    if not (_is_python_scalar(a) or is_symbolic_dim(a))}
    target = next(iter(array_dtypes)) if len(array_dtypes) == 1 else None
    operands = []
    for a in args:
        if is_symbolic_dim(a):  # a size under shape polymorphism, as a Python int
            a = dimension_as_value(a)
            a = _convert_element_type(a, target, weak_type=True) if target is not None else a
        elif _is_python_scalar(a):
            if target is not None and _scalar_fits(a, target):
                _check_int_range(name, a, target)
                dtype = target
            else:
                dtype = get_aval(a).dtype
            a = _convert_element_type(a, dtype, weak_type=True)
        operands.append(a)
    return operands


def elementwise_shape(name: str, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The result shape of an elementwise op on operands of `shapes`, by JAX's rule.

    0-d operands broadcast to any shape; the others must have one rank, and each dimension
    is the same in all of them or 1 in some. Anything else is a TypeError, as in JAX.
    """
    ranked = [s for s in shapes if s != ()]
    if not ranked:
        return ()
    ranks = sorted({len(s) for s in ranked})
    if len(ranks) > 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{{{', '.join(map(str, ranks))}}}. Differences in rank are not "
                        "broadcast by lax; use jax.numpy or lax.broadcast_in_dim.")
    out = []
    for sizes in zip(*ranked):
        wide = {d for d in sizes if d != 1}
        if len(wide) > 1:
            listed = ", ".join(str(s) for s in shapes)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {listed}. "
                            "Each dimension must agree or be 1.")
        out.append(wide.pop() if wide else 1)
    return tuple(out)


def _operand_dtype(dtype: Any) -> Any:
    # Typed PRNG keys (an extended dtype) pass on to the primitive's extended rule.
    return dtype if dtypes.is_extended(dtype) else np.dtype(dtype)


def _broadcast_to(x: Any, x_shape: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    if x_shape == shape:
        return x
    lead = len(shape) - len(x_shape)
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


# -------------------------------------------------------------------------- constants

def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Any:
    """An array of `shape` filled with `fill_value` (mirrors `jax.lax.full`).

    Without `dtype`, the dtype (and weak type) is that of `fill_value`; with one device,
    `sharding` places nothing.
    """
    # JAX also accepts a bare int; symbolic sizes (shape polymorphism) stay.
    shape = tuple(canonical_dim(d) for d in (shape if isinstance(shape, (tuple, list))
                                             else np.reshape(shape, -1)))
    if np.ndim(fill_value) != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        weak = dtypes.is_weakly_typed(fill_value)
        value = _convert_element_type(fill_value, get_aval(fill_value).dtype, weak_type=weak)
    elif dtypes.is_extended(dtype):  # typed keys: the dtype fills its physical data
        return dtype.full(shape, fill_value)
    else:
        value = convert_element_type(fill_value, dtypes.canonicalize_dtype(dtype))
    return broadcast_in_dim(value, shape, ())


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None,
              sharding: Any = None) -> Any:
    """An array like `x` filled with `fill_value` (mirrors `jax.lax.full_like`).

    The dtype is `dtype`, else `x`'s; the result is weak-typed when `x` is and no dtype is
    given. `shape` overrides `x`'s shape. `sharding` is accepted for compatibility only.
    """
    aval = get_aval(x)
    out_dtype = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    weak = aval.weak_type and dtype is None
    out_shape = aval.shape if shape is None else tuple(canonical_dim(d) for d in shape)
    if dtypes.is_extended(out_dtype):  # typed keys: the dtype fills its physical data
        return out_dtype.full(out_shape, fill_value)
    if np.ndim(fill_value) != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)} (full_like).")
    value = _convert_element_type(fill_value, out_dtype, weak_type=weak)
    return broadcast_in_dim(value, out_shape, ())


def zeros_like_array(x: Any) -> Any:
    """Zeros with `x`'s shape, dtype and weak type.

    Mirrors JAX's internal `lax.zeros_like_array` (not exported by `jax.lax` 0.10, so not
    by `jaxlite.lax` either); for the other lax modules.
    """
    return full_like(x, 0)


def _const(x: Any, value: Any) -> Any:
    """`value` as a weak scalar of `x`'s dtype, for rules that combine `x` with a constant."""
    return _convert_element_type(value, get_aval(x).dtype, weak_type=True)


# ------------------------------------------------------------------------ add, sub, neg

def _add_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct if is_undefined(x) else None, ct if is_undefined(y) else None]


add_p = elementwise("add", np.add, kinds=NUMERIC, num_args=2, hlo_opcode=Opcode.ADD)
ad.defjvp(add_p, lambda t, x, y: t, lambda t, x, y: t)
add_p.transpose = _add_transpose


def add(x: Any, y: Any) -> Any:
    """Elementwise `x + y` (mirrors `jax.lax.add`); integers wrap around on overflow."""
    return add_p.bind(*elementwise_operands("add", x, y))


def _sub_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct if is_undefined(x) else None, neg(ct) if is_undefined(y) else None]


sub_p = elementwise("sub", np.subtract, kinds=NUMERIC, num_args=2, hlo_opcode=Opcode.SUBTRACT)
ad.defjvp(sub_p, lambda t, x, y: t, lambda t, x, y: neg(t))
sub_p.transpose = _sub_transpose


def sub(x: Any, y: Any) -> Any:
    """Elementwise `x - y` (mirrors `jax.lax.sub`)."""
    return sub_p.bind(*elementwise_operands("sub", x, y))


def _neg_transpose(ct: Any, x: Any) -> list[Any]:
    return [neg(ct)]


neg_p = elementwise("neg", np.negative, kinds=NUMERIC, hlo_opcode=Opcode.NEGATE)
ad.deflinear(neg_p)
neg_p.transpose = _neg_transpose


def neg(x: Any) -> Any:
    """Elementwise `-x` (mirrors `jax.lax.neg`); unsigned integers wrap around."""
    return neg_p.bind(*elementwise_operands("neg", x))


# ----------------------------------------------------------------------------- mul, div

def _mul_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if is_undefined(x) and is_undefined(y):
        raise TypeError("mul is not linear in both operands at once: it cannot be transposed "
                        "with respect to both (one operand must be a constant).")
    if is_undefined(x):
        return [mul(ct, y), None]
    return [None, mul(x, ct)]


mul_p = elementwise("mul", np.multiply, kinds=NUMERIC, num_args=2, hlo_opcode=Opcode.MULTIPLY)
ad.defjvp(mul_p, lambda t, x, y: mul(t, y), lambda t, x, y: mul(x, t))
mul_p.transpose = _mul_transpose


def mul(x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    """Elementwise `x * y` (mirrors `jax.lax.mul`); integers wrap around on overflow.

    With `out_dtype`, both operands (which may then differ in dtype) are converted to it
    first, as JAX's CPU lowering does. Differences from JAX: that is staged as conversions
    and a plain `mul`, so the cotangents are rounded in `out_dtype` before they are
    converted back (JAX multiplies in the operand's dtype).
    """
    if out_dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(out_dtype, "mul")
        x, y = (_convert_element_type(v, dtype, weak_type=False) for v in (x, y))
    return mul_p.bind(*elementwise_operands("mul", x, y))


def _integer_divisor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`y` with the divisors XLA defines specially (0, and -1 under INT_MIN) replaced by 1."""
    special = y == 0
    if dtypes.is_signed_integer(x.dtype):
        special |= (x == np.iinfo(x.dtype).min) & (y == -1)
    return np.where(special, np.ones((), y.dtype), y)


_RECIPROCAL_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _is_broadcast_view(y: np.ndarray) -> bool:
    """Whether `y` repeats its elements along some dimension (a broadcast not copied)."""
    return any(stride == 0 and size > 1 for stride, size in zip(y.strides, y.shape))


def _div_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype in _RECIPROCAL_DTYPES and _is_broadcast_view(y):
        # As compiled code does (and JAX, where XLA rewrites it): a division by a broadcast
        # divisor is a multiplication by its reciprocal; see algebraic_simplifier.py.
        divide = complex_divide if dtypes.is_complex(y.dtype) else np.divide
        return np.multiply(x, divide(np.ones((), y.dtype), y))
    if dtypes.is_complex(x.dtype):
        return complex_divide(x, y)  # XLA's special values where Smith's gives NaN
    if not dtypes.is_integer(x.dtype):
        return np.divide(x, y)
    # XLA truncates toward zero; x / 0 is -1 (all bits set for unsigned types) and
    # INT_MIN / -1 is INT_MIN, which dividing by the substituted 1 gives.
    safe = _integer_divisor(x, y)
    quotient = np.floor_divide(x, safe)
    inexact_negative = (np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0))
    quotient = np.where(inexact_negative, quotient + 1, quotient).astype(x.dtype)
    return np.where(y == 0, np.array(-1).astype(x.dtype), quotient)


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if is_undefined(y):
        raise TypeError("div is linear only in its numerator: it cannot be transposed with "
                        "respect to the divisor.")
    return [div(ct, y), None]


div_p = elementwise("div", _div_reference, kinds=NUMERIC, num_args=2, hlo_opcode=Opcode.DIVIDE)
ad.defjvp(div_p, lambda t, x, y: div(t, y),
          lambda t, x, y: mul(mul(neg(t), x), integer_pow(y, -2)))
div_p.transpose = _div_transpose


def div(x: Any, y: Any) -> Any:
    """Elementwise `x / y` (mirrors `jax.lax.div`).

    Integer division truncates toward zero. As in XLA, an integer divided by zero gives -1
    (the largest value for unsigned types) and INT_MIN / -1 gives INT_MIN.
    """
    return div_p.bind(*elementwise_operands("div", x, y))


def _rem_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not dtypes.is_integer(x.dtype):
        return np.fmod(x, y)
    # C's remainder: the sign of the dividend. x % 0 is x and INT_MIN % -1 is 0 in XLA.
    remainder = np.fmod(x, _integer_divisor(x, y))
    return np.where(y == 0, x, remainder)


def _rem_jvp_divisor(t: Any, x: Any, y: Any) -> Any:
    # d(x - y * trunc(x / y))/dy = -trunc(x / y); trunc(q) = sign(q) * floor(sign(q) * q).
    quotient = div(x, y)
    direction = sign(quotient)
    return mul(neg(t), mul(direction, floor(mul(direction, quotient))))


rem_p = elementwise("rem", _rem_reference, kinds=INTEGER + (FLOATING,), num_args=2,
                    hlo_opcode=Opcode.REMAINDER)
ad.defjvp(rem_p, lambda t, x, y: t, _rem_jvp_divisor)


def rem(x: Any, y: Any) -> Any:
    """Elementwise remainder of truncating division (mirrors `jax.lax.rem`).

    The result has the sign of `x`, as C's `fmod` and `%` have. For integers, as in XLA,
    `x % 0` is `x` and INT_MIN % -1 is 0.
    """
    return rem_p.bind(*elementwise_operands("rem", x, y))


# -------------------------------------------------------------------------- integer_pow

def _integer_pow_reference(x: np.ndarray, *, y: int) -> np.ndarray:
    # Square-and-multiply in the operand's dtype, rounding (or wrapping) after every
    # product, which is how XLA expands the power; a negative power is one over the result.
    if y == 0:
        return np.ones_like(x)
    base, exponent, acc = x, abs(y), None
    while exponent:
        if exponent & 1:
            acc = base if acc is None else acc * base
        exponent >>= 1
        if exponent:
            base = base * base
    if y >= 0:
        return acc
    divide = complex_divide if dtypes.is_complex(x.dtype) else np.divide
    return divide(np.ones((), x.dtype), acc)


def _integer_pow_abstract_eval(x: ShapedArray, *, y: int) -> ShapedArray:
    if not isinstance(y, (int, np.integer)):
        raise TypeError(f"integer_pow: the exponent y must be a Python int, got {y!r}.")
    if y < 0 and dtypes.is_integer(x.dtype):
        raise TypeError("Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short()}, {y}).")
    return _integer_pow_elementwise_abstract_eval(x, y=y)


def _integer_pow_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                     y: int) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = integer_pow_p.bind(x, y=y)
    if y == 0:
        return out, ad.Zero(ad.tangent_aval(get_aval(out)))
    if y == 1:
        return out, t
    slope = x if y == 2 else integer_pow(x, y - 1)
    return out, mul(t, mul(_const(x, y), slope))


integer_pow_p = elementwise("integer_pow", _integer_pow_reference, kinds=NUMERIC)
_integer_pow_elementwise_abstract_eval = integer_pow_p.abstract_eval
integer_pow_p.abstract_eval = _integer_pow_abstract_eval
integer_pow_p.jvp = _integer_pow_jvp
integer_pow_p.lower = hlo.lower_integer_pow


def integer_pow(x: Any, y: int) -> Any:
    """Elementwise `x ** y` for a static integer `y` (mirrors `jax.lax.integer_pow`).

    Integer operands wrap around on overflow and take no negative exponent.
    """
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"integer_pow: the exponent y must be a Python int, got {y!r}.")
    return integer_pow_p.bind(*elementwise_operands("integer_pow", x), y=int(y))


# ----------------------------------------------------------------- sign, floor, ceil

def complex_abs(x: np.ndarray) -> np.ndarray:
    """|x| of a complex numpy array as XLA computes it: nan when either part is nan.

    C's `hypot` (and so numpy) gives inf for inf + nan*j; XLA gives nan. Shared with the
    `abs` reference in math_functions.
    """
    magnitude = np.hypot(x.real, x.imag)
    return np.where(np.isnan(x.real) | np.isnan(x.imag),
                    np.array(np.nan, magnitude.dtype), magnitude)


def _sign_reference(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return complex_sign(x)
    if dtypes.is_floating(x.dtype):
        return np.where(x == 0, x, np.sign(x))  # keeps the sign of zero, as XLA does
    return np.sign(x)


sign_p = elementwise("sign", _sign_reference, kinds=NUMERIC, hlo_opcode=Opcode.SIGN)
ad.defjvp_zero(sign_p)


def sign(x: Any) -> Any:
    """Elementwise sign: -1, 0 or 1; `x / |x|` for complex (mirrors `jax.lax.sign`).

    Signed zeros and nan are returned unchanged for floats.
    """
    return sign_p.bind(*elementwise_operands("sign", x))


floor_p = elementwise("floor", np.floor, kinds=(FLOATING,), hlo_opcode=Opcode.FLOOR)
ad.defjvp_zero(floor_p)


def floor(x: Any) -> Any:
    """Elementwise floor (mirrors `jax.lax.floor`)."""
    return floor_p.bind(*elementwise_operands("floor", x))


ceil_p = elementwise("ceil", np.ceil, kinds=(FLOATING,), hlo_opcode=Opcode.CEIL)
ad.defjvp_zero(ceil_p)


def ceil(x: Any) -> Any:
    """Elementwise ceiling (mirrors `jax.lax.ceil`)."""
    return ceil_p.bind(*elementwise_operands("ceil", x))


# ------------------------------------------------------------- real, imag, conj, complex

def keep_weak_type(primitive: Any) -> None:
    """Make an elementwise primitive's result weak when all its operands are weak.

    The `elementwise` factory drops the weak type of dtype-changing primitives; JAX keeps
    it for the parts of a complex value, a real value's conjugate, and complex `abs`.
    """
    plain = primitive.abstract_eval

    def abstract_eval(*avals: ShapedArray, **params: Any) -> ShapedArray:
        return plain(*avals, **params).update(weak_type=all(a.weak_type for a in avals))
    primitive.abstract_eval = abstract_eval


def _complex_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Assigning the parts, unlike x + 1j * y, keeps inf parts from turning into nan.
    out = np.empty(x.shape, dtypes.to_complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


def _conj_reference(x: np.ndarray, *, input_dtype: np.dtype) -> np.ndarray:
    return np.conj(x)


real_p = elementwise("real", np.real, kinds=(COMPLEX,), result_dtype=dtypes.real_dtype,
                     hlo_opcode=Opcode.REAL)
imag_p = elementwise("imag", np.imag, kinds=(COMPLEX,), result_dtype=dtypes.real_dtype,
                     hlo_opcode=Opcode.IMAG)
complex_p = elementwise("complex", _complex_reference, kinds=(FLOATING,), num_args=2,
                        result_dtype=dtypes.to_complex_dtype, hlo_opcode=Opcode.COMPLEX)
conj_p = elementwise("conj", _conj_reference, kinds=INEXACT,
                     result_dtype=dtypes.to_complex_dtype)
for _primitive in (real_p, imag_p, complex_p, conj_p):
    keep_weak_type(_primitive)
    ad.deflinear(_primitive)
_complex_plain_abstract_eval = complex_p.abstract_eval


def _complex_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    for position, part in enumerate((x, y)):
        if part.dtype not in (np.float32, np.float64):
            raise TypeError(f"complex does not accept dtype {part.dtype.name} at position "
                            f"{position}. Accepted dtypes at position {position} are subtypes "
                            "of float32, float64.")
    return _complex_plain_abstract_eval(x, y)


def _real_transpose(ct: Any, x: Any) -> list[Any]:
    return [complex(ct, full_like(ct, 0))]


def _imag_transpose(ct: Any, x: Any) -> list[Any]:
    return [complex(full_like(ct, 0), neg(ct))]


def _complex_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [real(ct) if is_undefined(x) else None, imag(neg(ct)) if is_undefined(y) else None]


def _conj_transpose(ct: Any, x: Any, *, input_dtype: np.dtype) -> list[Any]:
    return [conj(ct) if dtypes.is_complex(input_dtype) else real(ct)]


complex_p.abstract_eval = _complex_abstract_eval
real_p.transpose = _real_transpose
imag_p.transpose = _imag_transpose
complex_p.transpose = _complex_transpose
conj_p.transpose = _conj_transpose
conj_p.lower = hlo.lower_conj


def real(x: Any) -> Any:
    """The real part of a complex array (mirrors `jax.lax.real`)."""
    return real_p.bind(*elementwise_operands("real", x))


def imag(x: Any) -> Any:
    """The imaginary part of a complex array (mirrors `jax.lax.imag`)."""
    return imag_p.bind(*elementwise_operands("imag", x))


def complex(x: Any, y: Any) -> Any:  # noqa: A001 (jax.lax.complex shadows the builtin too)
    """The complex array `x + i*y` from float32 or float64 parts (`jax.lax.complex`)."""
    return complex_p.bind(*elementwise_operands("complex", x, y))


def conj(x: Any) -> Any:
    """Complex conjugate (mirrors `jax.lax.conj`); a real operand gives a complex result."""
    x, = elementwise_operands("conj", x)
    return conj_p.bind(x, input_dtype=np.dtype(get_aval(x).dtype))
