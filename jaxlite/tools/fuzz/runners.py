"""Running a program every way jaxlite can, and checking the ways against each other.

Modes: `eager` (op by op), `jit_interpreter` (`jit(f, backend="interpreter")`), `jit_cpu`
(`jit(f)`), and `jax` (real JAX in another interpreter, through `oracle.Oracle`, eager and
under jit). With JAX present, eager is compared with JAX's eager outcome and the jit modes
with JAX's jit outcome; without, the jit modes are compared with eager. Two transformation checks need no oracle: `vmap` (vmap over the first input against a
Python loop) and `grad` (reverse mode against central differences, float64 programs).
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np

import jaxlite
from jaxlite.tools.fuzz import compare as cmp
from jaxlite.tools.fuzz import interp
from jaxlite.tools.fuzz.generate import NAMESPACE
from jaxlite.tools.fuzz.values import category, has_subnormal

MODES = ("eager", "jit_interpreter", "jit_cpu")
jnp = NAMESPACE.jnp


@dataclasses.dataclass
class Finding:
    """One disagreement: `mode` against `reference`, of `category` (compare.CATEGORIES)."""
    mode: str
    reference: str
    category: str
    detail: str
    subnormal: bool = False   # the program's values hold subnormals (a known class vs XLA)

    @property
    def kind(self) -> str:
        prefix = "subnormal: " if self.subnormal else ""
        return f"{prefix}{self.mode} vs {self.reference}: {self.category}"


def _outcome(thunk) -> dict:
    try:
        return {"ok": True, "value": np.asarray(thunk())}
    except Exception as e:  # a raised error is an outcome to compare
        return interp.encode_exception(e)


def _inputs(program):
    return [jnp.asarray(interp.decode_input(s)) for s in program["inputs"]]


def run_eager(program) -> tuple[dict, float, bool]:
    """The eager outcome, the largest magnitude among all values, and whether any is subnormal."""
    with jaxlite.enable_x64(program["x64"]):
        try:
            env = interp.run_all(program, NAMESPACE, _inputs(program))
            values = [np.asarray(v) for v in env]
        except Exception as e:
            return interp.encode_exception(e), 1.0, False
    return ({"ok": True, "value": values[-1]}, cmp.magnitude(values),
            any(has_subnormal(v) for v in values))


def run_mode(program, mode: str) -> dict:
    """The outcome of one jaxlite mode."""
    if mode == "eager":
        return run_eager(program)[0]
    f = interp.as_function(program, NAMESPACE)
    backend = {"jit_interpreter": "interpreter", "jit_cpu": None}[mode]
    with jaxlite.enable_x64(program["x64"]):
        jitted = jaxlite.jit(f, backend=backend) if backend else jaxlite.jit(f)
        return _outcome(lambda: jitted(*_inputs(program)))


def from_oracle(result: dict) -> dict:
    """An oracle worker's answer for one program as outcomes {"eager": ..., "jit": ...}."""
    return {way: _decoded(result[way]) for way in ("eager", "jit")}


def _decoded(outcome):
    if not outcome["ok"]:
        return outcome
    return {"ok": True, "value": interp.decode_array(outcome)}


def _tol(program):
    meta = program.get("meta", {})
    return 0 if meta.get("exact", False) else max(int(meta.get("tol_ops", 0)), 4)


def check_modes(program, modes=MODES, jax=None) -> tuple[dict, list[Finding]]:
    """Runs `modes` and compares them: with JAX's outcomes when given (`from_oracle`, or a
    function returning them: eager mode with JAX's eager outcome, jit modes with JAX's jit),
    else the jit modes with eager."""
    eager, scale, subnormal = run_eager(program)
    outcomes = {"eager": eager}
    for mode in modes:
        if mode != "eager":
            outcomes[mode] = run_mode(program, mode)
    if callable(jax):  # an answer still on its way from the oracle process
        jax = jax()
    findings = []
    for mode in modes:
        if jax is not None:
            ref_name = "jax" if mode == "eager" else "jax_jit"
            reference = jax["eager" if mode == "eager" else "jit"]
        elif mode == "eager":
            continue
        else:
            ref_name, reference = "eager", eager
        found = cmp.compare(reference, outcomes[mode], _tol(program), scale)
        if found:
            sub = jax is not None and (subnormal or _has_subnormal_outcome(reference))
            findings.append(Finding(mode, ref_name, found[0], found[1], sub))
    return outcomes, findings


def _has_subnormal_outcome(outcome):
    return outcome["ok"] and has_subnormal(outcome["value"])


