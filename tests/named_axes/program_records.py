"""Recording whole programs' outputs with real JAX and checking jaxlite's against them,
for the named-axes test files that keep their programs in a cases module."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np


def record_programs(jax: Any, programs: dict[str, Callable[[], Any]], out: Path) -> None:
    """Run each program and store its leaves as `<name>/<k>`, its pytree structure as
    `<name>/tree` and the leaves' weak types as `<name>/weak` in the npz file `out`."""
    assert jax.__version__ == "0.10.2", jax.__version__
    records = {}
    for name, program in programs.items():
        leaves, tree = jax.tree_util.tree_flatten(program())
        records[f"{name}/tree"] = np.array(str(tree))
        records[f"{name}/weak"] = np.array([bool(getattr(x, "weak_type", False))
                                            for x in leaves])
        for k, leaf in enumerate(leaves):
            records[f"{name}/{k}"] = np.asarray(leaf)
    np.savez_compressed(out, **records)
    print(f"wrote {len(records)} arrays to {out}")


def check_program(jax: Any, records: Any, name: str, output: Any, rtol: float,
                  atol: float) -> None:
    """`output` has the recorded structure, dtypes, shapes, weak types and values."""
    leaves, tree = jax.tree_util.tree_flatten(output)
    assert str(tree) == str(records[f"{name}/tree"])
    weak = list(records[f"{name}/weak"])
    for k, leaf in enumerate(leaves):
        expected = records[f"{name}/{k}"]
        actual = np.asarray(leaf)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, f"leaf {k}"
        assert bool(getattr(leaf, "weak_type", False)) == weak[k], f"leaf {k} weak type"
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=f"leaf {k}")
