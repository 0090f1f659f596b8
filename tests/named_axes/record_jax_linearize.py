"""Record JAX 0.10.2's results for linearize_cases.py (run with real JAX, not jaxlite):

    /tmp/jaxvenv/bin/python tests/named_axes/record_jax_linearize.py

Each program's output leaves go to jax_linearize_records.npz as `<name>/<leaf index>`, with
`<name>/tree` (the pytree structure) and `<name>/weak` (the leaves' weak types).
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).parent))
from linearize_cases import programs  # noqa: E402
from program_records import record_programs  # noqa: E402


def main() -> None:
    record_programs(jax, programs(jax), Path(__file__).parent / "jax_linearize_records.npz")


if __name__ == "__main__":
    main()