def check_vmap(program, batch: int = 2) -> list[Finding]:
    """vmap over the first input (rolled copies stacked) against a loop of eager calls."""
    spec = program["inputs"][0]
    if not spec["values"]:
        return []
    f = interp.as_function(program, NAMESPACE)
    with jaxlite.enable_x64(program["x64"]):
        inputs = _inputs(program)
        first = interp.decode_input(spec)
        rows = [np.roll(first.ravel(), k).reshape(first.shape) for k in range(batch)]
        loop = [_outcome(lambda r=r: f(jnp.asarray(r), *inputs[1:])) for r in rows]
        stacked = jnp.asarray(np.stack(rows))
        in_axes = (0,) + (None,) * (len(inputs) - 1)
        mapped = _outcome(lambda: jaxlite.vmap(f, in_axes=in_axes)(stacked, *inputs[1:]))
    if not all(o["ok"] for o in loop):
        want = next(o for o in loop if not o["ok"])
    else:
        want = {"ok": True, "value": np.stack([o["value"] for o in loop])}
    scale = cmp.magnitude([o["value"] for o in loop if o["ok"]] + rows)
    found = cmp.compare(want, mapped, _tol(program), scale)
    return [Finding("vmap", "loop", found[0], found[1])] if found else []


def check_grad(program, seed: int = 0) -> list[Finding]:
    """grad of sum(f) along a random direction per float input against central differences.

    The difference quotient always runs in float64 (a float32 program is rerun with its
    float32 inputs widened): the step is eps**(1/3) times the input's scale, which balances
    truncation (h**2) against rounding (eps / h), so the quotient is good to about
    eps**(2/3) ~ 4e-11 relative. The derivative runs in the program's own dtype; the
    tolerance, relative to |f| + |derivative| + 1, is 1e-6 for float64 and sqrt(eps) ~ 3e-4
    for float32 (rounding errors of a few dozen float32 operations, amplified by the
    program's condition), far below the error of a wrong derivative rule.
    """
    specs = program["inputs"]
    argnums = [i for i, s in enumerate(specs) if category(s["dtype"]) == "float" and s["values"]]
    if not argnums or any(s["dtype"] not in ("float32", "float64") for s in specs
                          if category(s["dtype"]) == "float"):
        return []
    wide = _widened(program)
    rng = np.random.default_rng(seed)
    tol = 1e-6 if program["x64"] else float(np.sqrt(np.finfo(np.float32).eps))
    try:
        with jaxlite.enable_x64(program["x64"]):
            gs = jaxlite.grad(_loss(program), argnums=tuple(argnums))(*_inputs(program))
            gs = [np.asarray(g, np.float64) for g in gs]
    except Exception as e:  # f runs (checked below), so its gradient must too
        if not run_eager(program)[0]["ok"]:
            return []
        return [Finding("grad", "finite differences", "raises only here",
                        f"{type(e).__name__}: {str(e)[:200]}")]
    with jaxlite.enable_x64(True):
        loss = _loss(wide)
        inputs = [interp.decode_input(s) for s in wide["inputs"]]
        base = _outcome(lambda: loss(*[jnp.asarray(x) for x in inputs]))
        if not base["ok"] or not np.isfinite(base["value"]):
            return []
        findings = []
        for g, i in zip(gs, argnums):
            found = _directional_check(loss, inputs, i, g, float(base["value"]), rng, tol)
            if found:
                findings.append(Finding("grad", "finite differences", "value",
                                        f"input {i}: {found}"))
        return findings


def _loss(program):
    f = interp.as_function(program, NAMESPACE)
    return lambda *xs: jnp.sum(f(*xs))


def _widened(program):
    """The program with float32 inputs and casts made float64, run with x64 on."""
    text = json.dumps(program).replace('"float32"', '"float64"')
    wide = json.loads(text)
    wide["x64"] = True
    return wide


def _directional_check(loss, inputs, i, g, value, rng, tol):
    x = inputs[i]
    v = rng.standard_normal(x.shape)
    h = np.finfo(np.float64).eps ** (1 / 3) * max(1.0, float(np.max(np.abs(x), initial=0)))

    def at(t):
        xs = list(inputs)
        xs[i] = x + t * v
        return float(loss(*[jnp.asarray(a) for a in xs]))
    fd = (at(h) - at(-h)) / (2 * h)
    # The quotient's own error, seen by halving the step (its truncation error h**2 f"'/6
    # shrinks fourfold): large third derivatives (cos of a high power) need that room.
    fd_half = (at(h / 2) - at(-h / 2)) / h
    ad = float(np.sum(g * v))
    if not (np.isfinite(fd) and np.isfinite(ad) and np.isfinite(fd_half)):
        return None
    if abs(ad - fd) <= tol * (abs(value) + abs(fd) + 1) + 2 * abs(fd - fd_half):
        return None
    return f"directional derivative {ad!r}, central difference {fd!r}"
