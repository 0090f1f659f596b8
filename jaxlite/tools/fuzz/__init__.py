"""Differential fuzzing of jaxlite (`python -m jaxlite.tools.fuzz --minutes N`).

- `interp`: runs a program spec on any JAX-like namespace (imports neither jaxlite nor JAX);
- `values`, `generate`, `ops_gen`: random programs, as a hypothesis strategy;
- `runners`: eager, jit (interpreter, cpu), vmap and grad checks; `compare`: tolerances;
- `oracle`, `worker`: real JAX in another interpreter, programs in batches over pipes;
- `engine`: the loop that shrinks each new disagreement to a minimal program.
"""
from jaxlite.tools.fuzz.engine import Fuzzer, Stats, save_case
from jaxlite.tools.fuzz.generate import Options, programs, random_program
from jaxlite.tools.fuzz.oracle import Oracle
from jaxlite.tools.fuzz.runners import Finding, check_grad, check_modes, check_vmap

__all__ = ["Fuzzer", "Stats", "save_case", "Options", "programs",
           "random_program", "Oracle", "Finding", "check_grad", "check_modes", "check_vmap"]
