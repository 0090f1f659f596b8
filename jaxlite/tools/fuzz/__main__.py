"""`python -m jaxlite.tools.fuzz --minutes N [--seed S] [--jax-python P] [--save DIR]`.

Fuzzes jaxlite for N minutes (eager, jit on the interpreter and cpu backends, vmap and grad
checks, and real JAX when an interpreter with it is given or named by
JAXLITE_FUZZ_JAX_PYTHON) and prints programs run per mode, disagreements by kind and each
minimal program. With --save, each minimal program is written as a regression case.
"""
from __future__ import annotations

import argparse
import sys

from jaxlite.tools.fuzz import oracle as oracle_mod
from jaxlite.tools.fuzz import runners
from jaxlite.tools.fuzz.engine import Fuzzer, save_case
from jaxlite.tools.fuzz.generate import Options


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m jaxlite.tools.fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jax-python", default=oracle_mod.default_python(),
                   help="an interpreter with real JAX (default: $JAXLITE_FUZZ_JAX_PYTHON)")
    p.add_argument("--namespace", default="jax",
                   help="the module the oracle interpreter imports (default: jax)")
    p.add_argument("--no-jax", action="store_true", help="do not use an oracle")
    p.add_argument("--save", default=None, help="folder for regression cases")
    p.add_argument("--x64", action="store_true", help="also draw 64-bit programs")
    p.add_argument("--max-ops", type=int, default=8)
    p.add_argument("--modes", default=",".join(runners.MODES),
                   help="jaxlite modes to run, comma-separated")
    p.add_argument("--checks", default="vmap,grad")
    p.add_argument("--shrink-seconds", type=float, default=90.0)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    oracle = None
    modes = tuple(m for m in args.modes.split(",") if m)
    if args.jax_python and not args.no_jax:
        oracle = oracle_mod.Oracle(args.jax_python, args.namespace)
        modes = modes + ("jax",)
    checks = tuple(c for c in args.checks.split(",") if c)
    options = Options(max_ops=args.max_ops, x64=args.x64)
    fuzzer = Fuzzer(oracle, modes, options, checks, shrink_seconds=args.shrink_seconds)
    try:
        stats = fuzzer.run(args.minutes, args.seed)
        print(stats.summary())
        if args.save:  # subnormal differences are a known class: not kept as cases
            for m in stats.minimal:
                if not m.subnormal:
                    print("saved", save_case(args.save, m, oracle))
    finally:
        if oracle is not None:
            oracle.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
