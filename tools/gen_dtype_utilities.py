"""Write the expected answers of jnp's dtype utilities, asking real JAX (x64 off).

    /tmp/jaxvenv/bin/python tools/gen_dtype_utilities.py

Covers promote_types, result_type (with weak Python scalars), can_cast, issubdtype and
isdtype over the standard dtypes; the answers go to tests/data/numpy_dtype_utilities.json,
read by tests/numpy/test_functional.py.
"""
import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
SCALARS = {"int": 1, "float": 1.0, "complex": 1j, "bool": True}
ABSTRACT = ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating", "bool_"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]


def answer(fun):
    try:
        value = fun()
    except Exception:  # a refusal is part of the expected behaviour
        return "-"
    return str(np.dtype(value)) if isinstance(value, np.dtype) else value


def main() -> None:
    dt = {name: jnp.dtype(getattr(jnp, name if name != "bool" else "bool_")) for name in NAMES}
    table = {
        "promote_types": {f"{a},{b}": answer(lambda: jnp.promote_types(dt[a], dt[b]))
                          for a in NAMES for b in NAMES},
        "result_type": {f"{a},{s}": answer(lambda: jnp.result_type(dt[a], v))
                        for a in NAMES for s, v in SCALARS.items()},
        "can_cast": {f"{a},{b},{c}": answer(lambda: bool(jnp.can_cast(dt[a], dt[b], c)))
                     for a in NAMES for b in NAMES for c in CASTINGS},
        "issubdtype": {f"{a},{k}": answer(lambda: bool(jnp.issubdtype(dt[a],
                                                                      getattr(jnp, k))))
                       for a in NAMES for k in ABSTRACT},
        "isdtype": {f"{a},{k}": answer(lambda: bool(jnp.isdtype(dt[a], k)))
                    for a in NAMES for k in KINDS},
    }
    path = Path(__file__).resolve().parent.parent / "tests" / "data" / "numpy_dtype_utilities.json"
    path.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
