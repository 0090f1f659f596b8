"""The reference interpreter of the GPU kernel IR, in numpy: what tests run where no GPU is.

`run_kernel(kernel, buffers, scalars)` runs every thread of the grid on flat numpy arrays
(changed in place), with the semantics a GPU gives and checks a GPU does not make:

- Threads are Python generators. A block runs *phase by phase*: every thread runs until it
  reaches a barrier, then all go on together, so shared memory written before a barrier
  is what the threads read after it. A thread that ends while others of its block wait at
  a barrier, or threads waiting at different barriers, are errors (a hang or undefined
  behaviour on a GPU).
- A shuffle waits for every lane of its warp to reach the same shuffle, then hands each
  lane the value of its source lane; a lane missing (ended, or at another statement) is a
  divergent shuffle, an error.
- Data races are errors: within one phase, two threads of a block touching the same
  shared element where one of them writes; anywhere in the kernel, two threads writing
  the same global element other than through atomics.
- Out-of-bounds accesses, misaligned vector accesses (by index, or by the array's
  address), integer division by zero,
  oversized shifts and float-to-int casts out of range (undefined in C) are errors.
- Shared memory starts as NaN (floats) or a fill pattern, so reading before writing shows.

Blocks run one after another, threads of a block in order of their index.
"""
from __future__ import annotations

from collections.abc import Generator, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.special

from jaxlite.backends.gpu import kernel_ir as ir

__all__ = ["KernelError", "run_kernel"]


class KernelError(RuntimeError):
    """The kernel did something undefined (a race, a divergent barrier, an access out of
    bounds, ...); the message says what, where."""


@lru_cache(maxsize=None)
def _dtype(name: str) -> np.dtype:
    return ir.dtype_of(name)


@lru_cache(maxsize=4096)
def _const(value: Any, dtype: str) -> Any:
    return np.asarray(value).astype(_dtype(dtype))[()]


class _Memory:
    """Global, constant and one block's shared arrays, with the race bookkeeping."""

    def __init__(self, kernel: ir.Kernel, buffers: Mapping[str, np.ndarray]) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        for buffer in kernel.buffers:
            array = buffers.get(buffer.name)
            if array is None:
                raise TypeError(f"kernel {kernel.name} needs buffer {buffer.name!r}")
            if array.ndim != 1 or array.dtype != _dtype(buffer.dtype) or \
                    not array.flags.c_contiguous:
                raise TypeError(f"buffer {buffer.name!r} must be a flat contiguous "
                                f"{buffer.dtype} array, got {array.dtype}{list(array.shape)}")
            self.arrays[buffer.name] = array
        for constant in kernel.constants:
            self.arrays[constant.name] = np.asarray(constant.values, _dtype(constant.dtype))
        self.shared_buffers = kernel.shared
        self.global_writers: dict[tuple[str, int], tuple[int, int]] = {}

    def start_block(self) -> None:
        for buffer in self.shared_buffers:
            dtype = _dtype(buffer.dtype)
            fill = np.nan if dtype.kind == "f" or buffer.dtype == "bfloat16" else 0x5A
            self.arrays[buffer.name] = np.full(buffer.size, fill).astype(dtype)
        self.start_phase()

    def start_phase(self) -> None:
        self.shared_writers: dict[tuple[str, int], int] = {}
        self.shared_readers: dict[tuple[str, int], set[int]] = {}

    def element(self, buffer: ir.Buffer, index: Any, width: int = 1) -> tuple[np.ndarray, int]:
        array = self.arrays[buffer.name]
        i = int(index)
        if i < 0 or i + width > array.size:
            raise KernelError(f"access of {buffer.name}[{i}:{i + width}] out of bounds "
                              f"(size {array.size})")
        if i % width:
            raise KernelError(f"vector access of {width} elements at {buffer.name}[{i}] is "
                              "not aligned")
        if width > 1 and array.ctypes.data % (width * array.itemsize):
            # a GPU faults on a vector access not aligned to its size (an offset view of a
            # larger array, x[1:], starts off the boundary its allocation had)
            raise KernelError(f"vector access of {width} elements at {buffer.name}[{i}] is "
                              f"not aligned: the buffer starts at address "
                              f"{array.ctypes.data:#x}")
        return array, i

    def note_read(self, buffer: ir.Buffer, i: int, thread: "_Thread") -> None:
        if buffer.space != "shared":
            return
        key = (buffer.name, i)
        writer = self.shared_writers.get(key)
        if writer is not None and writer != thread.tid:
            raise KernelError(f"race on shared {buffer.name}[{i}]: thread {thread.tid} reads "
                              f"what thread {writer} wrote in the same phase (no barrier)")
        self.shared_readers.setdefault(key, set()).add(thread.tid)

    def note_write(self, buffer: ir.Buffer, i: int, thread: "_Thread") -> None:
        key = (buffer.name, i)
        if buffer.space == "shared":
            writer = self.shared_writers.get(key)
            readers = self.shared_readers.get(key, set()) - {thread.tid}
            if (writer is not None and writer != thread.tid) or readers:
                other = writer if writer not in (None, thread.tid) else min(readers)
                raise KernelError(f"race on shared {buffer.name}[{i}]: thread {thread.tid} "
                                  f"writes what thread {other} touched in the same phase")
            self.shared_writers[key] = thread.tid
        elif buffer.space == "global":
            me = (thread.block, thread.tid)
            writer = self.global_writers.setdefault(key, me)
            if writer != me:
                raise KernelError(f"race on global {buffer.name}[{i}]: written by block "
                                  f"{writer[0]} thread {writer[1]} and block {me[0]} "
                                  f"thread {me[1]}")
        else:
            raise KernelError(f"store into constant array {buffer.name}")


