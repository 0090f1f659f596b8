"""Special functions: erf, erfc, erf_inv, lgamma, digamma; and nextafter.

Mirrors `jax.lax.erf`, `erfc`, `erf_inv`, `lgamma`, `digamma` (which XLA's CHLO dialect
expands into polynomial approximations) and `jax.lax.nextafter` (XLA's NextAfter; it sits
here, with the other C math-library functions, rather than in the already long
`math_functions`). The numpy references use only the standard library's `math` functions
and series written here: scipy is not a dependency. They compute in float64 and round, so
they are at least as accurate as XLA's float32 approximations; but float32 erf and erf_inv
make the roundings of XLA's CPU kernels (`jaxlite.xla.cpu_f32_kernels`), so that they give
JAX's values bit for bit.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite.interpreters import ad
from jaxlite.lax._declare import FLOATING, elementwise
from jaxlite.lax.arithmetic import (_const, add, div, elementwise_operands, integer_pow, mul,
                                    neg, sub)
from jaxlite.lax.comparisons import lt
from jaxlite.lax.math_functions import RoundingMethod, exp, round, sin, square
from jaxlite.lax.selection import select
from jaxlite.xla.cpu_f32_kernels import erf_f32, erf_inv_f32, for_float32
from jaxlite.xla.opcodes import Opcode

__all__: list[str] = [
    "erf", "erf_p", "erfc", "erfc_p", "erf_inv", "erf_inv_p", "lgamma", "lgamma_p",
    "digamma", "digamma_p", "nextafter", "nextafter_p",
]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_TRIGAMMA_SHIFT = 12
# The Bernoulli numbers B_2 ... B_12 of trigamma's asymptotic series.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


def _in_float64(function: Any) -> Any:
    """Apply a Python float function elementwise in float64, returning the input's dtype."""
    vectorized = np.vectorize(function, otypes=[np.float64])

    def reference(x: np.ndarray) -> np.ndarray:
        wide = np.asarray(x, np.float64)
        out = vectorized(wide) if wide.size else np.empty(wide.shape, np.float64)
        return out.astype(x.dtype)
    reference.__name__ = getattr(function, "__name__", "reference")
    return reference


# ------------------------------------------------------------------------------ erf, erfc

# float32 erf and erf_inv compute XLA's CPU kernels bit for bit (JAX's values).
erf_p = elementwise("erf", for_float32(erf_f32, _in_float64(math.erf)), kinds=(FLOATING,),
                    hlo_opcode=Opcode.ERF)
ad.defjvp(erf_p, lambda t, x: mul(t, mul(_const(x, _TWO_OVER_SQRT_PI), exp(neg(square(x))))))
erfc_p = elementwise("erfc", _in_float64(math.erfc), kinds=(FLOATING,), hlo_opcode=Opcode.ERFC)
ad.defjvp(erfc_p,
          lambda t, x: mul(t, mul(_const(x, -_TWO_OVER_SQRT_PI), exp(neg(square(x))))))


def erf(x: Any) -> Any:
    """Elementwise error function (mirrors `jax.lax.erf`)."""
    return erf_p.bind(*elementwise_operands("erf", x))


def erfc(x: Any) -> Any:
    """Elementwise complementary error function `1 - erf(x)` (mirrors `jax.lax.erfc`)."""
    return erfc_p.bind(*elementwise_operands("erfc", x))


# --------------------------------------------------------------------------------- erf_inv

def _erf_inv_scalar(x: float) -> float:
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    if x == 0:
        return x  # keeps the sign of zero
    # A closed-form first guess (relative error below 1%), then Newton steps on
    # erfc(y) = 1 - |x|, which stays accurate where |x| is close to 1 and erf(y) is not.
    log_term = math.log1p(-x * x)
    a = 0.147
    b = 2.0 / (math.pi * a) + log_term / 2.0
    y = math.sqrt(math.sqrt(b * b - log_term / a) - b)
    target = 1.0 - abs(x)  # exact: a float32 input's 1 - |x| fits a float64
    for _ in range(6):
        slope = _TWO_OVER_SQRT_PI * math.exp(-y * y)
        if slope == 0.0:
            break
        y += (math.erfc(y) - target) / slope
    return math.copysign(y, x)


erf_inv_p = elementwise("erf_inv", for_float32(erf_inv_f32, _in_float64(_erf_inv_scalar)),
                        kinds=(FLOATING,), hlo_opcode=Opcode.ERF_INV)
ad.defjvp_with_output(
    erf_inv_p,
    lambda t, out, x: mul(t, mul(_const(x, math.sqrt(math.pi) / 2), exp(square(out)))))


def erf_inv(x: Any) -> Any:
    """Elementwise inverse of the error function on [-1, 1] (mirrors `jax.lax.erf_inv`).

    erf_inv(±1) is ±inf; outside [-1, 1] the result is nan.
    """
    return erf_inv_p.bind(*elementwise_operands("erf_inv", x))


# -------------------------------------------------------------------------- lgamma, digamma

def _lgamma_scalar(x: float) -> float:
    if math.isinf(x):
        return math.inf
    if x <= 0 and x == math.floor(x):
        return math.inf  # the poles at 0, -1, -2, ... (math.lgamma raises there)
    return math.lgamma(x)


