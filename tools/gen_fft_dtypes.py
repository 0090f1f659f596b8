"""Write tests/data/fft_dtypes.json, the result dtypes of jax.numpy.fft, asking real JAX.

Run with a Python that has jax (never jaxlite's own environment requirement):

    /tmp/jaxvenv/bin/python tools/gen_fft_dtypes.py

Keys are "function|input dtype|x64" for the transforms and shifts (inputs of shape (3, 4)),
and "function|dtype argument|spacing dtype|x64" for fftfreq and rfftfreq; values are the
result's dtype name, or "error" when JAX refuses the call.
"""
import json
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TRANSFORMS = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
              "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift"]
INPUT_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64",
                "complex64", "complex128"]
FREQUENCY_DTYPES = ["none", "float16", "float32", "float64", "complex64"]
SPACINGS = {"python_float": 0.5, "float32": np.float32(0.5), "float64": np.float64(0.5)}


def result_dtype(call) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(call().dtype)
    except Exception:  # any refusal by JAX is recorded
        return "error"


def table() -> dict:
    rows = {}
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        for name in TRANSFORMS:
            for dtype in INPUT_DTYPES:
                x = np.ones((3, 4), dtype)
                rows[f"{name}|{dtype}|{x64}"] = result_dtype(
                    lambda: getattr(jnp.fft, name)(x))
        for name in ("fftfreq", "rfftfreq"):
            for dtype in FREQUENCY_DTYPES:
                for spacing, d in SPACINGS.items():
                    kwargs = {} if dtype == "none" else {"dtype": dtype}
                    rows[f"{name}|{dtype}|{spacing}|{x64}"] = result_dtype(
                        lambda: getattr(jnp.fft, name)(6, d, **kwargs))
    return rows


if __name__ == "__main__":
    path = ROOT / "tests" / "data" / "fft_dtypes.json"
    path.write_text(json.dumps(table(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {path}")
