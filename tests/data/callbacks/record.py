"""Record what the programs of programs.py (next to this file) print under JAX 0.10.2.

Run from the repository root with real JAX (not jaxlite):
    /tmp/jaxvenv/bin/python tests/data/callbacks/record.py
It writes tests/data/callbacks/<program>.txt, which tests/test_debug.py compares against.
"""
import contextlib
import io
import sys
from pathlib import Path

import jax
import jax.experimental  # noqa: F401  (jax.experimental.io_callback)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from programs import PROGRAMS  # noqa: E402

for name, program in PROGRAMS.items():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        program(jax)
        jax.effects_barrier()
    (HERE / f"{name}.txt").write_text(out.getvalue())
    print(f"{name}: {len(out.getvalue().splitlines())} lines")
