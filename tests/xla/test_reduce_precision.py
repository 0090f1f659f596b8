"""XLA's `reduce-precision` opcode: `lax.reduce_precision` lowers to it, and the evaluator,
the cpu backend (eager and jit), HLO text, StableHLO out and in, and real XLA running our
StableHLO all give the bits JAX 0.10.2 gives (recorded in fixtures/reduce_precision.json
by fixtures/generate_reduce_precision.py): rounding ties to even, overflow to infinity,
flushing below the narrow format's normals, subnormals of the wide format, NaN payloads.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.export import from_stablehlo
from jaxlite.xla import parse_hlo, stablehlo
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import ComputationBuilder, HloModule, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.text import print_module
from jaxlite.xla.verifier import HloVerificationError, verify_module
from stablehlo_xla import add_text_case, jax_python_or_skip, run_cases

RECORD = json.loads(Path(__file__).with_name("fixtures").joinpath(
    "reduce_precision.json").read_text())
UNSIGNED = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16,
            "bfloat16": np.uint16}
CASES = [(name, key) for name in UNSIGNED for key in RECORD[name]["outputs"]]


def _dtype(name):
    return np.dtype(dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _case(name, key):
    """Inputs, expected bits and (exponent_bits, mantissa_bits) of one recorded case."""
    unsigned = UNSIGNED[name]
    x = np.array(RECORD[name]["inputs"], unsigned).view(_dtype(name))
    expected = np.array(RECORD[name]["outputs"][key], unsigned)
    return x, expected, tuple(int(b) for b in key.split(","))


def _assert_bits(out, expected, name):
    bits = np.asarray(out).view(UNSIGNED[name])
    inputs = np.array(RECORD[name]["inputs"], UNSIGNED[name])
    wrong = np.nonzero(bits != expected)[0]
    assert not len(wrong), [(hex(inputs[i]), hex(bits[i]), hex(expected[i])) for i in wrong]


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
@pytest.mark.parametrize("name,key", CASES)
def test_reduce_precision_bits_match_jax(name, key, mode):
    x, expected, (e, m) = _case(name, key)
    fn = lambda v: lax.reduce_precision(v, e, m)  # noqa: E731
    if mode != "eager":
        fn = jax.jit(fn, backend="cpu" if mode == "jit" else "interpreter")
    with jax.enable_x64(name == "float64"):
        _assert_bits(fn(x), expected, name)


def test_lowering_is_one_instruction_and_text_round_trips():
    lowered = jax.jit(lambda v: lax.reduce_precision(v, 5, 2)).lower(np.ones(4, np.float32))
    text = lowered.as_text()
    assert "reduce-precision(" in text and "exponent_bits=5, mantissa_bits=2" in text
    assert "shift-right-logical" not in text  # no longer expanded into bit arithmetic
    module = parse_hlo(text)
    (inst,) = [i for i in module.entry.instructions if i.opcode is Opcode.REDUCE_PRECISION]
    assert (inst.attr("exponent_bits"), inst.attr("mantissa_bits")) == (5, 2)
    assert print_module(module, metadata=False) == print_module(
        parse_hlo(print_module(module, metadata=False)), metadata=False)
    x = np.array([1.1, 3.3, -0.3, 1e6], np.float32)
    np.testing.assert_array_equal(evaluate_module(module, [x]), [1.0, 3.5, -0.3125, np.inf])


def test_verifier_rejects_bad_formats_and_integers():
    def module(dtype, **attrs):
        b = ComputationBuilder("main", NameUniquer())
        x = b.parameter(Shape(dtype, (2,)))
        return HloModule("m", b.build(b.add(Opcode.REDUCE_PRECISION, x.shape, [x], attrs)))
    verify_module(module(np.float32, exponent_bits=5, mantissa_bits=0))
    with pytest.raises(HloVerificationError) as err:
        verify_module(module(np.float32, exponent_bits=0, mantissa_bits=3))
    assert "exponent_bits must be positive; got 0" in str(err.value)
    with pytest.raises(HloVerificationError) as err:
        verify_module(module(np.int32, exponent_bits=5, mantissa_bits=3))
    assert "takes float elements" in str(err.value) or "floating" in str(err.value)


def test_stablehlo_out_and_back_in():
    f = jax.jit(lambda v: lax.reduce_precision(v * 2, 5, 10))
    text = f.lower(np.ones(39, np.float32)).as_text(dialect="stablehlo")
    assert '"stablehlo.reduce_precision"' in text
    assert "exponent_bits = 5 : i32, mantissa_bits = 10 : i32" in text
    x, _, _ = _case("float32", "5,10")
    np.testing.assert_array_equal(np.asarray(from_stablehlo(text).call(x)).view(np.uint32),
                                  np.asarray(f(x)).view(np.uint32))


def test_reads_jax_pretty_form():
    assert "format = e5m10" in RECORD["stablehlo"]
    x, expected, _ = _case("float32", "5,10")
    exported = from_stablehlo(RECORD["stablehlo"].replace("4xf32", f"{x.size}xf32"))
    _assert_bits(exported.call(x), expected, "float32")


def test_our_stablehlo_runs_in_xla_with_jax_bits(tmp_path):
    jax_python_or_skip()
    cases = {}
    for name, key in CASES:
        x, _, (e, m) = _case(name, key)
        with jax.enable_x64(name == "float64"):
            lowered = jax.jit(lambda v: lax.reduce_precision(v, e, m)).lower(x)
            add_text_case(cases, f"{name}_{key.replace(',', '_')}",
                          lowered.as_text(dialect="stablehlo"), [x])
    results = run_cases(cases, tmp_path)
    for name, key in CASES:
        case = f"{name}_{key.replace(',', '_')}"
        assert f"{case}/error" not in results, results.get(f"{case}/error")
        _, expected, _ = _case(name, key)
        out = results[f"{case}/out0"]
        _assert_bits(out.view(UNSIGNED[name]), expected, name)