def _digamma_scalar(x: float) -> float:
    if math.isnan(x) or x == -math.inf or (x <= 0 and x == math.floor(x)):
        return math.nan  # at the poles XLA gives nan, not an infinity
    if x == math.inf:
        return math.inf
    reflection = 0.0
    if x < 0.5:
        # psi(x) = psi(1 - x) - pi / tan(pi x) moves x where the series below converges.
        # tan has period pi: reducing x by a whole number first (exactly) keeps pi x from
        # losing the digits that decide tan near the poles.
        reflection = -math.pi / math.tan(math.pi * (x - math.floor(x + 0.5)))
        x = 1.0 - x
    # psi(x) = psi(x + n) - sum 1/(x + k), then the asymptotic series in 1/x at x + n >= 16,
    # where its first omitted term is below float64's resolution.
    shift = 0.0
    while x < 16.0:
        shift -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 * (1 / 132)))))
    return reflection + shift + math.log(x) - 0.5 / x - series


def _trigamma(x: Any) -> Any:
    """psi'(x), the derivative of digamma, composed from lax operations.

    Like `_digamma_scalar`: reflection below 1/2 (psi'(x) = pi**2 / sin(pi x)**2 -
    psi'(1 - x)), the recurrence psi'(x) = psi'(x + 1) + 1 / x**2 up to x + 12, and there
    the asymptotic series 1/w + 1/(2 w^2) + sum B_2k / w^(2k+1) through B_12.
    """
    reflect = lt(x, _const(x, 0.5))
    z = select(reflect, sub(_const(x, 1), x), x)
    total = integer_pow(z, -2)
    for k in range(1, _TRIGAMMA_SHIFT):
        total = add(total, integer_pow(add(z, _const(z, k)), -2))
    w = add(z, _const(z, _TRIGAMMA_SHIFT))
    inv = integer_pow(w, -1)
    inv2 = mul(inv, inv)
    series = _const(w, _BERNOULLI[-1])
    for coefficient in reversed(_BERNOULLI[:-1]):
        series = add(_const(w, coefficient), mul(inv2, series))
    total = add(total, add(mul(inv, add(_const(w, 1), mul(inv2, series))),
                           mul(_const(w, 0.5), inv2)))
    # sin(pi x)**2 has period 1: reducing x first keeps pi x accurate near the poles. Where
    # x is not reflected, a harmless 1/4 stands in for it, so that the unused branch (inf at
    # whole x) does not make the derivative through `select` 0 * inf = nan.
    xr = select(reflect, x, _const(x, 0.25))
    angle = mul(_const(x, math.pi), sub(xr, round(xr, RoundingMethod.TO_NEAREST_EVEN)))
    reflected = sub(div(_const(x, math.pi ** 2), square(sin(angle))), total)
    return select(reflect, reflected, total)


lgamma_p = elementwise("lgamma", _in_float64(_lgamma_scalar), kinds=(FLOATING,),
                       hlo_opcode=Opcode.LGAMMA)
ad.defjvp(lgamma_p, lambda t, x: mul(t, digamma(x)))
digamma_p = elementwise("digamma", _in_float64(_digamma_scalar), kinds=(FLOATING,),
                        hlo_opcode=Opcode.DIGAMMA)
ad.defjvp(digamma_p, lambda t, x: mul(t, _trigamma(x)))


def lgamma(x: Any) -> Any:
    """Elementwise log of the absolute value of the gamma function (`jax.lax.lgamma`)."""
    return lgamma_p.bind(*elementwise_operands("lgamma", x))


def digamma(x: Any) -> Any:
    """Elementwise digamma function, the derivative of lgamma (`jax.lax.digamma`).

    At the poles 0, -1, -2, ... the result is nan, as in JAX.
    """
    return digamma_p.bind(*elementwise_operands("digamma", x))


# ----------------------------------------------------------------------------- nextafter

def _nextafter_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Stepping the bit pattern works for every binary float format, bfloat16 included,
    # which numpy's nextafter does not handle. Subnormal results are kept, as XLA does.
    bits_dtype = np.dtype(f"uint{8 * x.dtype.itemsize}")
    bits = x.view(bits_dtype)
    one = np.ones((), bits_dtype)
    toward_zero = (x > y) == (x > 0)
    stepped = np.where(toward_zero, bits - one, bits + one).view(x.dtype)
    sign_bit = np.array(1 << (8 * x.dtype.itemsize - 1), bits_dtype)
    smallest = np.where(np.signbit(y), sign_bit | one, one).view(x.dtype)
    out = np.where(x == 0, smallest, stepped)
    out = np.where(x == y, y, out)
    return np.where(np.isnan(x) | np.isnan(y), np.array(np.nan, x.dtype), out)


def _nextafter_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    raise NotImplementedError("Differentiation rule for 'nextafter' not implemented: the "
                              "result is a step of one unit in the last place, which has no "
                              "useful derivative (JAX does not define one either).")


nextafter_p = elementwise("nextafter", _nextafter_reference, kinds=(FLOATING,), num_args=2,
                          hlo_opcode=Opcode.NEXT_AFTER)
nextafter_p.reference = _nextafter_reference  # exact in every format: no float32 detour
nextafter_p.jvp = _nextafter_jvp


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable value after `x1` in the direction of `x2`.

    Mirrors `jax.lax.nextafter`; `x1 == x2` gives `x2`, nan in either gives nan.
    """
    return nextafter_p.bind(*elementwise_operands("nextafter", x1, x2))