class _Thread:
    """One thread's registers and position."""

    def __init__(self, tid: int, block: int, kernel: ir.Kernel, memory: _Memory,
                 scalars: Mapping[str, Any]) -> None:
        self.tid, self.block, self.memory = tid, block, memory
        self.builtins = {"thread": np.int32(tid), "block": np.int32(block),
                         "block_dim": np.int32(kernel.block),
                         "grid_dim": np.int32(kernel.grid)}
        self.env: dict[str, Any] = dict(scalars)

    # ------------------------------------------------------------------ expressions
    def eval(self, e: ir.Expr) -> Any:
        kind = type(e)
        if kind is ir.Var:
            try:
                return self.env[e.name]
            except KeyError:
                raise KernelError(f"variable {e.name} read before it is declared") from None
        if kind is ir.Const:
            return _const(e.value, e.dtype)
        if kind is ir.Binary:
            return _binary(e.op, self.eval(e.a), self.eval(e.b))
        if kind is ir.Load:
            array, i = self.memory.element(e.buffer, self.eval(e.index))
            self.memory.note_read(e.buffer, i, self)
            return array[i]
        if kind is ir.Select:  # only the chosen side runs, as C's ?: does
            return self.eval(e.on_true if self.eval(e.cond) else e.on_false)
        if kind is ir.Cast:
            return _cast(self.eval(e.x), e.dtype)
        if kind is ir.Unary:
            return _unary(e.op, self.eval(e.x))
        if kind is ir.Builtin:
            return self.builtins[e.name]
        if kind is ir.Bitcast:
            return np.asarray(self.eval(e.x)).view(_dtype(e.dtype))[()]
        raise TypeError(f"not an expression: {e!r}")

    # ------------------------------------------------------------------- statements
    def run(self, body: tuple) -> Generator:
        """Runs `body`, yielding at barriers and shuffles (a shuffle's value is sent back)."""
        for s in body:
            kind = type(s)
            if kind is ir.Let or kind is ir.Assign:
                self.declare(s.var, self.eval(s.value))
            elif kind is ir.Store:
                self.store(s.buffer, self.eval(s.index), [self.eval(s.value)])
            elif kind is ir.For:
                yield from self.loop(s)
            elif kind is ir.If:
                yield from self.run(s.then if self.eval(s.cond) else s.orelse)
            elif kind is ir.VectorLoad:
                width = len(s.targets)
                array, i = self.memory.element(s.buffer, self.eval(s.index), width)
                for k, target in enumerate(s.targets):
                    self.memory.note_read(s.buffer, i + k, self)
                    self.declare(target, array[i + k])
            elif kind is ir.VectorStore:
                self.store(s.buffer, self.eval(s.index), [self.eval(v) for v in s.values])
            elif kind is ir.Barrier:
                yield s
            elif kind is ir.Shuffle:
                self.declare(s.target, (yield (s, self.eval(s.value))))
            elif kind is ir.AtomicAdd:
                array, i = self.memory.element(s.buffer, self.eval(s.index))
                array[i] = _binary("add", array[i], self._typed(self.eval(s.value),
                                                                s.buffer.dtype))
            elif kind is ir.AtomicUpdate:
                self.atomic_update(s)
            else:
                raise TypeError(f"not a statement: {s!r}")

    def atomic_update(self, s: ir.AtomicUpdate) -> None:
        """Threads run one at a time here, so the read-compute-write cannot be torn."""
        array, i = self.memory.element(s.buffer, self.eval(s.index))
        self.declare(s.old, array[i])
        for event in self.run(s.body):
            raise KernelError(f"{type(event).__name__} inside an atomic update")
        array[i] = self._typed(self.eval(s.new), s.buffer.dtype)

    def loop(self, s: ir.For) -> Generator:
        counter, stop, step = self.eval(s.start), self.eval(s.stop), self.eval(s.step)
        if step <= 0:
            raise KernelError(f"loop over {s.var.name} has step {step}")
        while counter < stop:
            self.env[s.var.name] = np.int32(counter)
            yield from self.run(s.body)
            counter = int(counter) + int(step)

    def declare(self, var: ir.Var, value: Any) -> None:
        self.env[var.name] = self._typed(value, var.dtype)

    def _typed(self, value: Any, dtype: str) -> Any:
        if np.asarray(value).dtype != _dtype(dtype):
            raise KernelError(f"a {np.asarray(value).dtype} value where {dtype} is declared")
        return value

    def store(self, buffer: ir.Buffer, index: Any, values: list) -> None:
        array, i = self.memory.element(buffer, index, len(values))
        for k, value in enumerate(values):
            self.memory.note_write(buffer, i + k, self)
            array[i + k] = self._typed(value, buffer.dtype)


