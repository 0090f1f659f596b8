"""Fit the coefficients of jaxlite's vector math library (jaxlite/backends/cpu/vecmath).

Usage: `python tools/fit_vecmath.py [NAME ...]` refits the named approximations (all of them
without arguments), prints each one's fitting error and rewrites
`jaxlite/backends/cpu/vecmath/_coeffs.py`, keeping the entries it did not refit. The package
never imports this script; it only reads the generated table.

Method. Every approximation has the shape

    value(x) = fixed(x) + factor(x) * P(u(x))            (polynomial fits)
    value(x) = fixed(x) + factor(x) * P(u(x)) / Q(u(x))  (rational fits, Q(0) = 1)

where `fixed` holds the leading terms that are exact (for instance `r` in
`expm1(r) = r + r**2 * P(r)`), so that the fitted part is a small correction and float64
linear algebra is precise enough even for float64 coefficients. The reference values come
from mpmath at 40 digits and are kept as numpy long doubles (64-bit mantissa); residuals are
computed in long double, and each weighted least-squares solve (float64 LAPACK) is refined
with those residuals. The max-norm (minimax) solution is reached with Lawson's iteration:
the least-squares weights of the sample points are multiplied by their current error, which
drives the error curve towards equioscillation. Rational fits linearize `P - f * Q` and
reweight by `1 / Q` of the previous iterate (Loeb's method) inside the same loop. Finally the
coefficients are rounded to the target precision one at a time, lowest degree first, refitting
the remaining ones after each rounding.
"""
from __future__ import annotations

import argparse
import math
import pprint
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import mpmath as mp
import numpy as np

mp.mp.dps = 40
LD = np.longdouble
OUTPUT = Path(__file__).resolve().parents[1] / "jaxlite/backends/cpu/vecmath/_coeffs.py"

Fn = Callable[[np.ndarray], np.ndarray]


def ld(value: mp.mpf) -> LD:
    return LD(mp.nstr(value, 30, strip_zeros=False))


def ld_array(values: list) -> np.ndarray:
    return np.array([ld(v) for v in values], dtype=LD)


@dataclass
class Fit:
    """One approximation to fit: see the module docstring for the shape of `value(x)`."""

    name: str
    precision: str                       # "f32" or "f64": what the coefficients round to
    interval: tuple[float, float]
    target: Callable[[mp.mpf], mp.mpf]   # the exact value(x), in mpmath
    degree: int                          # number of coefficients of P
    fixed: Fn = lambda x: np.zeros_like(x)
    factor: Fn = lambda x: np.ones_like(x)
    u: Fn = lambda x: x
    denominator: int = 0                 # coefficients of Q after its constant 1 (rational)
    relative: bool = True                # relative error, else absolute error
    points: int = 2000
    note: str = ""
    weight: Fn | None = None             # extra weight on the error (multiplies relative/abs)
    first: tuple[float, ...] = field(default_factory=tuple)   # leading P coefficients, fixed


def sample_points(fit: Fit) -> np.ndarray:
    a, b = fit.interval
    n = fit.points
    k = np.arange(n, dtype=np.float64)
    cheb = np.cos(np.pi * (k + 0.5) / n)[::-1]
    x = 0.5 * (a + b) + 0.5 * (b - a) * cheb
    x = np.concatenate([[a], x, [b]])
    return np.unique(x.astype(np.float64))


def _round(value: float, precision: str) -> float:
    return float(np.float32(value)) if precision == "f32" else float(value)


