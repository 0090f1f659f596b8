"""The pass pipeline: the passes every backend runs on a module, in order (mirrors XLA's
`HloPassPipeline` and `HloPassFix`, and its `--xla_dump_to` flag).

`PIPELINE` is the order, readable on one screen. `fixed_point(*passes)` makes a group that
repeats until a whole round changes nothing. `optimize(module, options)` runs the pipeline;
it can verify the module after every pass, and when a dump folder is set (the option
`dump_dir`, else `jaxlite.config.jaxlite_dump_dir`, from `JAXLITE_DUMP_DIR`) it writes the
module's text before the first pass and after every pass as `<module>.<NNNN>.<pass>.txt`:
`NNNN` counts from 0000 (`input`) in the order the passes ran, passes inside a fixed point
included, so a folder sorts into the history of one compilation. A later compilation of a
module with the same name writes over the same files. Backends add what they make of the
optimized module through `write_dump` (`<module>.<stage>`, e.g. the cpu backend's
`jit_f.buffer-assignment.txt`, `jit_f.ir-no-opt.ll`, `jit_f.s`), listed after the passes.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from jaxlite.errors import warn_at_user
from jaxlite import monitoring
from jaxlite.config import config
from jaxlite.xla.ir import HloModule
from jaxlite.xla.passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
    simplify_algebra,
)
from jaxlite.xla.passes.call_inliner import inline_calls
from jaxlite.xla.passes.conv_canonicalization import canonicalize_convolutions
from jaxlite.xla.passes.cumulative_scan import scan_in_blocks
from jaxlite.xla.passes.fusion import fuse
from jaxlite.xla.passes.layout_assignment import assign_layouts
from jaxlite.xla.passes.reciprocal_division import divide_by_reciprocals
from jaxlite.xla.passes.scheduling import schedule
from jaxlite.xla.passes.tiling import assign_tiling
from jaxlite.xla.text import print_module
from jaxlite.xla.verifier import HloVerificationError, verify_module

__all__ = [
    "PASS_EVENT",
    "PIPELINE",
    "SIMPLIFY",
    "FixedPoint",
    "Pass",
    "PipelineOptions",
    "dump_folder",
    "fixed_point",
    "optimize",
    "pass_name",
    "run_pass",
    "write_dump",
]

Pass = Callable[[HloModule], HloModule]
# The monitoring time span of each pass run (metadata: pass_name=, module=).
PASS_EVENT = "/jaxlite/compile/hlo_pass"
# Told the name of each pass that ran and the module it returned.
AfterPass = Callable[[str, HloModule], None]


def pass_name(p: Any) -> str:
    """The name a pass goes by in dumps and errors (a function's own name)."""
    return getattr(p, "name", None) or getattr(p, "__name__", None) or type(p).__name__


class FixedPoint:
    """A group of passes run in order, again and again, until a round changes nothing
    (mirrors XLA's HloPassFix). Callable as a pass; returns the same module object when the
    first round changed nothing."""

    def __init__(self, passes: Sequence[Pass], max_iterations: int, name: str) -> None:
        if not passes:
            raise ValueError(f"fixed_point {name!r}: needs at least one pass")
        if max_iterations < 1:
            raise ValueError(f"fixed_point {name!r}: max_iterations must be >= 1, got "
                             f"{max_iterations}")
        self.passes = tuple(passes)
        self.max_iterations = max_iterations
        self.name = name

    def __call__(self, module: HloModule) -> HloModule:
        return self.run(module)

    def run(self, module: HloModule, after_pass: AfterPass | None = None) -> HloModule:
        """Run rounds until nothing changes, telling `after_pass` about each inner pass."""
        for _ in range(self.max_iterations):
            start = module
            for p in self.passes:
                module = run_pass(p, module, after_pass)
            if module is start:
                return module
        warn_at_user(f"fixed_point {self.name!r} still changed the module "
                      f"{module.name} after {self.max_iterations} rounds; stopping there "
                      "(two of its passes may undo each other)", RuntimeWarning)
        return module

    def __repr__(self) -> str:
        inner = ", ".join(pass_name(p) for p in self.passes)
        return f"fixed_point({inner}, max_iterations={self.max_iterations}, name={self.name!r})"


def fixed_point(*passes: Pass, max_iterations: int = 25, name: str | None = None
                ) -> FixedPoint:
    """Repeat `passes`, in order, until a whole round returns the module it was given."""
    return FixedPoint(passes, max_iterations,
                      name or "fixed_point(" + ",".join(pass_name(p) for p in passes) + ")")


def run_pass(p: Pass, module: HloModule, after_pass: AfterPass | None = None) -> HloModule:
    """Run one pass (or fixed-point group) and report each pass that ran to `after_pass`.
    Each run is also a monitoring time span (`PASS_EVENT`), which trace captures show."""
    start = time.time()  # (monitoring's time spans are seconds since the epoch)
    if isinstance(p, FixedPoint):
        result = p.run(module, after_pass)
    else:
        result = p(module)
        if not isinstance(result, HloModule):
            raise TypeError(f"pass {pass_name(p)} returned {type(result).__name__}, expected "
                            "an HloModule (the same object when it changed nothing)")
        if after_pass is not None:
            after_pass(pass_name(p), result)
    monitoring.record_event_time_span(PASS_EVENT, start, time.time(), pass_name=pass_name(p),
                                      module=module.name)
    return result


# The simplification passes feed each other (folding exposes identities, identities expose
# common subexpressions, all of them leave dead code), so they run to a fixed point.
SIMPLIFY = fixed_point(simplify_algebra, fold_constants, eliminate_common_subexpressions,
                       eliminate_dead_code, name="simplify")

PIPELINE: tuple[Pass, ...] = (
    inline_calls,    # nested jit, checkpoint and custom rules lower to calls: see through them
    canonicalize_convolutions,  # the dimension orders the GEMM kernels read; transposes around
    SIMPLIFY,
    scan_in_blocks,  # cumsum & co.: a window as long as the axis becomes a scan of blocks
    divide_by_reciprocals,  # XLA's x / c -> x * (1 / c): JAX's numbers, not the exact quotient
    assign_layouts,  # before fusion, as XLA's CPU pipeline: tiling reads the layouts
    fuse,            # loop, input (row), output (epilogue into dot), multi-output fusion
    assign_tiling,   # tiling decisions recorded on each fusion, for the code generators
    schedule,        # an instruction order that keeps peak live memory low
)
# Buffer assignment (xla/buffer_assignment.py) is an analysis of the scheduled module, run by
# the backends when they compile: it rewrites nothing.


@dataclass(frozen=True)
class PipelineOptions:
    """How `optimize` runs.

    verify : run the HLO verifier on the input and after every pass.
    dump_dir : folder for the per-pass dumps; None reads `jaxlite_dump_dir`.
    passes : the passes to run instead of `PIPELINE` (a backend's own tail, a test's subset).
    """

    verify: bool = False
    dump_dir: str | None = None
    passes: tuple[Pass, ...] | None = None


_OPTION_NAMES = tuple(f.name for f in fields(PipelineOptions))


def _as_options(options: Any) -> PipelineOptions:
    """`PipelineOptions` from None, a mapping of its fields, or any object with some of its
    fields as attributes (a backend's compile options, say)."""
    if options is None or isinstance(options, PipelineOptions):
        return options or PipelineOptions()
    if isinstance(options, Mapping):
        unknown = sorted(set(options) - set(_OPTION_NAMES))
        if unknown:
            raise TypeError(f"optimize: unknown pipeline options {unknown}; the options are "
                            f"{list(_OPTION_NAMES)}")
        values = dict(options)
    else:
        values = {n: getattr(options, n) for n in _OPTION_NAMES if hasattr(options, n)}
    if values.get("passes") is not None:
        values["passes"] = tuple(values["passes"])
    return PipelineOptions(**values)


def _file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def dump_folder(options: Any = None) -> str | None:
    """The folder dumps go to: the options' `dump_dir`, else `jaxlite_dump_dir`
    (`JAXLITE_DUMP_DIR`); None when dumping is off."""
    folder = getattr(options, "dump_dir", None)
    return folder or config.read("jaxlite_dump_dir") or None


def write_dump(folder: str, module_name: str, stage: str, text: str) -> str:
    """Write `text` to `<module>.<stage>` in `folder` (made if missing) and return the path.

    A backend names what it makes of the optimized module by stage and extension
    ("buffer-assignment.txt", "ir-no-opt.ll", "s"): those names sort after the numbered
    pass dumps of the same module, so a folder lists a compilation in the order it ran.
    """
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{_file_part(module_name)}.{_file_part(stage)}")
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    return path


class _Observer:
    """What happens after each pass: verification and the numbered dump files."""

    def __init__(self, module: HloModule, verify: bool, dump_dir: str | None) -> None:
        self.prefix = _file_part(module.name)
        self.verify = verify
        self.dump_dir = dump_dir
        self.count = 0
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)

    def __call__(self, name: str, module: HloModule) -> None:
        if self.verify:
            try:
                verify_module(module)
            except HloVerificationError as error:
                stage = "the input" if name == "input" else f"pass {name}"
                raise HloVerificationError(f"module {module.name} is not valid HLO after "
                                           f"{stage}: {error}") from error
        if self.dump_dir:
            file = f"{self.prefix}.{self.count:04d}.{_file_part(name)}.txt"
            with open(os.path.join(self.dump_dir, file), "w", encoding="utf-8") as out:
                out.write(print_module(module))
        self.count += 1


def optimize(module: HloModule, options: Any = None) -> HloModule:
    """Run the pass pipeline on `module` and return the optimized module.

    Parameters
    ----------
    module : the module as lowered.
    options : None, a `PipelineOptions`, a mapping of its fields, or an object with some of
        them as attributes (a backend's `CompileOptions` carries `verify` and `dump_dir`).

    Returns
    -------
    HloModule
        The optimized module; `module` itself when no pass changed anything.

    Raises
    ------
    HloVerificationError
        With `verify`, when the input or the result of a pass is not valid HLO (the message
        names the pass).
    """
    opts = _as_options(options)
    dump_dir = opts.dump_dir if opts.dump_dir is not None else config.jaxlite_dump_dir
    observer = _Observer(module, opts.verify, dump_dir)
    observer("input", module)
    for p in PIPELINE if opts.passes is None else opts.passes:
        module = run_pass(p, module, observer)
    return module
