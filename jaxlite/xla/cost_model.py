"""The cost model that fusion and tiling consult (mirrors the parts of XLA's HloCostAnalysis
and `InstructionFusion::IsExpensive` that fusion decisions rest on).

Counting is `jaxlite.xla.analysis`'s job (`instruction_cost`: flops, transcendentals, bytes
accessed, as XLA's cost analysis counts them); this module adds the policy built on it:

- which instructions are *expensive* to compute again (transcendentals, integer division,
  dots, reductions, ...), so that fusion does not recompute them in many consumers;
- which producers are *data-expanding* (broadcast, iota, constant): computing them inside
  every consumer reads less memory than reading their materialized result;
- `duplication_allowed`, the rule that bounds how many fused copies of a producer may exist;
- the machine numbers tiling needs: the L1 data cache (a row that fits is kept there while
  the whole row computation runs), the SIMD width (AVX-512: 64 bytes, 16 f32 lanes, 8 f64
  lanes), and the work below which splitting a loop over threads does not pay.

Everything here is a plain function of the IR: no state, no rewriting.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxlite.xla.analysis import TRANSCENDENTAL_OPCODES, Cost, instruction_cost
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = [
    "DATA_EXPANDING_OPCODES",
    "EXPENSIVE_OPCODES",
    "L1_BYTES",
    "MAX_EXPENSIVE_COPIES",
    "PARALLEL_MIN_ELEMENTS",
    "TRANSCENDENTAL_WEIGHT",
    "VECTOR_BYTES",
    "Cost",
    "DuplicationVerdict",
    "duplication_allowed",
    "element_cost",
    "fits_in_l1",
    "instruction_cost",
    "is_data_expanding",
    "is_expensive",
    "vector_width",
]

# The L1 data cache of the CPUs we target (32 KiB on most x86 cores): a reduction row of at
# most this many bytes stays in L1 between the passes a row kernel makes over it.
L1_BYTES = 32 * 1024

# The SIMD register width in bytes (AVX-512): 16 f32 or 8 f64 lanes.
VECTOR_BYTES = 64

# At most this many fused copies of an expensive producer (an `exp` feeding a reduction and
# an elementwise consumer, as in softmax, is computed twice; one feeding ten is not).
MAX_EXPENSIVE_COPIES = 2

# Loops with fewer iterations than this run on one thread: below it the cost of waking
# threads exceeds the work.
PARALLEL_MIN_ELEMENTS = 1 << 15

# How many simple flops one transcendental element costs (a vectorized polynomial `exp`).
TRANSCENDENTAL_WEIGHT = 20

# Recomputing these in several consumers costs real time: transcendentals, and every
# instruction that does more than O(1) work per output element.
EXPENSIVE_OPCODES = TRANSCENDENTAL_OPCODES | frozenset({
    Opcode.DOT, Opcode.CONVOLUTION, Opcode.REDUCE, Opcode.REDUCE_WINDOW, Opcode.SORT,
    Opcode.SELECT_AND_SCATTER, Opcode.SCATTER, Opcode.FUSION, Opcode.CALL, Opcode.WHILE,
    Opcode.CONDITIONAL, Opcode.CUSTOM_CALL})

# Producers whose output is larger than what they read (or that read nothing): fusing a copy
# into each consumer reads less memory than one materialized result read by all.
DATA_EXPANDING_OPCODES = frozenset({Opcode.BROADCAST, Opcode.IOTA, Opcode.CONSTANT})


def is_expensive(inst: HloInstruction) -> bool:
    """Whether computing `inst` again in another consumer costs more than reading it.

    Transcendentals, integer division and remainder (no vector instruction), and anything
    doing more than constant work per element (dots, reductions, sorts, calls) are expensive.
    """
    if inst.opcode in EXPENSIVE_OPCODES:
        return True
    if inst.opcode in (Opcode.DIVIDE, Opcode.REMAINDER) and not inst.shape.is_tuple:
        return np.dtype(inst.shape.dtype).kind in "iu"
    return False


def is_data_expanding(inst: HloInstruction) -> bool:
    """Whether `inst` writes more than it reads (broadcast, iota, constant)."""
    return inst.opcode in DATA_EXPANDING_OPCODES


def element_cost(inst: HloInstruction) -> int:
    """Relative work per output element: 1 for a simple op, `TRANSCENDENTAL_WEIGHT` for a
    transcendental, 0 for data movement and structure."""
    if inst.opcode in TRANSCENDENTAL_OPCODES:
        return TRANSCENDENTAL_WEIGHT
    if inst.opcode.is_elementwise:
        return 1
    return 0


def vector_width(dtype: np.dtype | type) -> int:
    """SIMD lanes for `dtype`: 16 for f32 and 8 for f64 with 64-byte (AVX-512) vectors."""
    return max(1, VECTOR_BYTES // np.dtype(dtype).itemsize)


def fits_in_l1(elements: int, dtype: np.dtype | type) -> bool:
    """Whether `elements` values of `dtype` fit in the L1 data cache (8192 f32 values)."""
    return elements * np.dtype(dtype).itemsize <= L1_BYTES


@dataclass(frozen=True)
class DuplicationVerdict:
    """The answer of `duplication_allowed`: `allowed`, and `reason` in words (for tests and
    dumps)."""

    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def duplication_allowed(producer: HloInstruction, num_users: int, copies_so_far: int,
                        materialized_anyway: bool,
                        max_expensive_copies: int = MAX_EXPENSIVE_COPIES) -> DuplicationVerdict:
    """May fusion put one more copy of `producer` into a consumer, while other users keep
    needing the producer elsewhere?

    Parameters
    ----------
    producer : the instruction that would be computed again inside the consumer fusion.
    num_users : how many distinct instructions use the producer.
    copies_so_far : how many fusions already hold a copy of it.
    materialized_anyway : whether some user cannot fuse it (a dot, a tuple, the computation's
        root, ...), so that it is written to memory whatever fusion decides.

    Rules: a data-expanding producer (broadcast, iota, constant) is always copied (each copy
    reads less than the materialized result would); a producer that is written to memory
    anyway is read from there rather than computed again; a cheap producer is copied into
    every consumer; an expensive one only while it has at most `max_expensive_copies` users
    and copies, so that work grows by a bounded factor.
    """
    if is_data_expanding(producer):
        return DuplicationVerdict(True, "data-expanding producers are copied freely")
    if materialized_anyway:
        return DuplicationVerdict(False, "the producer is written to memory anyway for a "
                                         "user that cannot fuse it; consumers read it")
    if not is_expensive(producer):
        return DuplicationVerdict(True, "cheap producers are copied into every consumer")
    if num_users > max_expensive_copies:
        return DuplicationVerdict(False, f"an expensive producer with {num_users} users would "
                                         f"be computed more than {max_expensive_copies} times")
    if copies_so_far >= max_expensive_copies:
        return DuplicationVerdict(False, f"the expensive producer already has "
                                         f"{copies_so_far} fused copies")
    return DuplicationVerdict(True, f"an expensive producer is copied into at most "
                                    f"{max_expensive_copies} consumers")
