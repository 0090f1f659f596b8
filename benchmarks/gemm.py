"""GFLOP/s of the generated GEMM (jaxlite/backends/cpu/gemm.py) next to numpy and JAX.

Run pinned to one core, e.g.

    taskset -c 0 python benchmarks/gemm.py
    taskset -c 0 python benchmarks/gemm.py --sizes 1024 --dtypes float32 --transpose TN \
        --blocking mr=8,nv=3,kc=512,mc=128

Prints one row per (dtype, layout, size): the best and median GFLOP/s of jaxlite, numpy's
matmul (its BLAS, limited to one thread here) and `jax.jit(jnp.matmul)` when jax is
installed. Times are wall-clock per call after a warm-up; the implementations are timed in
turns, one call each per round, so that load from other processes hits them alike.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import shlex
import sys
import time

# One BLAS thread: compare one core with one core (before numpy loads its BLAS).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from jaxlite.backends.cpu import llvm_target
from jaxlite.backends.cpu.gemm import GemmBlocking, GemmSpec, emit_gemm, plan_gemm

_KEEP: list[llvm_target.CompiledModule] = []   # engines must outlive each other (see tests)


def _interleaved(calls: list, min_seconds: float, max_rounds: int) -> list[list[float]]:
    """Seconds per call of each of `calls`, timed in turns (one call of each per round) so
    that a noisy neighbour slows them all alike; each is warmed up first."""
    for fn in calls:
        fn()
    times: list[list[float]] = [[] for _ in calls]
    start = time.perf_counter()
    rounds = 0
    while rounds < 3 or (time.perf_counter() - start < min_seconds and rounds < max_rounds):
        for fn, record in zip(calls, times):
            t0 = time.perf_counter()
            fn()
            record.append(time.perf_counter() - t0)
        rounds += 1
    return times


def _operands(shape: tuple[int, int, int], dtype: str, layout: str, batch: int):
    m, n, k = shape
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (batch, k, m) if layout[0] == "T" else (batch, m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (batch, n, k) if layout[1] == "T" else (batch, k, n)).astype(dtype)
    op_a = np.swapaxes(a, 1, 2) if layout[0] == "T" else a
    op_b = np.swapaxes(b, 1, 2) if layout[1] == "T" else b
    return a, b, op_a, op_b


def jaxlite_call(shape, dtype, layout, batch, blocking):
    """A call of the generated GEMM on fresh operands, checked once against numpy."""
    spec = GemmSpec("bench", *shape, dtype=dtype, batch=batch, transpose_a=layout[0] == "T",
                    transpose_b=layout[1] == "T", blocking=blocking)
    plan = plan_gemm(spec)
    module = llvm_target.compile_ir(emit_gemm(spec))
    _KEEP.append(module)
    fn = module.function(plan.full_name, None, *[ctypes.c_void_p] * 4)
    a, b, op_a, op_b = _operands(shape, dtype, layout, batch)
    c = np.zeros((batch, shape[0], shape[1]), dtype)
    scratch = np.zeros(plan.scratch_bytes + 64, np.uint8)
    pointers = [x.ctypes.data for x in (a, b, c)]
    pointers.append(scratch.ctypes.data + (-scratch.ctypes.data % 64))
    fn(*pointers)
    expected = np.matmul(op_a.astype(np.float64), op_b.astype(np.float64))
    error = np.max(np.abs(c - expected)) / max(1.0, np.max(np.abs(expected)))
    if error > (1e-3 if dtype == "float32" else 1e-10):
        raise AssertionError(f"jaxlite GEMM {shape} {dtype} {layout}: relative error {error}")
    def call(buffers: tuple = (a, b, c, scratch)) -> None:   # holds the buffers alive
        fn(*pointers)

    return call


def numpy_call(shape, dtype, layout, batch):
    _, _, op_a, op_b = _operands(shape, dtype, layout, batch)
    out = np.empty((batch, shape[0], shape[1]), dtype)
    return lambda: np.matmul(op_a, op_b, out=out)


def jax_call(shape, dtype, layout, batch):
    """`jax.jit` of the same product, or None without jax."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    a, b, _, _ = _operands(shape, dtype, layout, batch)
    ta, tb = layout[0] == "T", layout[1] == "T"

    def product(x, y):
        x = jnp.swapaxes(x, 1, 2) if ta else x
        y = jnp.swapaxes(y, 1, 2) if tb else y
        return jnp.matmul(x, y)

    fn = jax.jit(product)
    xa, xb = jnp.asarray(a), jnp.asarray(b)
    return lambda: fn(xa, xb).block_until_ready()


def _parse_blocking(text: str | None) -> GemmBlocking | None:
    if not text:
        return None
    fields = {}
    for item in text.split(","):
        key, value = item.split("=")
        fields[key] = value.lower() in ("1", "true") if key == "prefetch_c" else int(value)
    return GemmBlocking(**fields)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[256, 512, 1024, 2048],
                        help="square problems n x n x n")
    parser.add_argument("--shapes", nargs="+", default=[],
                        help="other problems as MxNxK, e.g. 1x1024x1024 (after the sizes)")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--transpose", nargs="+", default=["NN"],
                        help="layouts of (A, B): NN, NT, TN, TT (T: the buffer holds the "
                             "transpose)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--blocking", help="e.g. mr=8,nv=3,kc=512,mc=128,nc=4096")
    parser.add_argument("--seconds", type=float, default=2.0, help="time budget per case")
    parser.add_argument("--calls", type=int, default=50, help="most rounds per case")
    parser.add_argument("--no-jax", action="store_true")
    args = parser.parse_args(argv)
    blocking = _parse_blocking(args.blocking)
    shapes = [(n, n, n) for n in args.sizes]
    shapes += [tuple(int(x) for x in text.lower().split("x")) for text in args.shapes]

    cpus = sorted(os.sched_getaffinity(0))
    pinned = ["taskset", "-c", str(cpus[0])] if len(cpus) == 1 else []
    print("command:", shlex.join([*pinned, sys.executable, *sys.argv]))
    print(f"cpu affinity: {cpus}; host: {llvm_target.host_cpu()[0]};"
          f" OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
          f" OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}")
    for dtype in args.dtypes:
        spec = GemmSpec("probe", 2048, 2048, 2048, dtype=dtype, blocking=blocking)
        print(f"{dtype} blocking at 2048^3: {plan_gemm(spec).blocking}")
    print(f"{'dtype':8} {'AB':3} {'batch':>5} {'m x n x k':>16}  {'jaxlite best/median':>20}  "
          f"{'numpy best/median':>18}  {'jax best/median':>16}  GFLOP/s")
    for dtype in args.dtypes:
        for layout in args.transpose:
            for shape in shapes:
                calls = [jaxlite_call(shape, dtype, layout, args.batch, blocking),
                         numpy_call(shape, dtype, layout, args.batch),
                         None if args.no_jax else jax_call(shape, dtype, layout, args.batch)]
                present = [call for call in calls if call is not None]
                times = iter(_interleaved(present, args.seconds, args.calls))
                flops = 2.0 * args.batch * shape[0] * shape[1] * shape[2]
                cells = []
                for call in calls:
                    if call is None:
                        cells.append("-")
                        continue
                    record = next(times)
                    cells.append(f"{flops / min(record) / 1e9:7.1f} / "
                                 f"{flops / float(np.median(record)) / 1e9:5.1f}")
                label = "x".join(map(str, shape))
                print(f"{dtype:8} {layout:3} {args.batch:5} {label:>16}  {cells[0]:>20}  "
                      f"{cells[1]:>18}  {cells[2]:>16}", flush=True)


if __name__ == "__main__":
    main()
