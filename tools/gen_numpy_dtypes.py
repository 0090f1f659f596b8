"""Write the result-dtype tables of the jaxlite.numpy differential tests, asking real JAX.

Run with a Python that has jax (never jaxlite's own environment requirement):

    /tmp/jaxvenv/bin/python tools/gen_numpy_dtypes.py cases_math [cases_shape ...]

For every `Case` in `tests/numpy/<module>.py` and every input dtype code it declares, the
case's fixed example call runs on `jax.numpy` with x64 off; the result dtype codes ("f32*"
for weak types, "i32|i32" for several outputs, "-" when JAX raises) go to
`tests/data/numpy_dtypes/<module>.json`.
"""
import importlib
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "numpy"))

import jax.numpy as jnp  # noqa: E402

import np_cases  # noqa: E402


def table_for(module_name: str) -> dict:
    module = importlib.import_module(module_name)
    table = {}
    for case in module.CASES:
        row = {}
        for code in case.dtypes:
            args = np_cases.example_args(case, code)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = case.fn(jnp, *args, **case.example_kwargs)
                row[code] = "|".join(np_cases.dtype_code(leaf)
                                     for leaf in np_cases.output_leaves(result))
            except Exception:  # any refusal by JAX is recorded as "-"
                row[code] = "-"
        table[case.key] = row
    return table


def main(module_names: list[str]) -> None:
    out_dir = ROOT / "tests" / "data" / "numpy_dtypes"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in module_names:
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(table_for(name), indent=1, sort_keys=True) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
