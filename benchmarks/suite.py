"""The project's benchmark: jaxlite beside numpy and, where installed, JAX.

    taskset -c 0 python benchmarks/suite.py                       # every workload, every impl
    taskset -c 0 python benchmarks/suite.py --only gelu,matmul    # names containing these
    taskset -c 0 python benchmarks/suite.py --jax-python /tmp/jaxvenv/bin/python

Each implementation runs in its own interpreter (`--impl jaxlite|numpy|jax` runs one and
prints JSON), so that imports and caches do not mix. jaxlite runs on the CPU backend unless
`JAXLITE_PLATFORMS` says otherwise. Per workload: the first call (trace, compile and run) is
timed alone, then calls repeat for `--seconds` after a warm-up; the table shows medians and
the ratio jaxlite / JAX (below 1 means jaxlite is faster). Pin to one core: the numbers are
for comparing implementations in one session, not across machines.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from workloads import WORKLOADS  # noqa: E402


def _tree_map(fn, tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(fn, t) for t in tree)
    if isinstance(tree, dict):
        return {key: _tree_map(fn, value) for key, value in tree.items()}
    return fn(tree)


def _block(value):
    if isinstance(value, (tuple, list, dict)):
        for item in (value.values() if isinstance(value, dict) else value):
            _block(item)
    elif hasattr(value, "block_until_ready"):
        value.block_until_ready()


def _time_calls(fn, args, seconds: float) -> tuple[float, float]:
    """(first-call seconds, median seconds of later calls)."""
    start = time.perf_counter()
    _block(fn(*args))
    first = time.perf_counter() - start
    for _ in range(3):
        _block(fn(*args))
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(samples) < 5 or (time.perf_counter() < deadline and len(samples) < 2000):
        t0 = time.perf_counter()
        _block(fn(*args))
        samples.append(time.perf_counter() - t0)
    return first, statistics.median(samples)


def run_one_impl(impl: str, names: list[str], seconds: float) -> dict:
    """Time the chosen workloads in this interpreter; {name: {"first": s, "median": s}}."""
    results = {}
    if impl == "numpy":
        jx = None
    else:
        os.environ.setdefault("JAXLITE_PLATFORMS", "cpu")
        jx = __import__(impl)
        __import__(f"{impl}.numpy")
    for workload in WORKLOADS:
        if workload.name not in names:
            continue
        inputs = workload.inputs(np.random.default_rng(0))
        if jx is None:
            if workload.build_np is None:
                continue
            fn, args = workload.build_np(), inputs
        else:
            fn = workload.build_jx(jx)
            args = _tree_map(jx.numpy.asarray, inputs)
        first, median = _time_calls(fn, args, seconds)
        results[workload.name] = {"first": first, "median": median}
    return results


def _impl_in_subprocess(python: str, impl: str, names: list[str], seconds: float) -> dict:
    command = [python, os.path.abspath(__file__), "--impl", impl, "--seconds", str(seconds),
               "--only", ",".join(names), "--exact"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"# {impl} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return {}
    return json.loads(done.stdout.splitlines()[-1])


def _jax_python(explicit: str | None) -> str | None:
    candidates = [explicit] if explicit else [sys.executable, "/tmp/jaxvenv/bin/python"]
    for python in candidates:
        if python and os.path.exists(python) and subprocess.run(
                [python, "-c", "import jax"], capture_output=True).returncode == 0:
            return python
    return None


def _cell(result: dict | None, workload) -> str:
    if not result:
        return "-"
    figure, unit = workload.figure(result["median"])
    return f"{figure:.4g} {unit}" if unit != "ms" else f"{figure:.4g} ms"


def print_table(names: list[str], by_impl: dict[str, dict]) -> None:
    header = (f"{'workload':38} {'jaxlite':>16} {'numpy':>16} {'jax':>16} "
              f"{'lite/jax time':>13} {'1st call lite/jax ms':>21}")
    print(header)
    print("-" * len(header))
    for workload in WORKLOADS:
        if workload.name not in names:
            continue
        row = {impl: by_impl.get(impl, {}).get(workload.name) for impl in ("jaxlite", "numpy", "jax")}
        ratio = (f"{row['jaxlite']['median'] / row['jax']['median']:.2f}x"
                 if row["jaxlite"] and row["jax"] else "-")
        first = (f"{row['jaxlite']['first'] * 1e3:.0f} / "
                 f"{row['jax']['first'] * 1e3:.0f}" if row["jaxlite"] and row["jax"] else "-")
        print(f"{workload.name:38} {_cell(row['jaxlite'], workload):>16} "
              f"{_cell(row['numpy'], workload):>16} {_cell(row['jax'], workload):>16} "
              f"{ratio:>13} {first:>21}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["jaxlite", "numpy", "jax"])
    parser.add_argument("--only", default="", help="comma-separated parts of workload names")
    parser.add_argument("--exact", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=1.0, help="timing per workload")
    parser.add_argument("--jax-python", help="a Python with jax installed")
    options = parser.parse_args()
    wanted = [part for part in options.only.split(",") if part]
    names = [w.name for w in WORKLOADS
             if not wanted or (w.name in wanted if options.exact else
                               any(part in w.name for part in wanted))]
    if options.impl:
        print(json.dumps(run_one_impl(options.impl, names, options.seconds)))
        return
    by_impl = {impl: _impl_in_subprocess(sys.executable, impl, names, options.seconds)
               for impl in ("jaxlite", "numpy")}
    jax_python = _jax_python(options.jax_python)
    if jax_python:
        by_impl["jax"] = _impl_in_subprocess(jax_python, "jax", names, options.seconds)
    print_table(names, by_impl)


if __name__ == "__main__":
    main()
