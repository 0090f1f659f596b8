"""Record JAX 0.10.2's results for linearize_cases.py (run with real JAX, not jaxlite):

    /tmp/jaxvenv/bin/python tests/named_axes/record_jax_linearize.py

Each program's output leaves and pytree structure go to jax_linearize_records.npz as
`<name>/<leaf index>` and `<name>/tree`.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from linearize_cases import programs  # noqa: E402


def main() -> None:
    assert jax.__version__ == "0.10.2", jax.__version__
    records = {}
    for name, program in programs(jax).items():
        leaves, tree = jax.tree_util.tree_flatten(program())
        records[f"{name}/tree"] = np.array(str(tree))
        for k, leaf in enumerate(leaves):
            records[f"{name}/{k}"] = np.asarray(leaf)
    out = Path(__file__).parent / "jax_linearize_records.npz"
    np.savez_compressed(out, **records)
    print(f"wrote {len(records)} arrays to {out}")


if __name__ == "__main__":
    main()
