"""The fuzzing loop: hypothesis draws programs, checks run them, disagreements are shrunk.

Programs come in rounds, each a hypothesis run of the program strategy under its own seed.
The first new disagreement of a round fixes the round's *target* kind (for example
"jit_cpu vs jax: value"); hypothesis then shrinks the program while that kind persists,
running only the modes the kind needs. The smallest failing program seen is kept even when
the shrink budget ends the search early. A disagreement whose kind and op names contain an
earlier minimal program's is counted as a repeat and not shrunk again.
"""
from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import re
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from jaxlite.tools.fuzz import generate, runners
from jaxlite.tools.fuzz.generate import Options, op_names, size_of


class _BudgetSpent(BaseException):
    """Ends a hypothesis run from inside (a BaseException, so hypothesis does not catch it)."""


class _Disagreement(Exception):
    pass


class FuzzerError(BaseException):
    """A bug of the fuzzer itself (not of jaxlite): it must stop the run, not be shrunk."""


@dataclasses.dataclass
class Minimal:
    """A shrunk disagreement: its kind, detail and the smallest program showing it."""
    kind: str
    detail: str
    program: dict
    subnormal: bool = False
    signature: str | None = None   # an exception's message up to numbers (see _signature)


@dataclasses.dataclass
class Stats:
    """What a session did."""
    programs: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    found: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    minimal: list = dataclasses.field(default_factory=list)
    disagreeing: int = 0      # programs with at least one disagreement (subnormal ones apart)
    subnormal_only: int = 0   # programs whose only disagreements involve subnormals (known)
    shrink_runs: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [f"fuzzed for {self.seconds / 60:.1f} minutes"]
        lines.append("programs run per mode: " + ", ".join(
            f"{m} {n}" for m, n in sorted(self.programs.items())) + f" (+{self.shrink_runs}"
            " runs while shrinking)")
        lines.append(f"programs with disagreements: {self.disagreeing}; with subnormals only: "
                     f"{self.subnormal_only} (XLA and jaxlite's compiled code flush subnormals, "
                     "eager mode keeps IEEE: a known difference, not counted as a bug)")
        for kind, n in sorted(self.found.items()):
            lines.append(f"  {n:5d}  {kind}")
        for m in self.minimal:
            lines.append(f"minimal program for [{m.kind}] ({m.detail}):")
            lines.append("  " + json.dumps(m.program))
        return "\n".join(lines)