# --------------------------------------------------------------------- scalar semantics

def _c_divmod(a: Any, b: Any) -> tuple[int, int]:
    a, b = int(a), int(b)  # Python integers: exact, and much faster than numpy scalars
    if b == 0:
        raise KernelError("integer division by zero (undefined in C)")
    quotient = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        quotient = -quotient
    return quotient, a - quotient * b


def _shift(a: Any, b: Any, left: bool) -> Any:
    bits = a.dtype.itemsize * 8
    if not 0 <= int(b) < bits:
        raise KernelError(f"shift by {int(b)} of a {bits}-bit value (undefined in C)")
    return np.left_shift(a, b) if left else np.right_shift(a, b)


_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "min": np.minimum, "max": np.maximum, "pow": np.power, "atan2": np.arctan2,
    "copysign": np.copysign, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "shl": lambda a, b: _shift(a, b, True), "shr": lambda a, b: _shift(a, b, False),
}


def _binary(op: str, a: Any, b: Any) -> Any:
    if op == "div" or op == "rem":
        dtype = np.asarray(a).dtype
        if dtype.kind in "iu":
            quotient, remainder = _c_divmod(a, b)
            return _wrap(quotient if op == "div" else remainder, dtype)
        return a / b if op == "div" else np.fmod(a, b)
    result = _BINARY[op](a, b)
    if op in ir.COMPARISONS:
        return np.bool_(result)
    if type(result) is type(a):  # already a scalar of a's type (the common case): as is
        return result
    return np.asarray(result).astype(np.asarray(a).dtype)[()]


def _wrap(value: int, dtype: np.dtype) -> Any:
    bits = dtype.itemsize * 8
    value &= (1 << bits) - 1
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return dtype.type(value)  # in range now, so the scalar type takes it exactly


def _round_half_away(x: Any) -> Any:
    floor = np.floor(np.abs(x))
    rounded = floor + (np.abs(x) - floor >= 0.5)
    return np.copysign(rounded, x)


_UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "expm1": np.expm1, "log": np.log,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt,
    "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "erf": scipy.special.erf,
    "erfc": scipy.special.erfc, "floor": np.floor, "ceil": np.ceil, "rint": np.rint,
    "round": _round_half_away, "isfinite": np.isfinite, "isnan": np.isnan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "lgamma": scipy.special.gammaln, "exp2": np.exp2,
}


