"""LLVM IR as text: typed values, constants and a function builder (the CPU backend's
counterpart of XLA's `llvm_ir` helpers, on strings instead of llvm::IRBuilder).

Kernels are emitted as text because it is fast to produce from Python and reads the same in
`Executable.text("llvm")` as in the code that made it. A `Val` is an SSA value (or a literal)
with its HLO element type and its lane count: width 1 is a scalar, which in a vectorized loop
means "the same in every lane" (it is splatted only where a vector operand meets it).

`FunctionBuilder` keeps the current basic block, hands out fresh SSA names, collects stack
slots (`alloca`) for the entry block, so that loop counters and accumulators can live in
memory and LLVM's mem2reg turns them into registers, and offers structured loops and
branches.
"""
from __future__ import annotations

import contextlib
import re
import struct
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from jaxlite.core import dtypes

__all__ = ["Val", "FunctionBuilder", "llvm_elem", "storage_elem", "float_literal", "vec_type",
           "is_float", "is_signed", "is_low_float", "elem_bits", "I64", "literal"]

I64 = np.dtype(np.int64)
_BF16 = np.dtype(dtypes.bfloat16)
_F16 = np.dtype(np.float16)


def is_low_float(dtype: np.dtype) -> bool:
    """float16 and bfloat16: stored narrow, computed in float32 (as XLA's CPU does)."""
    return dtype == _F16 or dtype == _BF16


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == _BF16


def is_signed(dtype: np.dtype) -> bool:
    return dtype.kind == "i"


def llvm_elem(dtype: np.dtype) -> str:
    """The LLVM type a value of `dtype` is computed in (pred: i1; float16/bfloat16: float)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "i1"
    if is_low_float(dtype) or dtype == np.float32:
        return "float"
    if dtype == np.float64:
        return "double"
    if dtype.kind in "iu":
        return f"i{dtype.itemsize * 8}"
    raise NotImplementedError(f"the cpu backend does not compute with {dtype.name} values yet")


def storage_elem(dtype: np.dtype) -> str:
    """The LLVM type a value of `dtype` is stored as in memory (pred: i8; bfloat16: i16)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "i8"
    if dtype == _F16:
        return "half"
    if dtype == _BF16:
        return "i16"
    return llvm_elem(dtype)


def elem_bits(elem: str) -> int:
    return {"float": 32, "double": 64, "half": 16}.get(elem) or int(elem[1:])


def vec_type(elem: str, width: int) -> str:
    return elem if width == 1 else f"<{width} x {elem}>"


def float_literal(value: float, elem: str) -> str:
    """A float constant as LLVM writes it: the bits of the double holding the value (for a
    float, the value rounded to float32 first, so that it is exactly representable)."""
    if elem == "float":
        value = float(np.float32(value))
    bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    return f"0x{bits:016X}"


def literal(value: object, dtype: np.dtype) -> str:
    """The scalar literal of `value` in `dtype`'s compute type."""
    dtype = np.dtype(dtype)
    elem = llvm_elem(dtype)
    if dtype == np.bool_:
        return "true" if bool(value) else "false"
    if elem in ("float", "double"):
        return float_literal(float(value), elem)  # type: ignore[arg-type]
    bits = elem_bits(elem)
    as_int = int(value) & ((1 << bits) - 1)  # type: ignore[call-overload]
    if as_int >= 1 << (bits - 1):
        as_int -= 1 << bits
    return str(as_int)


@dataclass(frozen=True)
class Val:
    """An SSA value or literal: `ref` of element type `elem` in `width` lanes; `dtype` is
    the HLO element type it stands for (signedness, low floats)."""

    ref: str
    elem: str
    width: int
    dtype: np.dtype

    @property
    def ty(self) -> str:
        return vec_type(self.elem, self.width)

    @property
    def typed(self) -> str:
        return f"{self.ty} {self.ref}"

    @property
    def is_literal(self) -> bool:
        return not self.ref.startswith("%")


# The loop attachment of a loop LLVM must not unroll, and the metadata it names, which a
# module holding the attachment defines once (`loop_metadata`). The module's other texts
# define no metadata, so the numbers are free.
NO_UNROLL = ", !llvm.loop !9000"
_NO_UNROLL_METADATA = ('!9000 = distinct !{!9000, !9001}\n'
                       '!9001 = !{!"llvm.loop.unroll.disable"}')


# A call of one of the math library's functions (`@jl_exp_f32x16`, `@jl_log_f64`, ...).
_MATH_CALL = re.compile(r"call [^@]*@jl_[a-z0-9]+_f(32|64)")


def _calls_math(lines: list[str]) -> bool:
    """Whether these lines of a function call a math library function."""
    return any(_MATH_CALL.search(line) for line in lines)