class _System:
    """The sample of one fit: reference values, weights and the design matrix, in long double."""

    def __init__(self, fit: Fit):
        self.fit = fit
        x = sample_points(fit)
        self.x = x.astype(LD)
        self.f = ld_array([fit.target(mp.mpf(float(v))) for v in x])
        self.fixed = fit.fixed(self.x)
        self.factor = fit.factor(self.x)
        self.u = fit.u(self.x)
        scale = np.abs(self.f) if fit.relative else np.ones_like(self.f)
        scale = np.where(scale == 0, LD(1), scale)
        self.w = 1 / scale
        if fit.weight is not None:
            self.w = self.w * fit.weight(self.x)
        self.powers = np.stack([self.u ** k for k in range(max(fit.degree, fit.denominator + 1))],
                               axis=1)

    def value(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        num = self.powers[:, :len(p)] @ p
        den = LD(1) + (self.powers[:, 1:len(q) + 1] @ q if len(q) else 0)
        return self.fixed + self.factor * num / den

    def error(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return (self.value(p, q) - self.f) * self.w


def _solve(system: _System, lawson: np.ndarray, p: np.ndarray, q: np.ndarray,
           free_p: np.ndarray, free_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One weighted least-squares step (with two refinements) for the free coefficients."""
    fit = system.fit
    for _ in range(3):
        den = LD(1) + (system.powers[:, 1:len(q) + 1] @ q if len(q) else 0)
        # residual of the linearized equation  fixed + factor * P - f * Q = 0  divided by Q
        g = system.f - system.fixed
        resid = (system.factor * (system.powers[:, :len(p)] @ p) - g * den) / den
        cols = [system.factor * system.powers[:, k] / den for k in range(len(p)) if free_p[k]]
        cols += [-g * system.powers[:, k + 1] / den for k in range(len(q)) if free_q[k]]
        if not cols:
            return p, q
        a = np.stack(cols, axis=1)
        rw = np.sqrt(lawson) * system.w
        a64 = (a * rw[:, None]).astype(np.float64)
        b64 = (-resid * rw).astype(np.float64)
        col_scale = np.sqrt((a64 ** 2).sum(axis=0))
        col_scale[col_scale == 0] = 1
        delta, *_ = np.linalg.lstsq(a64 / col_scale, b64, rcond=None)
        delta = delta / col_scale
        i = 0
        p = p.copy()
        q = q.copy()
        for k in range(len(p)):
            if free_p[k]:
                p[k] += LD(delta[i])
                i += 1
        for k in range(len(q)):
            if free_q[k]:
                q[k] += LD(delta[i])
                i += 1
        if fit.denominator == 0:
            continue
    return p, q


def run_fit(fit: Fit, iterations: int = 80) -> tuple[list[float], list[float], float]:
    """Minimax-fit `fit`; returns (P coefficients, Q coefficients, max weighted error)."""
    system = _System(fit)
    p = np.zeros(fit.degree, dtype=LD)
    q = np.zeros(fit.denominator, dtype=LD)
    free_p = np.ones(fit.degree, dtype=bool)
    free_q = np.ones(fit.denominator, dtype=bool)
    for k, c in enumerate(fit.first):
        p[k] = LD(c)
        free_p[k] = False
    lawson = np.full(len(system.x), 1.0 / len(system.x))
    for _ in range(iterations):
        p, q = _solve(system, lawson, p, q, free_p, free_q)
        err = np.abs(system.error(p, q)).astype(np.float64)
        lawson = lawson * (err + 1e-300)
        lawson /= lawson.sum()
    # round to the target precision one coefficient at a time, refitting the others
    order = [("p", k) for k in range(fit.degree)] + [("q", k) for k in range(fit.denominator)]
    for kind, k in order:
        if kind == "p":
            if free_p[k]:
                p[k] = LD(_round(float(p[k]), fit.precision))
                free_p[k] = False
        else:
            q[k] = LD(_round(float(q[k]), fit.precision))
            free_q[k] = False
        p, q = _solve(system, lawson, p, q, free_p, free_q)
    final = [_round(float(c), fit.precision) for c in p]
    final_q = [_round(float(c), fit.precision) for c in q]
    pe = np.array(final, dtype=LD)
    qe = np.array(final_q, dtype=LD)
    return final, final_q, float(np.max(np.abs(system.error(pe, qe))))


# ---------------------------------------------------------------------------------------------
# The approximations. `mp.mpf` targets; long-double `fixed`, `factor`, `u` on the sample.

FITS: list[Fit] = []


def fits(*items: Fit) -> None:
    FITS.extend(items)


LN2 = math.log(2)


def _margin(v: float) -> float:
    return v * (1 + 1 / 64)


# ---------------------------------------------------------------------------------------------

def write_table(table: dict[str, dict]) -> None:
    lines = [
        '"""Coefficients of the vector math library, generated by tools/fit_vecmath.py.',
        "",
        "Do not edit by hand: change the fit in the script and rerun it. Each entry gives the",
        "coefficients of P (and Q for rational fits) lowest degree first, the interval, and",
        "the fitting error (relative or absolute, as noted) before rounding in the kernel.",
        '"""',
        "",
        "COEFFS: dict[str, dict] = {",
    ]
    for name in sorted(table):
        entry = table[name]
        lines.append(f"    {name!r}: {{")
        for key in ("note", "interval", "error", "p", "q"):
            if key not in entry:
                continue
            value = entry[key]
            if key in ("p", "q"):
                lines.append(f"        {key!r}: (")
                for c in value:
                    lines.append(f"            {c!r},")
                lines.append("        ),")
            else:
                lines.append(f"        {key!r}: {value!r},")
        lines.append("    },")
    lines.append("}")
    OUTPUT.write_text("\n".join(lines) + "\n")


def load_table() -> dict[str, dict]:
    if not OUTPUT.exists():
        return {}
    namespace: dict = {}
    exec(OUTPUT.read_text(), namespace)
    return dict(namespace["COEFFS"])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="fits to redo (default: all)")
    parser.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = parser.parse_args(argv)
    table = load_table()
    chosen = [f for f in FITS if not args.names or f.name in args.names]
    unknown = set(args.names) - {f.name for f in FITS}
    if unknown:
        raise SystemExit(f"unknown fits: {sorted(unknown)}")
    for fit in chosen:
        p, q, err = run_fit(fit)
        eps = 2.0 ** (-24 if fit.precision == "f32" else -53)
        kind = "rel" if fit.relative else "abs"
        print(f"{fit.name:24s} deg {fit.degree:2d}/{fit.denominator:d}  {kind} error "
              f"{err:.3e} = {err / eps:7.3f} eps")
        entry = {"note": fit.note, "interval": tuple(fit.interval),
                 "error": float(f"{err:.3e}"), "p": tuple(p)}
        if q:
            entry["q"] = tuple(q)
        table[fit.name] = entry
    if not args.dry_run:
        write_table(table)


if __name__ == "__main__":
    main(sys.argv[1:])
