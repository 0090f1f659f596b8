"""Record JAX 0.10.2's answers to sharding_types_programs.py (run with JAX's interpreter):

    XLA_FLAGS=--xla_force_host_platform_device_count=4 /tmp/jaxvenv/bin/python \
        tests/sharding/record_sharding_types.py
"""
import json
from pathlib import Path

import jax

from sharding_types_programs import run_all

if __name__ == "__main__":
    out = Path(__file__).parent / "data" / "sharding_types.json"
    out.write_text(json.dumps(run_all(jax), indent=1, sort_keys=True) + "\n")
    print("wrote", out)
