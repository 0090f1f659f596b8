"""The opcode table: one row per HLO operation (mirrors XLA's HloOpcode).

Each row gives the text name used by the printer and parser, the number of operands (None
for variadic), and the kind that fusion and code generation reason about. A few opcodes that
XLA expands into sequences (asin, lgamma, erf-inv, ...) are kept whole here, marked
`extension`, because our backends implement them directly with their own math library.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(enum.Enum):
    ELEMENTWISE = "elementwise"  # output[i] depends on operand[i] only
    MOVEMENT = "movement"        # moves or replicates elements: broadcast, slice, ...
    REDUCTION = "reduction"      # reduce, reduce-window, select-and-scatter
    CONTRACTION = "contraction"  # dot, convolution
    CONTROL = "control"          # while, conditional, call, fusion, custom-call
    STRUCTURAL = "structural"    # parameter, constant, tuple, get-tuple-element
    COLLECTIVE = "collective"    # exchanges values between devices, or asks which one runs


@dataclass(frozen=True)
class OpcodeInfo:
    text: str
    arity: int | None
    kind: Kind
    extension: bool = False


_E, _M, _R, _C, _X, _S, _K = (Kind.ELEMENTWISE, Kind.MOVEMENT, Kind.REDUCTION,
                              Kind.CONTRACTION, Kind.CONTROL, Kind.STRUCTURAL, Kind.COLLECTIVE)


class Opcode(enum.Enum):
    """Every HLO operation jaxlite knows; `.value` is its `OpcodeInfo`."""

    # elementwise, unary
    ABS = OpcodeInfo("abs", 1, _E)
    CBRT = OpcodeInfo("cbrt", 1, _E)
    CEIL = OpcodeInfo("ceil", 1, _E)
    CONVERT = OpcodeInfo("convert", 1, _E)
    COS = OpcodeInfo("cosine", 1, _E)
    ERF = OpcodeInfo("erf", 1, _E)
    EXP = OpcodeInfo("exponential", 1, _E)
    EXPM1 = OpcodeInfo("exponential-minus-one", 1, _E)
    FLOOR = OpcodeInfo("floor", 1, _E)
    IMAG = OpcodeInfo("imag", 1, _E)
    IS_FINITE = OpcodeInfo("is-finite", 1, _E)
    LOG = OpcodeInfo("log", 1, _E)
    LOG1P = OpcodeInfo("log-plus-one", 1, _E)
    LOGISTIC = OpcodeInfo("logistic", 1, _E)
    NEGATE = OpcodeInfo("negate", 1, _E)
    NOT = OpcodeInfo("not", 1, _E)
    POPCNT = OpcodeInfo("popcnt", 1, _E)
    # rounds to a narrower float format (exponent_bits, mantissa_bits), same element type
    REDUCE_PRECISION = OpcodeInfo("reduce-precision", 1, _E)
    REAL = OpcodeInfo("real", 1, _E)
    ROUND_AFZ = OpcodeInfo("round-nearest-afz", 1, _E)
    ROUND_EVEN = OpcodeInfo("round-nearest-even", 1, _E)
    RSQRT = OpcodeInfo("rsqrt", 1, _E)
    SIGN = OpcodeInfo("sign", 1, _E)
    SIN = OpcodeInfo("sine", 1, _E)
    SQRT = OpcodeInfo("sqrt", 1, _E)
    TAN = OpcodeInfo("tan", 1, _E)
    TANH = OpcodeInfo("tanh", 1, _E)
    # elementwise, unary, implemented directly by our backends (XLA expands these)
    ACOS = OpcodeInfo("acos", 1, _E, extension=True)
    ACOSH = OpcodeInfo("acosh", 1, _E, extension=True)
    ASIN = OpcodeInfo("asin", 1, _E, extension=True)
    ASINH = OpcodeInfo("asinh", 1, _E, extension=True)
    ATAN = OpcodeInfo("atan", 1, _E, extension=True)
    ATANH = OpcodeInfo("atanh", 1, _E, extension=True)
    COSH = OpcodeInfo("cosh", 1, _E, extension=True)
    SINH = OpcodeInfo("sinh", 1, _E, extension=True)
    EXP2 = OpcodeInfo("exponential2", 1, _E, extension=True)
    ERFC = OpcodeInfo("erfc", 1, _E, extension=True)
    ERF_INV = OpcodeInfo("erf-inv", 1, _E, extension=True)
    LGAMMA = OpcodeInfo("lgamma", 1, _E, extension=True)
    DIGAMMA = OpcodeInfo("digamma", 1, _E, extension=True)
    # elementwise, binary
    ADD = OpcodeInfo("add", 2, _E)
    AND = OpcodeInfo("and", 2, _E)
    ATAN2 = OpcodeInfo("atan2", 2, _E)
    COMPARE = OpcodeInfo("compare", 2, _E)
    COMPLEX = OpcodeInfo("complex", 2, _E)
    DIVIDE = OpcodeInfo("divide", 2, _E)
    MAXIMUM = OpcodeInfo("maximum", 2, _E)
    MINIMUM = OpcodeInfo("minimum", 2, _E)
    MULTIPLY = OpcodeInfo("multiply", 2, _E)
    OR = OpcodeInfo("or", 2, _E)
    POWER = OpcodeInfo("power", 2, _E)
    REMAINDER = OpcodeInfo("remainder", 2, _E)
    SHIFT_LEFT = OpcodeInfo("shift-left", 2, _E)
    SHIFT_RIGHT_ARITHMETIC = OpcodeInfo("shift-right-arithmetic", 2, _E)
    SHIFT_RIGHT_LOGICAL = OpcodeInfo("shift-right-logical", 2, _E)
    SUBTRACT = OpcodeInfo("subtract", 2, _E)
    XOR = OpcodeInfo("xor", 2, _E)
    NEXT_AFTER = OpcodeInfo("next-after", 2, _E, extension=True)
    # elementwise, ternary
    SELECT = OpcodeInfo("select", 3, _E)
    CLAMP = OpcodeInfo("clamp", 3, _E)
    # data movement
    # `bitcast` reinterprets the operand's bytes, in memory order, under a new shape and
    # layout: XLA's layout passes make reshapes and transposes into bitcasts.
    BITCAST = OpcodeInfo("bitcast", 1, _M)
    BITCAST_CONVERT = OpcodeInfo("bitcast-convert", 1, _M)
    BROADCAST = OpcodeInfo("broadcast", 1, _M)
    CONCATENATE = OpcodeInfo("concatenate", None, _M)
    COPY = OpcodeInfo("copy", 1, _M)
    DYNAMIC_SLICE = OpcodeInfo("dynamic-slice", None, _M)
    DYNAMIC_UPDATE_SLICE = OpcodeInfo("dynamic-update-slice", None, _M)
    GATHER = OpcodeInfo("gather", 2, _M)
    IOTA = OpcodeInfo("iota", 0, _M)
    PAD = OpcodeInfo("pad", 2, _M)
    RESHAPE = OpcodeInfo("reshape", 1, _M)
    REVERSE = OpcodeInfo("reverse", 1, _M)
    SCATTER = OpcodeInfo("scatter", None, _M)
    SLICE = OpcodeInfo("slice", 1, _M)
    TRANSPOSE = OpcodeInfo("transpose", 1, _M)
    # reductions and contractions
    REDUCE = OpcodeInfo("reduce", None, _R)
    REDUCE_WINDOW = OpcodeInfo("reduce-window", None, _R)
    SELECT_AND_SCATTER = OpcodeInfo("select-and-scatter", 3, _R)
    SORT = OpcodeInfo("sort", None, _R)
    DOT = OpcodeInfo("dot", 2, _C)
    CONVOLUTION = OpcodeInfo("convolution", 2, _C)
    # control
    CALL = OpcodeInfo("call", None, _X)
    CONDITIONAL = OpcodeInfo("conditional", None, _X)
    CUSTOM_CALL = OpcodeInfo("custom-call", None, _X)
    FUSION = OpcodeInfo("fusion", None, _X)
    WHILE = OpcodeInfo("while", 1, _X)
    # structural
    CONSTANT = OpcodeInfo("constant", 0, _S)
    GET_TUPLE_ELEMENT = OpcodeInfo("get-tuple-element", 1, _S)
    PARAMETER = OpcodeInfo("parameter", 0, _S)
    TUPLE = OpcodeInfo("tuple", None, _S)
    # collectives (one program per device; see collectives.py for replica groups)
    ALL_GATHER = OpcodeInfo("all-gather", None, _K)
    ALL_REDUCE = OpcodeInfo("all-reduce", None, _K)
    ALL_TO_ALL = OpcodeInfo("all-to-all", None, _K)
    COLLECTIVE_PERMUTE = OpcodeInfo("collective-permute", 1, _K)
    REDUCE_SCATTER = OpcodeInfo("reduce-scatter", None, _K)
    PARTITION_ID = OpcodeInfo("partition-id", 0, _K)
    REPLICA_ID = OpcodeInfo("replica-id", 0, _K)

    @property
    def text(self) -> str:
        return self.value.text

    @property
    def arity(self) -> int | None:
        return self.value.arity

    @property
    def kind(self) -> Kind:
        return self.value.kind

    @property
    def is_elementwise(self) -> bool:
        return self.value.kind is Kind.ELEMENTWISE


OPCODE_OF_TEXT: dict[str, Opcode] = {op.text: op for op in Opcode}

# Comparison directions of `compare`, as XLA spells them.
COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
