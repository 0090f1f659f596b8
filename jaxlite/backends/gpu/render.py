"""Rendering a kernel of the kernel IR as CUDA C or HIP C, from one source.

`render(kernel, dialect)` gives a whole translation unit: `#define JL_HIP 0|1`, the header
of `render_header` (the only place the dialects differ), the kernel's constant arrays and
the kernel, `extern "C"` so that NVRTC / hiprtc name it as the IR does. `render_many`
puts several kernels in one unit (one compiler run for all of them).

Math functions take their float32 names (expf, tanhf, ...) or float64 names (exp, tanh);
16-bit floats never meet arithmetic (the IR computes them as float32) and only cross
casts, through the header's conversion macros. Buffers are `__restrict__`: the launcher
never passes overlapping arrays to one kernel.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.render_header import HEADER

__all__ = ["C_TYPES", "render", "render_many"]

DIALECTS = ("cuda", "hip")
C_TYPES = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long", "float16": "jl_f16",
    "bfloat16": "jl_bf16", "float32": "float", "float64": "double",
}
_VECTOR_TYPES = {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short"}
_CAS_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
              8: "unsigned long long"}
_BUILTINS = {"thread": "((int)threadIdx.x)", "block": "((int)blockIdx.x)",
             "block_dim": "((int)blockDim.x)", "grid_dim": "((int)gridDim.x)"}
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=",
          "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "shl": "<<", "shr": ">>"}
_BITWISE = {"and": ("&", "&&"), "or": ("|", "||"), "xor": ("^", "!=")}
# IR op -> C math function of double; float32 adds the suffix f.
_MATH = {"exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "sqrt": "sqrt",
         "rsqrt": "rsqrt", "cbrt": "cbrt", "tanh": "tanh", "sin": "sin", "cos": "cos",
         "tan": "tan", "erf": "erf", "erfc": "erfc", "floor": "floor", "ceil": "ceil",
         "rint": "rint", "round": "round", "abs": "fabs", "asin": "asin", "acos": "acos",
         "atan": "atan", "sinh": "sinh", "cosh": "cosh", "asinh": "asinh",
         "acosh": "acosh", "atanh": "atanh", "lgamma": "lgamma", "exp2": "exp2",
         "pow": "pow", "atan2": "atan2", "copysign": "copysign", "rem": "fmod"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SIXTEEN_BIT = {"bfloat16": "BF16", "float16": "F16"}


def render(kernel: ir.Kernel, dialect: str = "cuda") -> str:
    """The CUDA C (`dialect="cuda"`) or HIP C (`"hip"`) source of `kernel`."""
    return render_many([kernel], dialect)


def render_many(kernels: Iterable[ir.Kernel], dialect: str = "cuda") -> str:
    """One translation unit holding every kernel of `kernels` (names must differ)."""
    if dialect not in DIALECTS:
        raise ValueError(f"dialect {dialect!r} is not one of {DIALECTS}")
    parts = [f"#define JL_HIP {int(dialect == 'hip')}", HEADER]
    for kernel in kernels:
        parts.extend(_constant_array(c) for c in kernel.constants)
        parts.append(_Renderer(kernel).kernel())
    return "\n".join(parts)


def _name(name: str) -> str:
    if not _IDENTIFIER.match(name):
        raise ValueError(f"{name!r} is not a C identifier")
    return name


def _constant_array(buffer: ir.Buffer) -> str:
    if buffer.dtype in _SIXTEEN_BIT:
        raise TypeError(f"constant array {buffer.name} of {buffer.dtype}: keep constants "
                        "in their float32 computing type")
    values = ", ".join(_static_literal(v, buffer.dtype) for v in buffer.values)
    return (f"__device__ const {C_TYPES[buffer.dtype]} {_name(buffer.name)}"
            f"[{len(buffer.values)}] = {{{values}}};")


def _static_literal(value: object, dtype: str) -> str:
    """`literal`, but a constant expression (initializers of `__device__` arrays cannot
    call the bit-cast intrinsics JL_NAN_* and JL_INF_* use, and NVRTC knows no
    __builtin_nan / __builtin_inf): a non-finite float is its bits, bit-cast at compile
    time, so a NaN keeps its sign and payload too."""
    if dtype in ("float32", "float64") and not math.isfinite(float(value)):
        bits = np.array(value, dtype).view(np.uint32 if dtype == "float32" else np.uint64)
        ctype, suffix = ("float", "u") if dtype == "float32" else ("double", "ull")
        return f"__builtin_bit_cast({ctype}, {int(bits):#x}{suffix})"
    return literal(value, dtype)


def literal(value: object, dtype: str) -> str:
    """A C expression of type `dtype` with the exact value `value`."""
    if dtype == "bool":
        return "true" if value else "false"
    if dtype in _SIXTEEN_BIT:
        return f"JL_F32_TO_{_SIXTEEN_BIT[dtype]}({literal(value, 'float32')})"
    if dtype in ("float32", "float64"):
        # a float32 constant is its value rounded to float32 (as the interpreter reads
        # it): the literal is then exact, with no rounding left to the C compiler
        with np.errstate(over="ignore"):  # (beyond float32's range is its infinity)
            x = float(np.float32(value)) if dtype == "float32" else float(value)
        bits = "F32" if dtype == "float32" else "F64"
        if math.isnan(x):
            return f"JL_NAN_{bits}"
        if math.isinf(x):
            return f"JL_INF_{bits}" if x > 0 else f"(-JL_INF_{bits})"
        text = x.hex()  # exact: C99 hexadecimal floating literal
        return f"{text}f" if dtype == "float32" else text
    number = int(value)
    if dtype == "int32" and -2**31 < number < 2**31:
        return str(number) if number >= 0 else f"({number})"
    suffix = "ull" if dtype == "uint64" else "ll"
    return f"(({C_TYPES[dtype]}){number}{suffix})"


class _Renderer:
    """Writes one kernel; `lines` grows as statements are rendered."""

    def __init__(self, kernel: ir.Kernel) -> None:
        self.kernel_ir = kernel
        self.lines: list[str] = []
        self.written = _stored_buffers(kernel.body)
        self.fresh = 0

    def kernel(self) -> str:
        k = self.kernel_ir
        params = ", ".join(self.parameter(p) for p in k.params)
        self.lines.append(f'extern "C" __global__ void __launch_bounds__({k.block}) '
                          f"{_name(k.name)}({params}) {{")
        for buffer in k.shared:
            self.lines.append(f"  __shared__ {C_TYPES[buffer.dtype]} "
                              f"{_name(buffer.name)}[{buffer.size}];")
        self.block(k.body, 1)
        self.lines.append("}")
        return "\n".join(self.lines)

    def parameter(self, p: ir.Buffer | ir.Var) -> str:
        if isinstance(p, ir.Var):
            return f"{C_TYPES[p.dtype]} {_name(p.name)}"
        const = "" if p.name in self.written else "const "
        return f"{const}{C_TYPES[p.dtype]}* __restrict__ {_name(p.name)}"

    # ------------------------------------------------------------------ statements
    def block(self, body: tuple, depth: int) -> None:
        for s in body:
            self.statement(s, depth)

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def statement(self, s: ir.Stmt, depth: int) -> None:
        e = self.expr
        if isinstance(s, ir.Let):
            self.emit(depth, f"{C_TYPES[s.var.dtype]} {_name(s.var.name)} = {e(s.value)};")
        elif isinstance(s, ir.Assign):
            self.emit(depth, f"{_name(s.var.name)} = {e(s.value)};")
        elif isinstance(s, ir.Store):
            self.emit(depth, f"{s.buffer.name}[{e(s.index)}] = {e(s.value)};")
        elif isinstance(s, ir.For):
            self.loop(s, depth)
        elif isinstance(s, ir.If):
            self.emit(depth, f"if ({e(s.cond)}) {{")
            self.block(s.then, depth + 1)
            if s.orelse:
                self.emit(depth, "} else {")
                self.block(s.orelse, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, ir.Barrier):
            self.emit(depth, "__syncthreads();")
        elif isinstance(s, ir.Shuffle):
            macro = "JL_SHFL_DOWN" if s.kind == "down" else "JL_SHFL_XOR"
            self.emit(depth, f"{C_TYPES[s.target.dtype]} {_name(s.target.name)} = "
                             f"{macro}({e(s.value)}, {int(s.offset)});")
        elif isinstance(s, ir.AtomicAdd):
            self.emit(depth, f"atomicAdd(&{s.buffer.name}[{e(s.index)}], {e(s.value)});")
        elif isinstance(s, ir.AtomicUpdate):
            self.atomic_update(s, depth)
        elif isinstance(s, (ir.VectorLoad, ir.VectorStore)):
            self.vector_access(s, depth)
        else:
            raise TypeError(f"not a statement: {s!r}")

    def atomic_update(self, s: ir.AtomicUpdate, depth: int) -> None:
        """A compare-and-swap loop on the element's bits: retry until no other thread
        changed the element between our read and our swap."""
        ctype = C_TYPES[s.buffer.dtype]
        bits = _CAS_TYPES[ir.dtype_of(s.buffer.dtype).itemsize]
        self.fresh += 1
        address, seen, want = (f"jl_addr{self.fresh}", f"jl_seen{self.fresh}",
                               f"jl_want{self.fresh}")
        self.emit(depth, f"{{ {bits}* {address} = reinterpret_cast<{bits}*>("
                         f"&{s.buffer.name}[{self.expr(s.index)}]);")
        self.emit(depth + 1, f"{bits} {seen} = *{address}, {want};")
        self.emit(depth + 1, "do {")
        self.emit(depth + 2, f"{want} = {seen};")
        self.emit(depth + 2, f"const {ctype} {_name(s.old.name)} = "
                             f"*reinterpret_cast<const {ctype}*>(&{want});")
        self.block(s.body, depth + 2)
        self.emit(depth + 2, f"const {ctype} jl_new{self.fresh} = {self.expr(s.new)};")
        swap = "atomicCAS" if ir.dtype_of(s.buffer.dtype).itemsize >= 4 else "jl_cas_narrow"
        self.emit(depth + 2, f"{seen} = {swap}({address}, {want}, "
                             f"*reinterpret_cast<const {bits}*>(&jl_new{self.fresh}));")
        self.emit(depth + 1, f"}} while ({seen} != {want});")
        self.emit(depth, "}")

    def loop(self, s: ir.For, depth: int) -> None:
        # stop and step are evaluated once, as the IR defines (and the interpreter runs) it
        v = _name(s.var.name)
        self.emit(depth, f"{{ const int {v}_stop = {self.expr(s.stop)}; "
                         f"const int {v}_step = {self.expr(s.step)};")
        self.emit(depth, f"for (int {v} = {self.expr(s.start)}; {v} < {v}_stop; "
                         f"{v} += {v}_step) {{")
        self.block(s.body, depth + 1)
        self.emit(depth, "}}")

    def vector_access(self, s: ir.VectorLoad | ir.VectorStore, depth: int) -> None:
        ctype = C_TYPES[s.buffer.dtype]
        width = len(s.targets) if isinstance(s, ir.VectorLoad) else len(s.values)
        vector = _VECTOR_TYPES[width * ir.dtype_of(s.buffer.dtype).itemsize]
        self.fresh += 1
        lanes = f"jl_lanes{self.fresh}"
        address = f"&{s.buffer.name}[{self.expr(s.index)}]"
        if isinstance(s, ir.VectorLoad):
            names = ", ".join(_name(t.name) for t in s.targets)
            self.emit(depth, f"{ctype} {names};")
            self.emit(depth, f"{{ alignas(16) {ctype} {lanes}[{width}];")
            self.emit(depth + 1, f"*reinterpret_cast<{vector}*>({lanes}) = "
                                 f"*reinterpret_cast<const {vector}*>({address});")
            for k, t in enumerate(s.targets):
                self.emit(depth + 1, f"{t.name} = {lanes}[{k}];")
        else:
            values = ", ".join(self.expr(v) for v in s.values)
            self.emit(depth, f"{{ alignas(16) {ctype} {lanes}[{width}] = {{{values}}};")
            self.emit(depth + 1, f"*reinterpret_cast<{vector}*>({address}) = "
                                 f"*reinterpret_cast<const {vector}*>({lanes});")
        self.emit(depth, "}")

    # ----------------------------------------------------------------- expressions
    def expr(self, x: ir.Expr) -> str:
        if isinstance(x, ir.Var):
            return _name(x.name)
        if isinstance(x, ir.Const):
            return literal(x.value, x.dtype)
        if isinstance(x, ir.Builtin):
            return _BUILTINS[x.name]
        if isinstance(x, ir.Load):
            return f"{x.buffer.name}[{self.expr(x.index)}]"
        if isinstance(x, ir.Select):
            return (f"({self.expr(x.cond)} ? {self.expr(x.on_true)} : "
                    f"{self.expr(x.on_false)})")
        if isinstance(x, ir.Cast):
            return self.cast(x)
        if isinstance(x, ir.Bitcast):
            return f"jl_bitcast<{C_TYPES[x.dtype]}>({self.expr(x.x)})"
        if isinstance(x, ir.Unary):
            return self.unary(x)
        if isinstance(x, ir.Binary):
            return self.binary(x)
        raise TypeError(f"not an expression: {x!r}")

    def cast(self, x: ir.Cast) -> str:
        source, target, inner = x.x.dtype, x.dtype, self.expr(x.x)
        if source == target:
            return inner
        if source in _SIXTEEN_BIT:
            inner, source = f"JL_{_SIXTEEN_BIT[source]}_TO_F32({inner})", "float32"
            if target == "float32":
                return inner
        if target in _SIXTEEN_BIT:
            as_float = inner if source == "float32" else f"static_cast<float>({inner})"
            return f"JL_F32_TO_{_SIXTEEN_BIT[target]}({as_float})"
        return f"static_cast<{C_TYPES[target]}>({inner})"

    def unary(self, x: ir.Unary) -> str:
        arg, dtype = self.expr(x.x), x.x.dtype
        if x.op == "neg":
            return f"(-{arg})"
        if x.op == "not":
            return f"(!{arg})" if dtype == "bool" else f"(~{arg})"
        if x.op in ("isfinite", "isnan"):
            return f"{x.op}({arg})"
        if x.op == "abs" and dtype not in ("float32", "float64"):
            return f"jl_abs({arg})"
        return f"{self.math(x.op, dtype)}({arg})"

    def binary(self, x: ir.Binary) -> str:
        a, b, dtype = self.expr(x.a), self.expr(x.b), x.a.dtype
        floating = dtype in ("float32", "float64")
        if x.op in ("min", "max"):
            return f"jl_{x.op}<{C_TYPES[dtype]}>({a}, {b})"
        if x.op in _BITWISE:
            int_op, bool_op = _BITWISE[x.op]
            text = f"({a} {bool_op if dtype == 'bool' else int_op} {b})"
        elif x.op == "rem" and not floating:
            text = f"({a} % {b})"
        elif x.op in _INFIX:
            text = f"({a} {_INFIX[x.op]} {b})"
        else:
            return f"{self.math(x.op, dtype)}({a}, {b})"
        # C promotes narrow integers to int: bring results back to their type
        if dtype in ("int8", "int16", "uint8", "uint16") and x.op not in ir.COMPARISONS:
            return f"static_cast<{C_TYPES[dtype]}>{text}"
        return text

    def math(self, op: str, dtype: str) -> str:
        if dtype not in ("float32", "float64"):
            raise TypeError(f"{op} of {dtype}: math functions take float32 or float64 "
                            "(16-bit floats are computed as float32)")
        return _MATH[op] + ("f" if dtype == "float32" else "")


def _stored_buffers(body: tuple) -> set[str]:
    """Names of the buffers `body` writes (the others are `const` parameters)."""
    names: set[str] = set()
    for s in body:
        if isinstance(s, (ir.Store, ir.VectorStore, ir.AtomicAdd, ir.AtomicUpdate)):
            names.add(s.buffer.name)
        elif isinstance(s, ir.For):
            names |= _stored_buffers(s.body)
        elif isinstance(s, ir.If):
            names |= _stored_buffers(s.then) | _stored_buffers(s.orelse)
    return names
