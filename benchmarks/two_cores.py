"""One core against two (issue 12, section 4): the large workloads on one pinned core and on
both, jaxlite beside JAX 0.10.2.

    python benchmarks/two_cores.py --jax-python /tmp/jaxvenv/bin/python

Each row runs four fresh interpreters: jaxlite pinned to core 0, jaxlite on cores 0 and 1
with `JAXLITE_CPU_THREADS=2`, and JAX the same two ways (XLA sizes its own thread pool by
the cores it may use). matmul/2048, mlp_train_step, gelu_chain/16M and conv2d come from
../shared/bench/run.py, the transformer step from this folder's suite.py. Medians in ms;
"2 vs 1" below 1 means the second core helped.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED_RUN = os.path.join(REPO, "..", "shared", "bench", "run.py")
SHARED = ["matmul/2048", "mlp_train_step", "gelu_chain/16M", "conv2d"]
LOCAL = ["transformer_step/b8_s128_d256"]
CORES = {1: "0", 2: "0,1"}


def _environment(cores: int) -> dict:
    env = dict(os.environ, JAXLITE_CPU_THREADS=str(cores), JAXLITE_PLATFORMS="cpu")
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    return env


def shared_medians(python: str, impl: str, cores: int) -> dict[str, float]:
    """{workload key: median ms} of ../shared/bench's large rows (without the bench's
    machine sentinel: its probe is AVX-512 code, an illegal instruction on AVX2 hosts)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "rows.json")
        subprocess.run(["taskset", "-c", CORES[cores], python, SHARED_RUN, "--impl", impl,
                        "--quiet", "--no-sentinel", "--only", ",".join(SHARED), "--json",
                        out],
                       env=_environment(cores), check=True, capture_output=True)
        with open(out) as f:
            return {row["key"]: row["median_ms"] for row in json.load(f)["results"]}


def local_medians(python: str, impl: str, cores: int) -> dict[str, float]:
    """{workload name: median ms} of this folder's suite."""
    done = subprocess.run(["taskset", "-c", CORES[cores], python,
                           os.path.join(HERE, "suite.py"), "--impl", impl, "--exact",
                           "--only", ",".join(LOCAL)],
                          env=_environment(cores), check=True, capture_output=True, text=True)
    rows = json.loads(done.stdout.splitlines()[-1])
    return {name: row["median"] * 1e3 for name, row in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", default="/tmp/jaxvenv/bin/python")
    options = parser.parse_args()
    pythons = {"jaxlite": sys.executable, "jax": options.jax_python}
    table = {}
    for impl, python in pythons.items():
        for cores in (1, 2):
            table[impl, cores] = {**shared_medians(python, impl, cores),
                                  **local_medians(python, impl, cores)}
    names = sorted(set().union(*(t.keys() for t in table.values())))
    print(f"{'workload':44} {'lite 1c':>9} {'lite 2c':>9} {'2 vs 1':>7} "
          f"{'jax 1c':>9} {'jax 2c':>9} {'lite/jax 2c':>11}")
    for name in names:
        row = [table[key].get(name) for key in
               (("jaxlite", 1), ("jaxlite", 2), ("jax", 1), ("jax", 2))]
        cells = [f"{v:9.2f}" if v else f"{'-':>9}" for v in row]
        gain = f"{row[1] / row[0]:7.2f}" if row[0] and row[1] else f"{'-':>7}"
        versus = f"{row[1] / row[3]:11.2f}" if row[1] and row[3] else f"{'-':>11}"
        print(f"{name:44} {cells[0]} {cells[1]} {gain} {cells[2]} {cells[3]} {versus}")


if __name__ == "__main__":
    main()
