"""Record JAX 0.10.2's results for shard_map_cases.py on one CPU device (run with real JAX,
not jaxlite, without forcing more host devices):

    /tmp/jaxvenv/bin/python tests/named_axes/record_jax_shard_map.py

Each program's output leaves go to jax_shard_map_records.npz as `<name>/<leaf index>`, with
`<name>/tree` (the pytree structure) and `<name>/weak` (the leaves' weak types).
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).parent))
from shard_map_cases import programs  # noqa: E402
from program_records import record_programs  # noqa: E402


def main() -> None:
    assert jax.device_count() == 1, "record on one device: jaxlite's meshes have size 1"
    record_programs(jax, programs(jax), Path(__file__).parent / "jax_shard_map_records.npz")


if __name__ == "__main__":
    main()
