"""The differential fuzzer (jaxlite.tools.fuzz): its comparison, its worker protocol, a short
fixed-seed fuzzing budget without JAX, a planted bug it must find and shrink, and the CLI."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

from jaxlite.lax.arithmetic import add_p
from jaxlite.lax.math_functions import sin_p
from jaxlite.tools.fuzz import compare as cmp
from jaxlite.tools.fuzz import interp, runners
from jaxlite.tools.fuzz.engine import Fuzzer, save_case
from jaxlite.tools.fuzz.generate import Options, random_program
from jaxlite.tools.fuzz.oracle import Oracle

TOOLS = Path(__file__).resolve().parents[2] / "jaxlite" / "tools"


def ok(x):
    return {"ok": True, "value": np.asarray(x)}


def err(base, name=None):
    return {"ok": False, "type": name or base, "base": base, "message": "m"}


# ---- comparison ---------------------------------------------------------------------------

def test_integers_and_bools_compare_exactly():
    assert cmp.compare(ok(np.int8([1, 2])), ok(np.int8([1, 2]))) is None
    assert cmp.compare(ok(np.int8([1, 2])), ok(np.int8([1, 3])), tol_ops=100)[0] == "value"
    assert cmp.compare(ok(np.bool_([True])), ok(np.bool_([False])))[0] == "value"


def test_dtype_and_shape_must_match():
    assert cmp.compare(ok(np.int8([1])), ok(np.int32([1])))[0] == "dtype"
    assert cmp.compare(ok(np.float32([1])), ok(np.float32(1)))[0] == "shape"


def test_float_tolerance_follows_eps_and_op_count():
    eps = np.finfo(np.float32).eps
    x = np.float32([1.0, 2.0])
    near = (x * (1 + 3 * eps)).astype(np.float32)
    far = (x * (1 + 100 * eps)).astype(np.float32)
    assert cmp.compare(ok(x), ok(near), tol_ops=4) is None       # 8 eps allowed
    assert cmp.compare(ok(x), ok(far), tol_ops=4)[0] == "value"
    assert cmp.compare(ok(x), ok(near), tol_ops=0)[0] == "value"  # exact results: bitwise
    bf = np.asarray([1.0], ml_dtypes.bfloat16)
    assert cmp.compare(ok(bf), ok(bf * ml_dtypes.bfloat16(1.0078125)), tol_ops=1) is None


def test_nans_infs_and_signed_zeros():
    a = np.float32([np.nan, 1.0])
    assert cmp.compare(ok(a), ok(np.float32([np.nan, 1.0]))) is None
    assert cmp.compare(ok(a), ok(np.float32([0.0, 1.0])), tol_ops=100)[0] == "nan"
    assert cmp.compare(ok(np.float32([np.inf])), ok(np.float32([-np.inf])), 100)[0] == "inf"
    assert cmp.compare(ok(np.float32([0.0])), ok(np.float32([-0.0])))[0] == "signed zero"
    c = np.complex64([complex(np.nan, 0)])
    assert cmp.compare(ok(c), ok(np.complex64([complex(0, np.nan)]))) is None
    inf = np.complex64([complex(np.inf, 0)])  # complex parts compare one by one
    assert cmp.compare(ok(inf), ok(np.complex64([complex(np.inf, 1e-7)])), tol_ops=4) is None
    assert cmp.compare(ok(inf), ok(np.complex64([complex(-np.inf, 0)])), tol_ops=4)[0] == "inf"


def test_exceptions_compare_by_builtin_class():
    assert cmp.compare(err("TypeError", "JAXTypeError"), err("TypeError")) is None
    assert cmp.compare(err("TypeError"), err("IndexError"))[0] == "exception type"
    assert cmp.compare(err("ValueError"), ok(1))[0] == "raises only in reference"
    assert cmp.compare(ok(1), err("ValueError"))[0] == "raises only here"


# ---- programs, the interpreter and the worker -----------------------------------------------

def test_arrays_round_trip_bit_exactly():
    for a in [np.float32([-0.0, np.nan, np.inf]), np.asarray([1.5, -0.0], ml_dtypes.bfloat16),
              np.uint32(4294967295), np.complex64([1 + 2j])]:
        b = interp.decode_array(json.loads(json.dumps(interp.encode_array(a))))
        assert b.dtype == a.dtype and b.shape == np.shape(a)
        assert np.asarray(b).tobytes() == np.asarray(a).tobytes()
    spec = {"dtype": "float16", "shape": [2, 2], "values": ["nan", "-inf", -0.0, 65504.0]}
    x = interp.decode_input(spec)
    assert x.dtype == np.float16 and np.isnan(x[0, 0]) and np.signbit(x[1, 0])


def test_programs_are_json_and_replay_identically():
    for seed in range(20):
        p = random_program(seed, Options(x64=True))
        assert json.loads(json.dumps(p)) == p
        assert random_program(seed, Options(x64=True)) == p


def test_no_jax_import_statement_in_jaxlite_tools():
    for path in TOOLS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "jax" or n.startswith("jax.") for n in names), path


def test_worker_runs_batches_in_another_interpreter():
    """The oracle protocol, with jaxlite itself standing in for JAX in the subprocess."""
    programs = [random_program(s) for s in range(6)]
    with Oracle(sys.executable, namespace="jaxlite") as oracle:
        results = oracle.run_batch(programs)
        assert oracle.calls == 1 and len(results) == 6
    for program, result in zip(programs, results):
        outcomes, findings = runners.check_modes(program, ("eager",),
                                                 runners.from_oracle(result))
        assert findings == [], (program, findings)


# ---- fuzzing ---------------------------------------------------------------------------------

def test_short_budget_finds_no_disagreement():
    """Fixed seeds, no JAX: eager against jit on both backends, vmap and grad checks."""
    fuzzer = Fuzzer(None, checks=("vmap", "grad"), round_size=20)
    for r in range(8):
        fuzzer.run_round(r, deadline=float("inf"))
    for r in range(2):
        fuzzer.run_round(99 + r, deadline=float("inf"), smooth=True)
    stats = fuzzer.stats
    assert stats.programs["jit_cpu"] >= 120 and stats.programs["grad"] >= 30
    assert not stats.found, stats.summary()


def _planted_add(eps_times):
    good = add_p.reference

    def wrong(x, y, **params):
        out = np.asarray(good(x, y, **params))
        if out.dtype == np.float32:
            out = (out * np.float32(1 + eps_times * np.finfo(np.float32).eps)).astype(out.dtype)
        return out
    return wrong


def test_planted_wrong_add_is_found_and_shrunk(monkeypatch, tmp_path):
    """Eager float32 add off by 100 ulps: the jit modes disagree with eager; the shrunk
    program is a single add (or a function built on it) and is saved as a case."""
    monkeypatch.setattr(add_p, "reference", _planted_add(100))
    fuzzer = Fuzzer(None, modes=("eager", "jit_interpreter"), checks=(), round_size=60,
                    shrink_seconds=60)
    fuzzer.options = Options(control_flow=False)
    r = 0
    while not fuzzer.stats.minimal and r < 6:
        fuzzer.run_round(r, deadline=float("inf"))
        r += 1
    assert fuzzer.stats.minimal, fuzzer.stats.summary()
    minimal = fuzzer.stats.minimal[0]
    assert minimal.kind in ("jit_interpreter vs eager: value", "jit_interpreter vs eager: nan",
                            "jit_interpreter vs eager: inf")
    assert len(minimal.program["ops"]) <= 2, minimal.program
    case = json.loads(save_case(tmp_path, minimal).read_text())
    assert case["program"] == minimal.program and case["status"] == "open"


def test_planted_bug_seen_against_an_oracle(monkeypatch):
    """The same planted add, with the (unpatched) oracle process as the reference."""
    monkeypatch.setattr(add_p, "reference", _planted_add(100))
    program = {"x64": False, "inputs": [
        {"dtype": "float32", "shape": [2], "values": [1.0, 3.0]}],
        "ops": [{"op": "binary", "args": [0, 0], "params": {"fn": "add", "lib": "jnp"}}],
        "meta": {"exact": True, "tol_ops": 0}}
    with Oracle(sys.executable, namespace="jaxlite") as oracle:
        want = runners.from_oracle(oracle.run_batch([program])[0])
    _, findings = runners.check_modes(program, runners.MODES, want)
    assert [f.kind for f in findings] == ["eager vs jax: value"]  # jit modes are right


def test_grad_check_catches_a_wrong_derivative(monkeypatch):
    """float32 and float64: right rules pass, a sin derivative 1% off is reported."""
    for dtype in ("float32", "float64"):
        program = {"x64": dtype == "float64", "inputs": [
            {"dtype": dtype, "shape": [3], "values": [0.5, 1.0, -2.0]}],
            "ops": [{"op": "unary", "args": [0], "params": {"fn": "sin", "lib": "jnp"}}]}
        assert runners.check_grad(program) == []
    good = sin_p.jvp

    def wrong(primals, tangents, **params):
        out, tangent = good(primals, tangents, **params)
        return out, tangent * 1.01
    monkeypatch.setattr(sin_p, "jvp", wrong)
    assert [f.kind for f in runners.check_grad(program)] == ["grad vs finite differences: value"]


def test_cli_runs_and_prints_a_summary(tmp_path):
    cmd = [sys.executable, "-m", "jaxlite.tools.fuzz", "--minutes", "0.05", "--seed", "3",
           "--jax-python", sys.executable, "--namespace", "jaxlite", "--checks", "vmap",
           "--save", str(tmp_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "programs run per mode: eager" in out.stdout and "jax " in out.stdout
    assert "programs with disagreements: 0" in out.stdout, out.stdout
