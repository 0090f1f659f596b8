"""Accuracy and special values of the vector math library (jaxlite/backends/cpu/vecmath).

Each function is compiled into a kernel `void @run(ptr in0, [ptr in1,] ptr out, i64 n)` that
applies the vector function to chunks of the host's vector width and to the tail through
masked loads and stores, and runs through ctypes over a sweep: random bit patterns over the
whole float range (subnormals and extremes included), dense points over each function's
interesting interval, and a list of special values (+-0, +-inf, NaN, limits, thresholds).
The reference is float64 numpy for float32 results, long-double numpy for float64 results of
elementary functions, and mpmath (40 digits) for float64 special functions. The measured
maximum ulp error must stay within the bound in each function's docstring
("Accuracy: f32 <= B ulp ...; f64 <= B ulp ..."). The `slow` test repeats the sweep 16 times
larger.
"""
from __future__ import annotations

import ctypes
import functools
import math
import re
import warnings

import numpy as np
import pytest

from jaxlite.backends.cpu import llvm_target, vecmath

scipy_special = pytest.importorskip("scipy.special")
try:  # the float64 reference of the special functions (scipy's are only good to a few ulp)
    import mpmath
except ImportError:  # pragma: no cover - mpmath comes with sympy in the dev environment
    mpmath = None

DTYPES = (np.float32, np.float64)
ELEM = {np.float32: "float", np.float64: "double"}


def host_width(dtype) -> int:
    if llvm_target.has_avx512():
        return 16 if dtype == np.float32 else 8
    return 8 if dtype == np.float32 else 4


# ------------------------------------------------------------------------------------------------
# kernels

def kernel_ir(name: str, dtype, width: int) -> str:
    elem = ELEM[dtype]
    size = np.dtype(dtype).itemsize
    fname = vecmath.function_name(name, dtype, width)
    nin = vecmath.arity(name)
    vt = elem if width == 1 else f"<{width} x {elem}>"
    ins = ", ".join(f"ptr %in{i}" for i in range(nin))
    lines = [f"define void @run({ins}, ptr %out, i64 %n) {{", "entry:"]
    lines += [f"  %nv = and i64 %n, {-width}",
              "  %has = icmp ugt i64 %nv, 0",
              "  br i1 %has, label %loop, label %tail",
              "loop:",
              "  %i = phi i64 [ 0, %entry ], [ %inext, %loop ]"]
    for k in range(nin):
        lines += [f"  %p{k} = getelementptr {elem}, ptr %in{k}, i64 %i",
                  f"  %v{k} = load {vt}, ptr %p{k}, align {size}"]
    args = ", ".join(f"{vt} %v{k}" for k in range(nin))
    lines += [f"  %r = call {vt} @{fname}({args})",
              f"  %po = getelementptr {elem}, ptr %out, i64 %i",
              f"  store {vt} %r, ptr %po, align {size}",
              f"  %inext = add i64 %i, {width}",
              "  %more = icmp ult i64 %inext, %nv",
              "  br i1 %more, label %loop, label %tail",
              "tail:",
              "  %rem = sub i64 %n, %nv",
              "  %anyrem = icmp ugt i64 %rem, 0",
              "  br i1 %anyrem, label %dotail, label %exit",
              "dotail:"]
    if width == 1:
        lines += ["  br label %exit"]
    else:
        sfx = f"v{width}{'f32' if elem == 'float' else 'f64'}"
        lanes = ", ".join(f"i64 {j}" for j in range(width))
        lines += [f"  %remv0 = insertelement <{width} x i64> poison, i64 %rem, i64 0",
                  (f"  %remv = shufflevector <{width} x i64> %remv0, <{width} x i64> poison, "
                   f"<{width} x i32> zeroinitializer"),
                  f"  %mask = icmp ult <{width} x i64> <{lanes}>, %remv"]
        for k in range(nin):
            lines += [f"  %tp{k} = getelementptr {elem}, ptr %in{k}, i64 %nv",
                      (f"  %tv{k} = call {vt} @llvm.masked.load.{sfx}.p0(ptr %tp{k}, i32 {size}, "
                       f"<{width} x i1> %mask, {vt} zeroinitializer)")]
        targs = ", ".join(f"{vt} %tv{k}" for k in range(nin))
        lines += [f"  %tr = call {vt} @{fname}({targs})",
                  f"  %to = getelementptr {elem}, ptr %out, i64 %nv",
                  (f"  call void @llvm.masked.store.{sfx}.p0({vt} %tr, ptr %to, i32 {size}, "
                   f"<{width} x i1> %mask)"),
                  "  br label %exit"]
    lines += ["exit:", "  ret void", "}"]
    return vecmath.emit(name, dtype, width) + "\n".join(lines) + "\n"


