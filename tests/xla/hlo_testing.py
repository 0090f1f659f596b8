"""Helpers for tests of HLO passes: modules from a few lines of text, the entry's text for
comparison, arguments rich in IEEE specials, and value comparison bit for bit.

`check(pass_fn, body, expected)` is the text-in, text-out test: it parses `body` as the entry
computation, runs the pass, compares the printed entry with `expected` (layouts left out;
None means the pass must hand back the very module it got), verifies the result and
evaluates both modules on a few argument sets.
"""
from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import parse_module, print_computation
from jaxlite.xla.verifier import verify_module

__all__ = ["ADD", "ADD_AGAIN", "MAX", "arguments", "assert_same_values", "check",
           "entry_lines", "parse"]

ADD = """
%add (add_x: f32[], add_y: f32[]) -> f32[] {
  %add_x = f32[] parameter(0)
  %add_y = f32[] parameter(1)
  ROOT %add_sum = f32[] add(%add_x, %add_y)
}
"""
ADD_AGAIN = ADD.replace("%add ", "%again ").replace("add_", "again_")
MAX = """
%max (max_a: f32[], max_b: f32[]) -> f32[] {
  %max_a = f32[] parameter(0)
  %max_b = f32[] parameter(1)
  ROOT %max_m = f32[] maximum(%max_a, %max_b)
}
"""
_SPECIALS = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.25], np.float32)


def parse(body: str, computations: str = "") -> HloModule:
    """A module whose entry computation holds the instructions `body`."""
    return parse_module(f"HloModule m\n{computations}\nENTRY %main {{\n"
                        f"{textwrap.dedent(body)}\n}}\n")


def _normal(text: str) -> list[str]:
    text = re.sub(r"\]\{[\d,]*\}", "]", text)  # layouts: default everywhere here
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


def entry_lines(module: HloModule) -> list[str]:
    return _normal(print_computation(module.entry))[1:-1]


def arguments(module: HloModule, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    args = []
    for p in module.entry.parameters:
        dtype, dims = p.shape.dtype, p.shape.dims
        if dtype == np.float32:
            args.append(rng.choice(_SPECIALS, size=dims).astype(np.float32))
        elif dtype == np.bool_:
            args.append(rng.integers(0, 2, size=dims).astype(bool))
        else:
            args.append(rng.integers(-5, 6, size=dims).astype(dtype))
    return args


def check(pass_fn: Callable[[HloModule], HloModule], body: str, expected: str | None,
          computations: str = "") -> HloModule:
    """Run `pass_fn` on the module of `body`; compare the entry's text with `expected`
    (None: the pass must return the very module it got) and the values with the input's."""
    before = parse(body, computations)
    after = pass_fn(before)
    if expected is None:
        assert after is before, "the pass changed a module it should have left alone:\n" + \
            "\n".join(entry_lines(after))
        return after
    verify_module(after)
    assert entry_lines(after) == _normal(expected)
    for seed in range(3):
        args = arguments(before, seed)
        assert_same_values(evaluate_module(before, args), evaluate_module(after, args),
                           f"{getattr(pass_fn, '__name__', 'pass')} (seed {seed})")
    return after


def _leaves(value: Any) -> list[np.ndarray]:
    if isinstance(value, tuple):
        return [leaf for part in value for leaf in _leaves(part)]
    return [np.asarray(value)]


def assert_same_values(expected: Any, actual: Any, what: str) -> None:
    """Equal structure, dtypes and shapes; equal bits, except that any NaN equals any NaN."""
    expected, actual = _leaves(expected), _leaves(actual)
    assert len(expected) == len(actual), f"{what}: {len(actual)} outputs, not {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        where = f"{what}, output {i}"
        assert (e.dtype, e.shape) == (a.dtype, a.shape), f"{where}: {a.dtype}{a.shape}"
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(a, e, err_msg=where)
            continue
        nan = np.isnan(e)
        np.testing.assert_array_equal(np.isnan(a), nan, err_msg=f"{where}: NaN positions")
        assert e[~nan].tobytes() == a[~nan].tobytes(), (
            f"{where}: values differ in their bits\nexpected {e}\nactual   {a}")
