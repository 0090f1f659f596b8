"""Throughput of jaxlite's vector math library: tanh-GELU over 4M float32, and single functions.

Run: `python benchmarks/vecmath.py [--n N] [--repeat R] [--functions exp,log,...]`.
GB/s counts bytes read plus bytes written (4M float32: 16 MiB in, 16 MiB out). The GELU
kernel x * 0.5 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) is a loop over vectors of the
host's width calling jaxlite's own `tanh` (jaxlite.backends.cpu.vecmath); numpy computes the
same expression with its temporaries. A numpy copy of the array gives the memory bound of any
one-input one-output elementwise kernel on this machine.
"""
from __future__ import annotations

import argparse
import ctypes
import math
import struct
import time
from collections.abc import Callable

import numpy as np

from jaxlite.backends.cpu import llvm_target, vecmath

_ALIVE: list = []  # compiled modules must outlive every later compilation (see llvm_target)


def vector_width(dtype) -> int:
    lanes = 512 if llvm_target.has_avx512() else 256
    return lanes // (8 * np.dtype(dtype).itemsize)


def splat(value: float, elem: str = "float") -> str:
    if elem == "float":
        value = float(np.float32(value))
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    return f"splat ({elem} 0x{bits:016X})"


def loop_ir(name: str, elem: str, width: int, body: list[str]) -> str:
    """`void @<name>(ptr in, ptr out, i64 n)` over whole vectors; `body` maps %x to %y."""
    vt = f"<{width} x {elem}>"
    size = 4 if elem == "float" else 8
    lines = [f"define void @{name}(ptr %in, ptr %out, i64 %n) {{", "entry:",
             f"  %nv = and i64 %n, {-width}", "  %has = icmp ugt i64 %nv, 0",
             "  br i1 %has, label %loop, label %exit", "loop:",
             "  %i = phi i64 [ 0, %entry ], [ %inext, %loop ]",
             f"  %p = getelementptr {elem}, ptr %in, i64 %i",
             f"  %x = load {vt}, ptr %p, align {size}", *body,
             f"  %q = getelementptr {elem}, ptr %out, i64 %i",
             f"  store {vt} %y, ptr %q, align {size}", f"  %inext = add i64 %i, {width}",
             "  %more = icmp ult i64 %inext, %nv", "  br i1 %more, label %loop, label %exit",
             "exit:", "  ret void", "}"]
    return "\n".join(lines) + "\n"


def gelu_ir(width: int) -> str:
    vt = f"<{width} x float>"
    c = math.sqrt(2 / math.pi)
    tanh = vecmath.function_name("tanh", np.float32, width)
    body = [f"  %x2 = fmul {vt} %x, %x",
            (f"  %t = call {vt} @llvm.fma.v{width}f32({vt} %x2, {vt} {splat(0.044715 * c)}, "
             f"{vt} {splat(c)})"),
            f"  %u = fmul {vt} %t, %x",
            f"  %th = call {vt} @{tanh}({vt} %u)",
            f"  %hx = fmul {vt} %x, {splat(0.5)}",
            f"  %y = call {vt} @llvm.fma.v{width}f32({vt} %hx, {vt} %th, {vt} %hx)"]
    return vecmath.definitions([("tanh", np.float32, width)]) + loop_ir("gelu", "float", width,
                                                                        body)


def unary_ir(name: str, dtype, width: int) -> str:
    elem = "float" if dtype == np.float32 else "double"
    vt = f"<{width} x {elem}>"
    fn = vecmath.function_name(name, dtype, width)
    body = [f"  %y = call {vt} @{fn}({vt} %x)"]
    return vecmath.definitions([(name, dtype, width)]) + loop_ir("run", elem, width, body)


def compiled(text: str, name: str) -> Callable:
    module = llvm_target.compile_ir(text)
    _ALIVE.append(module)
    return module.function(name, None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


def best_time(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def gelu_numpy(x: np.ndarray) -> np.ndarray:
    c = x.dtype.type(math.sqrt(2 / math.pi))
    return x * x.dtype.type(0.5) * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x * x * x)))


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


NUMPY = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "logistic": _logistic,
         "exp2": np.exp2, "expm1": np.expm1, "log1p": np.log1p, "cos": np.cos,
         "atan": np.arctan, "sinh": np.sinh, "cbrt": np.cbrt}


def time_function(name: str, dtype, x: np.ndarray, repeat: int) -> tuple[float, float]:
    """(jaxlite GB/s, numpy GB/s) for one function over x."""
    xs = (np.abs(x) + 0.5 if name in ("log", "lgamma", "digamma") else x).astype(dtype)
    out = np.empty_like(xs)
    fn = compiled(unary_ir(name, dtype, vector_width(dtype)), "run")
    t = best_time(lambda: fn(xs.ctypes.data, out.ctypes.data, xs.size), repeat)
    ref = NUMPY.get(name)
    t_np = best_time(lambda: ref(xs), 3) if ref else float("nan")
    return 2 * xs.nbytes / t / 1e9, 2 * xs.nbytes / t_np / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4 << 20)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--functions", default="exp,log,tanh,logistic,erf,sin",
                        help="single functions to time too (comma separated; '' for none)")
    args = parser.parse_args()
    n, width = args.n, vector_width(np.float32)
    x = (np.random.default_rng(0).standard_normal(n) * 3).astype(np.float32)
    out = np.empty_like(x)
    gelu = compiled(gelu_ir(width), "gelu")
    nbytes = 2 * x.nbytes
    t_jl = best_time(lambda: gelu(x.ctypes.data, out.ctypes.data, n), args.repeat)
    t_np = best_time(lambda: gelu_numpy(x), max(3, args.repeat // 4))
    copy = np.empty_like(x)
    t_cp = best_time(lambda: np.copyto(copy, x), args.repeat)
    diff = np.max(np.abs(out - gelu_numpy(x.astype(np.float64))))
    print(f"tanh-GELU over {n} float32, vector width {width} "
          f"(max |diff| to float64 numpy: {diff:.1e})")
    for label, t in (("jaxlite (vecmath tanh)", t_jl), ("numpy", t_np),
                     ("memory copy (numpy)", t_cp)):
        print(f"  {label:24s} {t * 1e3:8.3f} ms {nbytes / t / 1e9:7.1f} GB/s")
    names = [s for s in args.functions.split(",") if s]
    if names:
        print("single functions, GB/s (jaxlite / numpy):")
    for name in names:
        cells = []
        for dtype in (np.float32, np.float64):
            ours, theirs = time_function(name, dtype, x, args.repeat)
            cells.append(f"{np.dtype(dtype).name} {ours:6.1f} / {theirs:6.1f}")
        print(f"  {name:9s} " + "   ".join(cells))


if __name__ == "__main__":
    main()
