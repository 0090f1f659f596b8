"""Compile latency: the first call of a jitted program in a fresh interpreter, jaxlite beside
JAX 0.10.2 (issue 12, section 1).

Every sample runs in a new process (jaxlite with this interpreter and the repository on
PYTHONPATH, JAX with --jax-python), imports the framework and makes the inputs untimed, then
times the first call (trace + compile + run, until the result is ready). With --split (the
default) further processes time `jit(f).lower(...)`, `.compile()` and the first run of the
compiled program separately. jaxlite and JAX samples alternate; the table shows medians.

    taskset -c 0 python benchmarks/compile_latency.py                 # cold starts
    taskset -c 0 python benchmarks/compile_latency.py --warm          # persistent cache filled
    taskset -c 0 python benchmarks/compile_latency.py --only mlp --chain-ops 2000

Cold samples give jaxlite a fresh, empty persistent-cache folder (so the cost of writing the
entry is counted, as a user with the default cache pays it) and JAX its default (no
persistent cache). --warm fills a cache folder per program and framework with one untimed
run, then times fresh processes reading it (JAX with `jax_compilation_cache_dir`, minimum
compile time 0 and minimum entry size -1, so that it caches everything).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The program run in each fresh process: argv = impl, program, size, mode, cache folder.
# It prints one JSON line with its timings in seconds.
_CHILD = r'''
import json, sys, time
import numpy as np
impl, program, size, mode, cache = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
if impl == "jax":
    import jax as jx
    import jax.numpy as jnp
    if cache:
        jx.config.update("jax_compilation_cache_dir", cache)
        jx.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jx.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
else:
    import jaxlite as jx
    import jaxlite.numpy as jnp
    jx.config.update("jax_compilation_cache_dir", cache or None)
rng = np.random.default_rng(0)

def normal(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)

def sgd(loss):
    def step(params, *data):
        grads = jx.grad(loss)(params, *data)
        return jx.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return step

def cross_entropy(logits, onehot):
    top = jx.lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    lse = jnp.log(jnp.sum(jnp.exp(logits - top), axis=-1, keepdims=True)) + top
    return -jnp.mean(jnp.sum(onehot * (logits - lse), axis=-1))

def mlp(layers, width=256, batch=128, classes=10):
    dims = [width] * (layers + 1) + [classes]
    params = [(normal(a, b, scale=a ** -0.5), np.zeros(b, np.float32))
              for a, b in zip(dims[:-1], dims[1:])]
    x = normal(batch, width)
    onehot = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, batch)]
    def loss(params, x, onehot):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return cross_entropy(x @ w + b, onehot)
    return sgd(loss), (params, x, onehot)

def layer_norm(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jx.lax.rsqrt(var + 1e-5) * g + b

def transformer(_, batch=8, seq=128, d=256, heads=4, hidden=1024):
    p = dict(g1=np.ones(d, np.float32), b1=np.zeros(d, np.float32),
             wq=normal(d, d, scale=d ** -0.5), wk=normal(d, d, scale=d ** -0.5),
             wv=normal(d, d, scale=d ** -0.5), wo=normal(d, d, scale=d ** -0.5),
             g2=np.ones(d, np.float32), b2=np.zeros(d, np.float32),
             w1=normal(d, hidden, scale=d ** -0.5), c1=np.zeros(hidden, np.float32),
             w2=normal(hidden, d, scale=hidden ** -0.5), c2=np.zeros(d, np.float32))
    x = normal(batch, seq, d)
    def block(p, x):
        h = layer_norm(x, p["g1"], p["b1"])
        split = lambda t: t.reshape(batch, seq, heads, d // heads).transpose(0, 2, 1, 3)
        q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
        s = q @ k.transpose(0, 1, 3, 2) / np.float32((d // heads) ** 0.5)
        s = jnp.exp(s - jx.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True)))
        a = (s / jnp.sum(s, axis=-1, keepdims=True)) @ v
        x = x + a.transpose(0, 2, 1, 3).reshape(batch, seq, d) @ p["wo"]
        h = layer_norm(x, p["g2"], p["b2"]) @ p["w1"] + p["c1"]
        h = 0.5 * h * (1 + jnp.tanh(0.7978846 * (h + 0.044715 * h ** 3)))
        return x + h @ p["w2"] + p["c2"]
    def loss(p, x):
        return jnp.mean(block(p, x) ** 2)
    return sgd(loss), (p, x)

def einsum_net(_, n=24):
    ts = [normal(n, n, n, scale=n ** -1) for _ in range(4)] + [normal(n, n)]
    def value(ts):
        a, b, c, d, e = ts
        t = jnp.einsum("abc,cde->abde", a, b)
        t = jnp.einsum("abde,efb->adf", t, c)
        t = jnp.einsum("adf,fga->dg", t, d)
        return jnp.tanh(jnp.einsum("dg,gd->", t, e))
    return (lambda ts: jx.value_and_grad(value)(ts)), (ts,)

def chain(ops):
    cycle = [jnp.sin, lambda x: x * 0.999, lambda x: x + 0.001, jnp.cos, jnp.tanh,
             lambda x: x - 0.3]
    def f(x):
        for i in range(ops):
            x = cycle[i % len(cycle)](x)
        return x
    return f, (normal(1024),)

fn, args = {"mlp": mlp, "transformer": transformer, "einsum": einsum_net,
            "chain": chain}[program](size)
args = jx.device_put(args)
jx.block_until_ready(args)
out = {}
if mode == "call":
    start, cpu = time.perf_counter(), time.process_time()
    jx.block_until_ready(jx.jit(fn)(*args))
    out["first_call"] = time.perf_counter() - start
    out["first_call_cpu"] = time.process_time() - cpu
else:
    start = time.perf_counter()
    lowered = jx.jit(fn).lower(*args)
    middle = time.perf_counter()
    compiled = lowered.compile()
    end = time.perf_counter()
    jx.block_until_ready(compiled(*args))
    out.update(lower=middle - start, compile=end - middle,
               run=time.perf_counter() - end, split_total=time.perf_counter() - start)
print("RESULT " + json.dumps(out))
'''


def programs(chain_ops: int) -> list[tuple[str, str, int]]:
    """(label, program, size) of every program measured."""
    return [("mlp2", "mlp", 2), ("mlp8", "mlp", 8), ("mlp32", "mlp", 32),
            ("transformer", "transformer", 0), ("einsum_grad", "einsum", 0),
            (f"chain{chain_ops}", "chain", chain_ops)]


def run_child(python: str, impl: str, program: str, size: int, mode: str, cache: str,
              timeout: float) -> dict[str, float]:
    env = dict(os.environ)
    if impl == "jaxlite":
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("JAXLITE_COMPILATION_CACHE_DIR", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run([python, "-c", _CHILD, impl, program, str(size), mode, cache],
                          env=env, capture_output=True, text=True, timeout=timeout)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    raise RuntimeError(f"{impl} {program}({size}) {mode} failed: " + " | ".join(tail))


def measure(args: argparse.Namespace, python: dict[str, str], program: str, size: int,
            workdir: Path) -> dict[str, dict[str, list[float]]]:
    """Timings by framework and figure, samples alternating between the frameworks."""
    modes = ["call", "split"] if args.split else ["call"]
    result: dict[str, dict[str, list[float]]] = {impl: {} for impl in python}
    warm_dirs = {}
    if args.warm:
        for impl in python:
            folder = Path(tempfile.mkdtemp(prefix=f"warm-{impl}-", dir=workdir))
            run_child(python[impl], impl, program, size, "call", str(folder), args.timeout)
            warm_dirs[impl] = str(folder)
    for _ in range(args.samples):
        for mode in modes:
            for impl in python:
                if args.warm:
                    cache = warm_dirs[impl]
                elif impl == "jaxlite":
                    cache = tempfile.mkdtemp(prefix="cold-", dir=workdir)
                else:
                    cache = ""
                try:
                    times = run_child(python[impl], impl, program, size, mode, cache,
                                      args.timeout)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    print(f"  ! {error}", file=sys.stderr)
                    continue
                for figure, seconds in times.items():
                    result[impl].setdefault(figure, []).append(seconds)
    return result


def median_ms(samples: dict[str, list[float]], figure: str) -> float | None:
    values = samples.get(figure)
    return statistics.median(values) * 1e3 if values else None


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:9.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:5.2f}x"


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares ms per layer through (layers, ms)."""
    if len(points) < 2:
        return None
    mx = statistics.mean(x for x, _ in points)
    my = statistics.mean(y for _, y in points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax-python", default="/tmp/jaxvenv/bin/python")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated labels or prefixes")
    parser.add_argument("--chain-ops", type=int, default=2000)
    parser.add_argument("--no-split", dest="split", action="store_false",
                        help="time only the first call, not lower/compile separately")
    parser.add_argument("--warm", action="store_true",
                        help="time warm starts (persistent cache filled)")
    parser.add_argument("--no-jax", action="store_true", help="jaxlite alone")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--json", help="write the medians here")
    parser.add_argument("--cpu-time", action="store_true",
                        help="report the first call's CPU time (all threads of the process) "
                             "instead of its wall time: steadier on a shared machine; on one "
                             "pinned core the two agree when nothing else runs there")
    args = parser.parse_args()
    python = {"jaxlite": sys.executable}
    if not args.no_jax:
        python["jax"] = args.jax_python
    wanted = [w for w in args.only.split(",") if w]
    selected = [p for p in programs(args.chain_ops)
                if not wanted or any(p[0].startswith(w) for w in wanted)]
    first = "first_call_cpu" if args.cpu_time else "first_call"
    figures = [first, "lower", "compile"]
    header = (f"{'program':14s} | {'jaxlite ms':>9s} | {'JAX ms':>9s} | {'ratio':>6s} | "
              f"{'lower jl':>9s} | {'lower JAX':>9s} | {'comp jl':>9s} | {'comp JAX':>9s}")
    print(("warm start" if args.warm else "cold start") + f", medians of {args.samples}"
          + (", first call as CPU time" if args.cpu_time else ""))
    print(header)
    print("-" * len(header))
    table = {}
    with tempfile.TemporaryDirectory(prefix="jaxlite-compile-latency-") as tmp:
        for label, program, size in selected:
            samples = measure(args, python, program, size, Path(tmp))
            row = {impl: {f: median_ms(samples[impl], f) for f in figures}
                   for impl in python}
            table[label] = row
            jl, jx = row["jaxlite"], row.get("jax", {})
            print(f"{label:14s} | {_cell(jl[first])} | {_cell(jx.get(first))} | "
                  f"{_ratio(jl[first], jx.get(first)):>6s} | "
                  f"{_cell(jl['lower'])} | {_cell(jx.get('lower'))} | "
                  f"{_cell(jl['compile'])} | {_cell(jx.get('compile'))}", flush=True)
    for impl in python:
        points = [(size, table[label][impl][first])
                  for label, program, size in selected
                  if program == "mlp" and table[label][impl][first] is not None]
        per_layer = slope(points)
        if per_layer is not None:
            print(f"MLP per-layer slope, {impl}: {per_layer:.1f} ms/layer")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
