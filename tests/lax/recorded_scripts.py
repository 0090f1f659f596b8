"""Running the recording scripts of tests/lax/data with jaxlite.

Each `data/<name>_script.py` prints results line by line when run with `jax` (which made
`data/<name>_jax.txt` under JAX 0.10.2) or with `jaxlite`; the tests compare the lines.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"


def run_with_jaxlite(name: str, *args: str) -> list[str]:
    """The lines `data/<name>_script.py jaxlite *args` prints (in a fresh interpreter)."""
    result = subprocess.run([sys.executable, str(DATA / f"{name}_script.py"), "jaxlite",
                             *args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def recorded(name: str) -> list[str]:
    """The lines JAX printed: `data/<name>_jax.txt`."""
    return (DATA / f"{name}_jax.txt").read_text().splitlines()