def loop_metadata(texts: list[str]) -> list[str]:
    """The metadata definitions that `texts` (a module's parts) refer to."""
    return [_NO_UNROLL_METADATA] if any(NO_UNROLL in t for t in texts) else []


class FunctionBuilder:
    """One LLVM function under construction.

    Parameters
    ----------
    name : the function's name, without '@'.
    params : (LLVM type with attributes, name without '%') per parameter.
    ret : the return type.
    linkage : e.g. "internal" or "" (external).
    attrs : function attributes after the parameter list.
    """

    def __init__(self, name: str, params: list[tuple[str, str]], ret: str = "void",
                 linkage: str = "internal", attrs: str = "nounwind") -> None:
        self.name = name
        self.params = params
        self.ret = ret
        self.linkage = linkage
        self.attrs = attrs
        self._allocas: list[str] = []
        self._lines: list[str] = []
        self._counter = 0
        self.block = "entry"
        self.terminated = False

    # ----------------------------------------------------------------------- naming
    def fresh(self, hint: str = "t") -> str:
        return "%" + self.label(hint)

    def label(self, hint: str) -> str:
        self._counter += 1
        # A hint ending in a digit gets a dot, or "p1" + 10 would meet "p" + 110.
        return f"{hint}.{self._counter}" if hint[-1:].isdigit() else f"{hint}{self._counter}"

    # --------------------------------------------------------------------- emission
    def op(self, text: str, hint: str = "t") -> str:
        """Emit `%new = text` and return `%new`."""
        name = self.fresh(hint)
        self._lines.append(f"  {name} = {text}")
        return name

    def do(self, text: str) -> None:
        """Emit an instruction without a result."""
        self._lines.append(f"  {text}")

    def comment(self, text: str) -> None:
        self._lines.append(f"  ; {text}")

    def alloca(self, ty: str, align: int = 64, hint: str = "slot") -> str:
        """A stack slot in the entry block (promoted to registers by mem2reg)."""
        name = self.fresh(hint)
        self._allocas.append(f"  {name} = alloca {ty}, align {align}")
        return name

    def start(self, label: str) -> None:
        """Begin block `label` (the previous block must have ended with a branch)."""
        self._lines.append(f"{label}:")
        self.block = label

    def br(self, label: str) -> None:
        self._lines.append(f"  br label %{label}")

    def cond_br(self, cond: str, if_true: str, if_false: str) -> None:
        self._lines.append(f"  br i1 {cond}, label %{if_true}, label %{if_false}")

    def ret_void(self) -> None:
        self._lines.append("  ret void")

    # ------------------------------------------------------------------ structures
    @contextlib.contextmanager
    def loop(self, start: str, end: str, step: int | str = 1, hint: str = "i",
             unroll: bool = True) -> Iterator[str]:
        """`for (i = start; i < end; i += step)` on i64; yields `i` inside the body.
        `unroll=False` asks LLVM not to unroll it (`NO_UNROLL`), as does a body that calls
        the math library: its time goes to the math, so unrolled copies bought no speed
        (softmax, layernorm, gelu, an MLP gradient: same CPU time) while LLVM's full
        unrolling of short loops multiplied the inlined math (a cross-entropy's loop of 10
        classes with a log inside: -O3 on the MLP train step's module 137 -> 84 ms)."""
        slot = self.alloca("i64", 8, hint + ".addr")
        self.do(f"store i64 {start}, ptr {slot}, align 8")
        head, body, done = self.label(hint + ".head"), self.label(hint + ".body"), \
            self.label(hint + ".done")
        self.br(head)
        self.start(head)
        index = self.op(f"load i64, ptr {slot}, align 8", hint)
        cond = self.op(f"icmp slt i64 {index}, {end}", hint + ".more")
        self.cond_br(cond, body, done)
        self.start(body)
        first_line = len(self._lines)
        yield index
        nxt = self.op(f"add nuw nsw i64 {index}, {step}", hint + ".next")
        self.do(f"store i64 {nxt}, ptr {slot}, align 8")
        if unroll and not _calls_math(self._lines[first_line:]):
            self.br(head)
        else:
            self._lines.append(f"  br label %{head}{NO_UNROLL}")
        self.start(done)

    @contextlib.contextmanager
    def if_then(self, cond: str, hint: str = "if") -> Iterator[None]:
        """Run the body only when the i1 `cond` holds."""
        then, done = self.label(hint + ".then"), self.label(hint + ".end")
        self.cond_br(cond, then, done)
        self.start(then)
        yield
        self.br(done)
        self.start(done)

    # ---------------------------------------------------------------------- output
    def text(self) -> str:
        params = ", ".join(f"{ty} %{name}" for ty, name in self.params)
        linkage = f"{self.linkage} " if self.linkage else ""
        head = f"define {linkage}{self.ret} @{self.name}({params}) {self.attrs} {{"
        return "\n".join([head, "entry:", *self._allocas, *self._lines, "}"]) + "\n"