class Fuzzer:
    """Runs rounds until a deadline; `oracle` (oracle.Oracle or None) gives JAX's outcomes."""

    def __init__(self, oracle=None, modes=runners.MODES, options: Options = Options(),
                 checks=("vmap", "grad"), shrink_seconds: float = 90.0, round_size: int = 20):
        self.oracle = oracle
        self.modes = modes
        self.options = options
        self.checks = checks
        self.shrink_seconds = shrink_seconds
        self.round_size = round_size
        self.stats = Stats()

    # -- checking one program ---------------------------------------------------------------
    def findings(self, program, modes=None, checks=None) -> list[runners.Finding]:
        """Every disagreement of `program` under `modes` and `checks` (default: all)."""
        modes = self.modes if modes is None else modes
        checks = self.checks if checks is None else checks
        jax = None
        if self.oracle is not None and "jax" in modes:
            # JAX works in its process while jaxlite works in this one.
            self.oracle.submit([program])
            jax = _Pending(self.oracle)
        own = tuple(m for m in modes if m in runners.MODES)
        found = []
        try:
            if own:
                _, found = runners.check_modes(program, own, jax)
        finally:
            if jax is not None:
                jax()   # the answer is read even if nothing used it, to keep the pipe in step
        if "vmap" in checks:
            found += runners.check_vmap(program)
        if "grad" in checks:
            found += runners.check_grad(program)
        return found

    def _known(self, finding, program) -> bool:
        """A repeat: an earlier minimal program has this kind and a subset of the ops, or
        (for exceptions) the same kind and the same message up to numbers."""
        names = op_names(program)
        return any(m.kind == finding.kind and (op_names(m.program) <= names or (
            m.signature is not None and m.signature == _signature(finding)))
            for m in self.stats.minimal)

    # -- one round ----------------------------------------------------------------------------
    def run_round(self, round_seed: int, deadline: float, smooth: bool = False):
        """One hypothesis run of up to `round_size` programs; shrinks its first new finding."""
        options = dataclasses.replace(self.options, smooth=smooth)
        checks = ("grad",) if smooth else tuple(c for c in self.checks if c != "grad")
        modes = () if smooth else self.modes
        state = {"target": None, "best": None, "shrink_end": None}

        def check(program):
            try:
                failing = _check(program)
            except (_Disagreement, _BudgetSpent):
                raise
            except Exception as e:
                raise FuzzerError(f"{type(e).__name__}: {e}") from e
            if failing:
                # One raise site: hypothesis tells failures apart by where they are raised.
                raise _Disagreement(state["target"].kind)

        def _check(program):
            if time.monotonic() > deadline and state["target"] is None:
                raise _BudgetSpent
            if state["target"] is None:
                self._count(modes, checks)
                found = self.findings(program, modes, checks)
                for f in found:
                    self.stats.found[f.kind] += 1
                self.stats.disagreeing += any(not f.subnormal for f in found)
                self.stats.subnormal_only += bool(found) and all(f.subnormal for f in found)
                new = [f for f in found if not f.subnormal and not self._known(f, program)]
                if not new:
                    return False
                state["target"] = new[0]
                state["best"] = (program, new[0])
                state["shrink_end"] = time.monotonic() + self.shrink_seconds
                return True
            if time.monotonic() > state["shrink_end"]:
                raise _BudgetSpent
            self.stats.shrink_runs += 1
            target = state["target"]
            found = self.findings(program, _modes_for(target, modes), _checks_for(target))
            same = [f for f in found if f.kind == target.kind]
            if same and size_of(program) <= size_of(state["best"][0]):
                state["best"] = (program, same[0])
            return bool(same)

        runner = settings(max_examples=self.round_size, database=None, deadline=None,
                          derandomize=False, phases=[Phase.generate, Phase.shrink],
                          suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                          print_blob=False)(seed(round_seed)(given(
                              generate.programs(options))(check)))
        try:
            runner()
        except _BudgetSpent:
            pass
        except Exception:  # hypothesis re-raises the shrunk failure (or reports it flaky)
            pass
        if state["best"] is not None:
            program, finding = state["best"]
            self.stats.minimal.append(Minimal(finding.kind, finding.detail, program,
                                              finding.subnormal, _signature(finding)))

    def _count(self, modes, checks):
        for m in tuple(modes) + tuple(checks):
            self.stats.programs[m] += 1

    def run(self, minutes: float, seed_value: int = 0, grad_every: int = 4) -> Stats:
        """Rounds until `minutes` have passed; every `grad_every`-th round is a grad round."""
        start = time.monotonic()
        deadline = start + 60 * minutes
        r = 0
        while time.monotonic() < deadline:
            smooth = "grad" in self.checks and r % grad_every == grad_every - 1
            self.run_round(seed_value * 100003 + r, deadline, smooth=smooth)
            r += 1
        self.stats.seconds = time.monotonic() - start
        return self.stats


class _Pending:
    """The oracle's answer for the program submitted last, read once when first needed."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.value = None

    def __call__(self):
        if self.value is None:
            self.value = runners.from_oracle(self.oracle.receive(1)[0])
        return self.value


def _signature(finding) -> str | None:
    """For a disagreement about exceptions, its message with numbers blanked, else None."""
    if finding.category not in ("exception type", "raises only here",
                                "raises only in reference"):
        return None
    return re.sub(r"[0-9]+", "#", finding.detail)[:80]


def _modes_for(finding, modes):
    if finding.mode in ("vmap", "grad"):
        return ()
    reference = "jax" if finding.reference.startswith("jax") else finding.reference
    return tuple(m for m in (finding.mode, reference) if m in modes)


def _checks_for(finding):
    return (finding.mode,) if finding.mode in ("vmap", "grad") else ()


def save_case(directory, minimal: Minimal, oracle=None) -> Path:
    """Writes a regression case; the expected outcome is recorded from JAX when available."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(minimal.program, sort_keys=True)
    name = hashlib.sha256(text.encode()).hexdigest()[:12]
    case = {"kind": minimal.kind, "detail": minimal.detail, "program": minimal.program,
            "subnormal": minimal.subnormal, "status": "open"}
    if oracle is not None:
        case["expected_from_jax"] = oracle.run_batch([minimal.program])[0]
    path = directory / f"{name}.json"
    path.write_text(json.dumps(case, indent=1) + "\n")
    return path
