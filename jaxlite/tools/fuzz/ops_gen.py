"""The op families the program generator draws from (simplest first, for shrinking)."""
from __future__ import annotations

from jaxlite.tools.fuzz.ops_elementwise import (astype, binary, bitcast, clip, concatenate,
                                                cumulative, integer_pow, movement, reduce, sort,
                                                unary)
from jaxlite.tools.fuzz.ops_indexing import (control_flow, dot, dynamic_slice,
                                             dynamic_update_slice, index, scatter, where)

ALL = [unary, binary, reduce, movement, index, astype, integer_pow, cumulative, sort, clip,
       concatenate, scatter, dynamic_slice, where, dot, dynamic_update_slice, bitcast]
SMOOTH = [unary, binary, reduce, movement, index, integer_pow, cumulative, sort,
          concatenate, dynamic_slice, dot, dynamic_update_slice]


def families(options):
    """The families a program may draw from."""
    fams = SMOOTH if options.smooth else ALL
    return fams + [control_flow] if options.control_flow else fams