# Compiled modules stay alive for the whole session: llvm_target hands its cached target
# machine to every execution engine, and freeing an engine would free it too.
_ALIVE: list = []


def compile_ir(text: str):
    module = llvm_target.compile_ir(text)
    _ALIVE.append(module)
    return module


@functools.cache
def kernel(name: str, dtype, width: int):
    module = compile_ir(kernel_ir(name, dtype, width))
    nin = vecmath.arity(name)
    fn = module.function("run", None, *([ctypes.c_void_p] * (nin + 1)), ctypes.c_int64)

    def call(*arrays: np.ndarray) -> np.ndarray:
        ins = [np.ascontiguousarray(a, dtype=dtype) for a in arrays]
        out = np.empty(ins[0].shape, dtype=dtype)
        fn(*[a.ctypes.data for a in ins], out.ctypes.data, out.size)
        return out

    call.module = module  # keep the machine code alive with the callable
    return call


def run(name: str, dtype, *arrays: np.ndarray, width: int | None = None) -> np.ndarray:
    return kernel(name, dtype, width or host_width(dtype))(*arrays)


# ------------------------------------------------------------------------------------------------
# references

def _ld(fn):
    return lambda *a: fn(*[np.asarray(v, dtype=np.longdouble) for v in a])


def _mp(fn, fallback):
    """A reference through mpmath at 40 digits (long doubles); `fallback` (scipy, float64)
    where mpmath overflows (huge arguments, where the functions are at their limits)."""
    def ref(x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape, dtype=np.longdouble)
        with mpmath.workdps(40):
            for i, v in enumerate(x.astype(np.float64)):
                out[i] = special_point(fn, fallback, float(v))
        return out
    return ref


def special_point(fn, fallback, v: float) -> np.longdouble:
    if math.isnan(v) or math.isinf(v) or abs(v) > 1e15:
        with np.errstate(all="ignore"):
            return np.longdouble(fallback(np.float64(v)))
    try:
        r = fn(mpmath.mpf(v))
    except (ValueError, ZeroDivisionError):
        return np.longdouble("nan")
    if isinstance(r, mpmath.mpc):
        r = r.real if abs(r.imag) == 0 else mpmath.mpf("nan")
    if mpmath.isinf(r):
        return np.longdouble("inf") if r > 0 else np.longdouble("-inf")
    if r == 0:
        return np.copysign(np.longdouble(0), v)
    return np.longdouble(mpmath.nstr(r, 25))


def _logistic(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


# float64 oracle for float32 results; long double (or mpmath) oracle for float64 results
REFERENCE32 = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log1p": np.log1p, "tanh": np.tanh, "logistic": _logistic, "erf": scipy_special.erf,
    "erfc": scipy_special.erfc, "erf_inv": scipy_special.erfinv, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "atan": np.arctan, "atan2": np.arctan2, "asin": np.arcsin,
    "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh, "pow": np.power, "cbrt": np.cbrt,
    "lgamma": scipy_special.gammaln, "digamma": scipy_special.digamma,
}
REFERENCE64 = {
    name: _ld(REFERENCE32[name]) for name in
    ("exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "logistic", "sin", "cos", "tan",
     "atan", "atan2", "asin", "acos", "sinh", "cosh", "pow", "cbrt")
}
MPMATH_FUNCTIONS = {"erf", "erfc", "erf_inv", "lgamma", "digamma"}
if mpmath is not None:
    REFERENCE64.update({
        "erf": _mp(mpmath.erf, scipy_special.erf),
        "erfc": _mp(mpmath.erfc, scipy_special.erfc),
        "erf_inv": _mp(mpmath.erfinv, scipy_special.erfinv),
        "lgamma": _mp(lambda v: mpmath.loggamma(v).real, scipy_special.gammaln),
        "digamma": _mp(mpmath.digamma, scipy_special.digamma),
    })


def need_reference(name: str, dtype) -> None:
    if dtype == np.float64 and name in MPMATH_FUNCTIONS and mpmath is None:
        pytest.skip("the float64 reference of the special functions needs mpmath")

# The value at poles and other points where numpy/scipy and XLA differ: we follow XLA and C99.
ODD = {"erf", "erf_inv", "sin", "tan", "atan", "asin", "sinh", "tanh", "expm1", "log1p",
       "cbrt"}


