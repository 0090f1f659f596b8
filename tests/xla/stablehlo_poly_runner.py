"""Runs a shape-polymorphic StableHLO module (`tensor<?x4xf32>` arguments, as JAX prints a
module exported with symbolic shapes) in real XLA at concrete sizes, the way JAX calls one:
a `@main` of the arguments' static types converts them to the module's dynamic types and
calls it, jaxlib's shape refinement makes every shape static, then XLA compiles and runs it.

Run by the jax virtual environment's python, never imported by jaxlite's tests:
`python stablehlo_poly_runner.py CASES.npz OUT.npz`. CASES.npz holds, per case `k`, the
module text `k/text`, the arguments `k/arg<i>` and arrays of the expected results' shapes
and dtypes `k/want<i>` (float32, int32 or bool). OUT.npz gets `k/out<i>`, or `k/error`.
"""
import sys

import numpy as np
import jax
from jax._src import xla_bridge
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jaxlib import _jax

_ELEMENT = {"float32": "f32", "int32": "i32", "bool": "i1"}


def static_type(array):
    dims = "".join(f"{d}x" for d in array.shape)
    return f"tensor<{dims}{_ELEMENT[array.dtype.name]}>"


def main_types(text):
    """The argument and result types of the module's `@main`, as MLIR prints them."""
    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations
                    if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        kind = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        return [str(t) for t in kind.inputs], [str(t) for t in kind.results]


def wrapped(text, args, wants):
    """The module with its `@main` renamed and called from a `@main` of static types."""
    inputs, results = main_types(text)
    callee = text.replace("func.func public @main(", "func.func private @polymorphic(", 1)
    header_end = callee.index("\n")
    arg_types, out_types = [static_type(a) for a in args], [static_type(w) for w in wants]
    lines = ["  func.func public @main(" + ", ".join(
        f"%a{i}: {t}" for i, t in enumerate(arg_types)) + ") -> (" + ", ".join(out_types) + ") {"]
    for i, (static, dynamic) in enumerate(zip(arg_types, inputs)):
        lines.append(f"    %c{i} = stablehlo.convert %a{i} : ({static}) -> {dynamic}")
    many = len(results) > 1
    lines.append(f"    %r{':' + str(len(results)) if many else ''} = func.call @polymorphic("
                 + ", ".join(f"%c{i}" for i in range(len(args))) + ") : ("
                 + ", ".join(inputs) + ") -> (" + ", ".join(results) + ")")
    for i, (dynamic, static) in enumerate(zip(results, out_types)):
        value = f"%r#{i}" if many else "%r"
        lines.append(f"    %o{i} = stablehlo.convert {value} : ({dynamic}) -> {static}")
    lines.append("    return " + ", ".join(f"%o{i}" for i in range(len(results)))
                 + " : " + ", ".join(out_types))
    lines.append("  }")
    return callee[:header_end] + "\n" + "\n".join(lines) + callee[header_end:]


def refined(text):
    """jaxlib's shape refinement (what JAX runs before compiling a call of such a module)."""
    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        return _jax.mlir.refine_polymorphic_shapes(
            mlir.module_to_bytecode(module), enable_shape_assertions=True,
            validate_static_shapes=True)


def run(backend, text, args):
    devices = _jax.DeviceList(tuple(backend.local_devices()[:1]))
    executable = backend.compile_and_load(text, devices, _jax.CompileOptions())
    results = executable.execute_sharded([jax.device_put(a) for a in args])
    return [np.asarray(r[0]) for r in results.disassemble_into_single_device_arrays()]


def main(cases_path, out_path):
    backend = xla_bridge.get_backend("cpu")
    cases = np.load(cases_path, allow_pickle=False)
    names = sorted({key.split("/")[0] for key in cases.files})
    out = {}
    for name in names:
        def listed(kind):
            count = sum(1 for key in cases.files if key.startswith(f"{name}/{kind}"))
            return [cases[f"{name}/{kind}{i}"] for i in range(count)]
        args, wants = listed("arg"), listed("want")
        try:
            text = refined(wrapped(str(cases[f"{name}/text"]), args, wants))
            for i, value in enumerate(run(backend, text, args)):
                out[f"{name}/out{i}"] = value
        except Exception as err:  # reported to the test, which fails with the message
            out[f"{name}/error"] = np.array(f"{type(err).__name__}: {err}"[:4000])
    np.savez(out_path, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