def _unary(op: str, x: Any) -> Any:
    dtype = np.asarray(x).dtype
    if op == "not":
        return np.logical_not(x) if dtype == np.bool_ else np.invert(x)
    result = _UNARY[op](x)
    return np.bool_(result) if op in ("isfinite", "isnan") else \
        np.asarray(result).astype(dtype)[()]


def _cast(x: Any, dtype: str) -> Any:
    target = _dtype(dtype)
    if target == np.bool_:
        return np.bool_(x != 0)
    source = np.asarray(x).dtype
    if source.kind == "f" or source == _dtype("bfloat16"):
        if target.kind in "iu":
            info = np.iinfo(target)
            value = float(x)
            if not (np.isfinite(value) and info.min - 1 < value < info.max + 1):
                raise KernelError(f"cast of {value} to {dtype} is out of range "
                                  "(undefined in C)")
            return target.type(int(value))
    if source.kind in "iub" and target.kind in "iu":
        return _wrap(int(x), target)
    return np.asarray(x).astype(target)[()]


# ---------------------------------------------------------------------------- scheduler

def run_kernel(kernel: ir.Kernel, buffers: Mapping[str, np.ndarray],
               scalars: Mapping[str, Any] | None = None) -> None:
    """Runs `kernel` on its grid; `buffers` (flat arrays by parameter name) change in place.
    Raises `KernelError` on undefined behaviour (see the module docstring)."""
    memory = _Memory(kernel, buffers)
    typed = {}
    for param in kernel.params:
        if isinstance(param, ir.Var):
            value = (scalars or {}).get(param.name)
            if value is None:
                raise TypeError(f"kernel {kernel.name} needs scalar {param.name!r}")
            typed[param.name] = _const(value, param.dtype)
    with np.errstate(all="ignore"):
        for block in range(kernel.grid):
            memory.start_block()
            threads = [_Thread(t, block, kernel, memory, typed) for t in range(kernel.block)]
            _run_block(kernel, block, threads, memory)


def _run_block(kernel: ir.Kernel, block: int, threads: list[_Thread],
               memory: _Memory) -> None:
    runs = [t.run(kernel.body) for t in threads]
    waiting: dict[int, Any] = {}  # thread -> the barrier or (shuffle, value) it waits at
    resume: dict[int, Any] = {t: None for t in range(len(threads))}  # ready to go on
    done: set[int] = set()
    while len(done) < len(threads):
        for t, value in resume.items():
            try:
                waiting[t] = runs[t].send(value)
            except StopIteration:
                done.add(t)
        resume = _resolve_shuffles(kernel, waiting) or _resolve_barrier(
            kernel, block, waiting, done, memory)


def _resolve_shuffles(kernel: ir.Kernel, waiting: dict[int, Any]) -> dict[int, Any]:
    """Complete the shuffles whose whole warp has arrived; {} when there is none."""
    width, resume = kernel.warp_size, {}
    for first in range(0, kernel.block, width):
        events = [waiting.get(t) for t in range(first, first + width)]
        if not all(isinstance(e, tuple) for e in events):
            continue
        shuffle = events[0][0]
        if any(e[0] is not shuffle for e in events):
            continue  # diagnosed when nothing else can go on
        values = [e[1] for e in events]
        for lane in range(width):
            if shuffle.kind == "down":
                source = lane + shuffle.offset if lane + shuffle.offset < width else lane
            else:
                source = lane ^ shuffle.offset
            resume[first + lane] = values[source]
            del waiting[first + lane]
    return resume


def _resolve_barrier(kernel: ir.Kernel, block: int, waiting: dict[int, Any],
                     done: set[int], memory: _Memory) -> dict[int, Any]:
    """Release a barrier every thread of the block waits at, or say why none can go on."""
    if not waiting:
        return {}
    where = f"kernel {kernel.name}, block {block}"
    shuffles = sorted(t for t, e in waiting.items() if isinstance(e, tuple))
    if shuffles:
        raise KernelError(f"{where}: divergent shuffle: thread {shuffles[0]} waits at a "
                          "shuffle that not every lane of its warp reaches")
    barriers = {id(e) for e in waiting.values()}
    if done or len(barriers) > 1:
        raise KernelError(f"{where}: divergent barrier: {len(waiting)} threads wait at "
                          f"{len(barriers)} barrier(s) while {len(done)} have ended")
    memory.start_phase()
    resume = {t: None for t in waiting}
    waiting.clear()
    return resume