def _fixups(name: str, x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    ref = ref.copy()
    if name in ODD:  # some references lose the sign of zero (scipy's erfinv(-0.0) = 0.0)
        ref[x == 0] = x[x == 0]
    if name == "lgamma":
        ref[np.isinf(x)] = np.inf
        ref[(x <= 0) & (x == np.floor(x))] = np.inf
    if name == "digamma":
        ref[(x <= 0) & (x == np.floor(x))] = np.nan
        ref[x == np.inf] = np.inf
    return ref


def reference(name: str, dtype, *arrays: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dtype == np.float32:
            ref = np.asarray(REFERENCE32[name](*[a.astype(np.float64) for a in arrays]),
                             dtype=np.float64)
        else:
            ref = np.asarray(REFERENCE64[name](*arrays))
    return _fixups(name, arrays[0], ref)


# ------------------------------------------------------------------------------------------------
# ulp error

def ulp_error(got: np.ndarray, ref: np.ndarray, dtype) -> np.ndarray:
    """|got - ref| in units of the last place of `dtype` at ref (inf where the kinds differ).

    Beyond the largest finite value, inf counts as the next power of two (2**maxexp), so an
    exact value that rounds to inf has error 0 against inf. NaN matches only NaN, an exact
    zero must come with its sign.
    """
    fi = np.finfo(dtype)
    digits = fi.nmant + 1
    wide = np.longdouble
    g = got.astype(wide)
    r = ref.astype(wide)
    big = wide(2.0) ** fi.maxexp
    with np.errstate(all="ignore"):
        gc = np.where(np.abs(g) > big, np.sign(g) * big, g)
        rc = np.where(np.abs(r) > big, np.sign(r) * big, r)
        _, e = np.frexp(np.abs(rc))
        ulp = np.maximum(np.ldexp(wide(1), e - digits), wide(fi.smallest_subnormal))
        ulp = np.minimum(ulp, np.ldexp(wide(1), fi.maxexp - digits))
        err = np.abs(gc - rc) / ulp
    nan_g, nan_r = np.isnan(g), np.isnan(r)
    err = np.where(g == r, 0.0, err)
    err = np.where(nan_g | nan_r, np.where(nan_g & nan_r, 0.0, np.inf), err)
    err = np.where(np.isinf(r) & (g != r), np.inf, err)
    zero_sign = (r == 0) & (g == 0) & (np.signbit(g) != np.signbit(r))
    err = np.where(zero_sign, np.inf, err)
    with np.errstate(over="ignore"):
        return err.astype(np.float64)


# ------------------------------------------------------------------------------------------------
# sweeps

DENSE = {  # (f32 intervals, f64 intervals) sampled uniformly
    "exp": ([(-104, 89), (-1, 1)], [(-746, 710), (-1, 1)]),
    "exp2": ([(-151, 129), (-1, 1)], [(-1076, 1025), (-1, 1)]),
    "expm1": ([(-20, 89), (-1, 1), (-1e-3, 1e-3)], [(-40, 710), (-1, 1), (-1e-3, 1e-3)]),
    "log": ([(0, 4), (0.5, 2)], [(0, 4), (0.5, 2)]),
    "log2": ([(0, 4), (0.5, 2)], [(0, 4), (0.5, 2)]),
    "log1p": ([(-1, 4), (-1e-3, 1e-3)], [(-1, 4), (-1e-3, 1e-3)]),
    "tanh": ([(-10, 10), (-1, 1)], [(-23, 23), (-1, 1)]),
    "logistic": ([(-110, 20), (-5, 5)], [(-750, 40), (-5, 5)]),
    "sinh": ([(-95, 95), (-2, 2)], [(-715, 715), (-2, 2)]),
    "cosh": ([(-95, 95), (-2, 2)], [(-715, 715), (-2, 2)]),
    "sin": ([(-10, 10), (-7e4, 7e4)], [(-10, 10), (-1.4e8, 1.4e8)]),
    "cos": ([(-10, 10), (-7e4, 7e4)], [(-10, 10), (-1.4e8, 1.4e8)]),
    "tan": ([(-10, 10), (-7e4, 7e4)], [(-10, 10), (-1.4e8, 1.4e8)]),
    "atan": ([(-10, 10), (-1, 1)], [(-10, 10), (-1, 1)]),
    "asin": ([(-1, 1), (0.99, 1)], [(-1, 1), (0.99, 1)]),
    "acos": ([(-1, 1), (-1, -0.99)], [(-1, 1), (-1, -0.99)]),
    "erf": ([(-5, 5), (-1, 1)], [(-7, 7), (-1, 1)]),
    "erfc": ([(-5, 11), (0, 4)], [(-7, 28), (0, 4)]),
    "erf_inv": ([(-1, 1), (0.999, 1)], [(-1, 1), (0.999999, 1)]),
    "lgamma": ([(-20, 20), (0, 4)], [(-20, 20), (0, 4)]),
    "digamma": ([(-20, 20), (0, 12)], [(-20, 20), (0, 12)]),
}

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
            1e-30, -1e-30, 1e30, -1e30]


def special_values(dtype) -> np.ndarray:
    fi = np.finfo(dtype)
    base = [fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
            fi.tiny * (1 - fi.eps), -fi.tiny * (1 - fi.eps), fi.eps, -fi.eps]
    vals = np.array(SPECIALS + [float(v) for v in base], dtype=dtype)
    with np.errstate(all="ignore"):
        near = np.concatenate([np.nextafter(vals, np.array(np.inf, dtype)),
                               np.nextafter(vals, np.array(-np.inf, dtype))])
    return np.concatenate([vals, near[np.isfinite(near)]])


def random_bits(dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    itype = np.uint32 if dtype == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(itype).max, size=n, dtype=itype, endpoint=True)
    x = bits.view(dtype)
    return x[np.isfinite(x)]


def sweep(name: str, dtype, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    parts = [special_values(dtype), random_bits(dtype, n // 2, rng)]
    intervals = DENSE.get(name, ([(-10, 10)], [(-10, 10)]))[dtype == np.float64]
    for lo, hi in intervals:
        parts.append(rng.uniform(lo, hi, size=n // (2 * len(intervals))).astype(dtype))
    return np.concatenate(parts).astype(dtype)


def sweep2(name: str, dtype, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(first, second) argument arrays for atan2(y, x) and pow(x, y)."""
    rng = np.random.default_rng(seed)
    sv = special_values(dtype)
    grid = np.meshgrid(sv, sv)
    firsts, seconds = [grid[0].ravel()], [grid[1].ravel()]

    def add(a, c):
        firsts.append(np.asarray(a).astype(dtype))
        seconds.append(np.asarray(c).astype(dtype))

    add(random_bits(dtype, n // 4, rng)[: n // 8], random_bits(dtype, n // 4, rng)[: n // 8])
    m = n // 8
    if name == "atan2":
        add(rng.uniform(-10, 10, 2 * m), rng.uniform(-10, 10, 2 * m))
        x = rng.uniform(-10, 10, m)
        add(x * rng.uniform(0.3, 3, m), x)            # ratios around the reduction points
        scale = np.exp2(rng.uniform(-140 if dtype == np.float32 else -1070, 0, m))
        add(rng.uniform(-1, 1, m) * scale, rng.uniform(-1, 1, m) * scale)
    else:
        add(rng.uniform(0, 10, 2 * m), rng.uniform(-40, 40, 2 * m))
        add(rng.uniform(0.5, 2, m), rng.uniform(-1000, 1000, m))
        add(-rng.uniform(0, 10, m), np.round(rng.uniform(-40, 40, m)))
        limit = 88 if dtype == np.float32 else 709
        y = rng.uniform(-1, 1, m) * limit * 1.3
        add(np.exp(rng.uniform(-1, 1, m) * 4 * (1 if dtype == np.float32 else 8)), y / 4)
        add(1 + rng.uniform(-1e-3, 1e-3, m), rng.uniform(-1e6, 1e6, m))
    return np.concatenate(firsts).astype(dtype), np.concatenate(seconds).astype(dtype)


def sweep_size(dtype, name: str, scale: int) -> int:
    if dtype == np.float64 and name in MPMATH_FUNCTIONS:
        return 2000 * scale
    return (1 << 16) * scale


def stated_bound(name: str, dtype) -> float:
    doc = vecmath.FUNCTIONS[name].__doc__ or ""
    tag = "f32" if dtype == np.float32 else "f64"
    found = re.search(rf"{tag} <= ([0-9.]+) ulp", doc)
    assert found, f"{name}: docstring has no 'Accuracy: {tag} <= B ulp' statement"
    return float(found.group(1))


# For x < 0, lgamma and digamma come from the reflection formula, which cancels near their
# zeros between the poles; their docstrings bound the error there in absolute terms:
# |err| <= K eps max(1, |f(1 - x)|). Such points count as within the ulp bound.
ABSOLUTE_FOR_NEGATIVE_X = {"lgamma": 2.0, "digamma": 4.0}


def effective_error(name, dtype, x, got, ref, err, bound: float) -> np.ndarray:
    if name not in ABSOLUTE_FOR_NEGATIVE_X:
        return err
    k = ABSOLUTE_FOR_NEGATIVE_X[name]
    neg = np.flatnonzero((x < 0) & np.isfinite(x) & (x != np.floor(x)))
    if not len(neg):
        return err
    xn = x[neg]
    mirror = np.abs(reference(name, dtype, (1 - xn.astype(np.float64)).astype(dtype)))
    tol = k * np.finfo(dtype).eps * np.maximum(1.0, mirror.astype(np.float64))
    abs_err = np.abs(got[neg].astype(np.longdouble) - ref[neg].astype(np.longdouble))
    err = err.copy()
    err[neg] = np.minimum(err[neg], bound * (abs_err / tol).astype(np.float64))
    return err


def measure(name: str, dtype, scale: int = 1, seed: int = 0):
    n = sweep_size(dtype, name, scale)
    args = sweep2(name, dtype, n, seed) if vecmath.arity(name) == 2 else (sweep(name, dtype, n,
                                                                                seed),)
    got = run(name, dtype, *args)
    ref = reference(name, dtype, *args)
    err = ulp_error(got, ref, dtype)
    if len(args) == 1:
        err = effective_error(name, dtype, args[0], got, ref, err, stated_bound(name, dtype))
    x = args[0] if len(args) == 1 else np.rec.fromarrays(args, names="a,b")
    return x, got, ref, err


def describe_worst(name, x, got, ref, err, k: int = 5) -> str:
    idx = np.argsort(-err)[:k]
    rows = [f"  x={x[i]!r} got={got[i]!r} ref={float(ref[i])!r} err={err[i]:.3g} ulp"
            for i in idx]
    return f"{name}: worst points\n" + "\n".join(rows)


UNARY = sorted(n for n in vecmath.FUNCTIONS if vecmath.arity(n) == 1)
ALL = sorted(vecmath.FUNCTIONS)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", ALL)
def test_accuracy(name, dtype):
    need_reference(name, dtype)
    x, got, ref, err = measure(name, dtype)
    bound = stated_bound(name, dtype)
    assert err.max() <= bound, describe_worst(name, x, got, ref, err)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", ALL)
def test_accuracy_large_sweep(name, dtype):
    need_reference(name, dtype)
    x, got, ref, err = measure(name, dtype, scale=16, seed=1)
    bound = stated_bound(name, dtype)
    assert err.max() <= bound, describe_worst(name, x, got, ref, err)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", ALL)
def test_widths_agree(name, dtype):
    """Scalar, half-width and full-width versions compute the same bits."""
    args = sweep2(name, dtype, 4096, 2) if vecmath.arity(name) == 2 else (sweep(name, dtype,
                                                                                4096, 2),)
    full = run(name, dtype, *args)
    for width in (1, host_width(dtype) // 2):
        other = run(name, dtype, *args, width=width)
        same = (other.view(f"u{np.dtype(dtype).itemsize}") ==
                full.view(f"u{np.dtype(dtype).itemsize}")) | (np.isnan(other) & np.isnan(full))
        assert same.all(), (name, width, args[0][~same][:5], other[~same][:5], full[~same][:5])


def test_no_calls_in_machine_code():
    """Every function inlines to straight-line vector code: no libm (or other) calls."""
    for dtype in DTYPES:
        text = "".join(vecmath.emit(n, dtype, host_width(dtype)) for n in vecmath.FUNCTIONS)
        asm = compile_ir(text.replace("define internal", "define")).assembly()
        calls = [line for line in asm.splitlines() if re.match(r"\s+call", line)]
        assert not calls, calls[:5]


def test_definitions_deduplicate_and_name():
    text = vecmath.definitions([("exp", np.float32, 16), ("exp", np.float32, 16),
                                ("exp", np.float64, 1)])
    assert text.count("define internal <16 x float> @jl_exp_f32x16(") == 1
    assert "define internal double @jl_exp_f64(" in text
    with pytest.raises(ValueError, match="unknown function"):
        vecmath.function_name("nope", np.float32, 16)
    with pytest.raises(TypeError, match="float32 or float64"):
        vecmath.emit("exp", np.int32, 16)
