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
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from shard_map_cases import programs  # noqa: E402


def main() -> None:
    assert jax.__version__ == "0.10.2", jax.__version__
    assert jax.device_count() == 1, "record on one device: jaxlite's meshes have size 1"
    records = {}
    for name, program in programs(jax).items():
        leaves, tree = jax.tree_util.tree_flatten(program())
        records[f"{name}/tree"] = np.array(str(tree))
        records[f"{name}/weak"] = np.array([bool(getattr(x, "weak_type", False))
                                            for x in leaves])
        for k, leaf in enumerate(leaves):
            records[f"{name}/{k}"] = np.asarray(leaf)
    out = Path(__file__).parent / "jax_shard_map_records.npz"
    np.savez_compressed(out, **records)
    print(f"wrote {len(records)} arrays to {out}")


if __name__ == "__main__":
    main()
