"""Step time of the data-parallel MLP train step over in-process devices (issue 14), jaxlite
beside JAX, written the two ways JAX users write it:

- `jit`: the batch placed with `device_put(x, NamedSharding(mesh, P("d")))`, parameters
  replicated, a plain jitted step; the partitioner splits it (gradients all-reduced).
- `shard_map`: jit of shard_map over the batch with `pmean` of the gradients.

    python benchmarks/spmd_data_parallel.py [--devices 1,2] [--jax /tmp/jaxvenv/bin/python]

Each (implementation, devices, style) runs in a fresh process (the device count is fixed at
start: JAXLITE_NUM_CPU_DEVICES for jaxlite, XLA_FLAGS' forced host device count for JAX) and
prints the median of 30 steps after 3 warm-up steps. The MLP is ../shared/bench's
mlp_train_step: 784-1024-1024-10, batch 256, cross-entropy, SGD.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def _run(impl: str, style: str) -> float:
    if impl == "jax":
        import jax  # noqa: PLC0415  (the oracle, in its own process)
        import jax.numpy as jnp  # noqa: PLC0415
    else:
        import jaxlite as jax  # noqa: PLC0415
        import jaxlite.numpy as jnp  # noqa: PLC0415
    P = jax.sharding.PartitionSpec
    count = jax.device_count()
    rng = np.random.default_rng(0)
    sizes = [784, 1024, 1024, 10]
    params = [(rng.standard_normal((a, b)).astype(np.float32) * a ** -0.5,
               np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((256, 784)).astype(np.float32)
    onehot = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]

    def loss(p, x, t):
        h = x
        for w, b in p[:-1]:
            h = jnp.maximum(h @ w + b, 0)
        w, b = p[-1]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w + b) * t, -1))

    mesh = jax.make_mesh((count,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    if style == "shard_map":
        def local_step(p, x, t):
            g = jax.lax.pmean(jax.grad(loss)(p, x, t), "d")
            return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
        step = jax.jit(jax.shard_map(local_step, mesh=mesh, in_specs=(P(), P("d"), P("d")),
                                     out_specs=P()))
    else:
        @jax.jit
        def step(p, x, t):
            g = jax.grad(loss)(p, x, t)
            return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
        batch = jax.sharding.NamedSharding(mesh, P("d"))
        replicated = jax.sharding.NamedSharding(mesh, P())
        x, onehot = jax.device_put(x, batch), jax.device_put(onehot, batch)
        params = jax.device_put(params, replicated)
    p = params
    for _ in range(3):
        p = step(p, x, onehot)
    jax.block_until_ready(p)
    times = []
    for _ in range(30):
        start = time.perf_counter()
        p = step(p, x, onehot)
        jax.block_until_ready(p)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", default="1,2")
    parser.add_argument("--jax", default="/tmp/jaxvenv/bin/python",
                        help="a Python with jax 0.10.2 (skipped when missing)")
    parser.add_argument("--child", nargs=2, metavar=("IMPL", "STYLE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(f"{_run(*args.child):.2f}")
        return
    print("| devices | style | JAX 0.10.2 ms | jaxlite ms | jaxlite / JAX |")
    print("|---|---|---|---|---|")
    for count in [int(c) for c in args.devices.split(",")]:
        for style in ("jit", "shard_map"):
            ms = {}
            for impl, python in (("jax", args.jax), ("jaxlite", sys.executable)):
                if not os.path.exists(python):
                    ms[impl] = float("nan")
                    continue
                env = dict(os.environ, JAXLITE_NUM_CPU_DEVICES=str(count),
                           XLA_FLAGS=f"--xla_force_host_platform_device_count={count}")
                out = subprocess.run([python, __file__, "--child", impl, style], env=env,
                                     capture_output=True, text=True, check=True)
                ms[impl] = float(out.stdout.strip().splitlines()[-1])
            print(f"| {count} | {style} | {ms['jax']:.2f} | {ms['jaxlite']:.2f} | "
                  f"{ms['jaxlite'] / ms['jax']:.2f} |")


if __name__ == "__main__":
    main()
