"""Record JAX 0.10.2's results for programs.py (run with real JAX, not jaxlite):

    /tmp/jaxvenv/bin/python tests/data/higher_order_batching/record.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np
from jax.experimental import io_callback

sys.path.insert(0, str(Path(__file__).parent))
from programs import programs  # noqa: E402


def main() -> None:
    assert jax.__version__ == "0.10.2", jax.__version__
    log: list = []
    records = {}
    for name, program in programs(jax, io_callback, log).items():
        log.clear()
        leaves, tree = jax.tree_util.tree_flatten(program())
        records[name] = {"tree": str(tree), "log": list(log),
                         "leaves": [np.asarray(x).tolist() for x in leaves],
                         "dtypes": [str(np.asarray(x).dtype) for x in leaves]}
    out = Path(__file__).parent / "expected.json"
    out.write_text(json.dumps(records, indent=1) + "\n")
    print(f"wrote {len(records)} programs to {out}")


if __name__ == "__main__":
    main()
