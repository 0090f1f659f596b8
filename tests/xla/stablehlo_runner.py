"""Runs StableHLO text with real XLA (jaxlib), for tests/test_stablehlo_jaxlib.py.

Run by the jax virtual environment's python, never imported by jaxlite's tests:
`python stablehlo_runner.py CASES.npz OUT.npz`. CASES.npz holds, per case `k`, the module
text `k/text` (a 0-d unicode array), its arguments `k/arg<i>` and the indices `k/bf16` of
those that are bfloat16 bits as uint16 (npz has no bfloat16; results travel the same
way). OUT.npz gets the module as MLIR parsed and printed it, `k/parsed`, and the results
`k/out<i>` (none when the case has a `k/parse_only` entry), or `k/error` with jaxlib's
message when the text does not parse, compile or run.
"""
import sys

import ml_dtypes
import numpy as np
import jax
from jax._src import xla_bridge
from jax._src.interpreters import mlir
from jax._src.lib import lapack
from jax._src.lib.mlir import ir
from jaxlib import _jax

jax.config.update("jax_enable_x64", True)  # device_put keeps 64-bit arguments
# XLA's LAPACK targets call scipy's LAPACK through pointers that JAX sets up before its
# first linear-algebra lowering; a module from elsewhere needs the same set-up.
lapack._lapack.initialize()


def run(backend, text, args):
    devices = _jax.DeviceList(tuple(backend.local_devices()[:1]))
    executable = backend.compile_and_load(text, devices, _jax.CompileOptions())
    buffers = [jax.device_put(a) for a in args]
    results = executable.execute_sharded(buffers)
    return [np.asarray(r[0]) for r in results.disassemble_into_single_device_arrays()]


def parse(text):
    """The module as jaxlib's MLIR reads, verifies and prints it back."""
    with mlir.make_ir_context() as context:
        module = ir.Module.parse(text, context=context)
        if not module.operation.verify():
            raise ValueError("the module does not verify")
        return str(module)


def main(cases_path, out_path):
    backend = xla_bridge.get_backend("cpu")
    cases = np.load(cases_path, allow_pickle=False)
    names = sorted({key.split("/")[0] for key in cases.files})
    out = {}
    for name in names:
        text = str(cases[f"{name}/text"])
        count = sum(1 for key in cases.files if key.startswith(f"{name}/arg"))
        args = [cases[f"{name}/arg{i}"] for i in range(count)]
        for i in cases[f"{name}/bf16"]:
            args[i] = args[i].view(ml_dtypes.bfloat16)
        print(f"case {name}", file=sys.stderr, flush=True)  # names the case of a crash
        try:
            out[f"{name}/parsed"] = np.array(parse(text))
            if f"{name}/parse_only" in cases.files:
                continue
            for i, value in enumerate(run(backend, text, args)):
                bf16 = value.dtype == ml_dtypes.bfloat16
                out[f"{name}/out{i}"] = value.view(np.uint16) if bf16 else value
        except Exception as err:  # reported to the test, which fails with the message
            out[f"{name}/error"] = np.array(f"{type(err).__name__}: {err}")
    np.savez(out_path, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
