"""HLO text's scalar constants: complex `(re, im)` literals are values, not the symbolic
dimensions that shape-polymorphic modules write in parentheses."""
import numpy as np
import pytest

from jaxlite.xla.shape import Shape
from jaxlite.xla.text_parser import parse_literal


@pytest.mark.parametrize("text, expected", [
    ("(nan, 0)", complex(np.nan, 0)), ("(nan, nan)", complex(np.nan, np.nan)),
    ("(1e-300, 0)", 1e-300 + 0j), ("(-2.5, 3)", -2.5 + 3j),
    ("(inf, -inf)", complex(np.inf, -np.inf)),
])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_scalar_constants(text, expected, dtype):
    value = parse_literal(text, Shape(dtype, ()))
    assert value.dtype == dtype and value.shape == ()
    np.testing.assert_array_equal(value, np.array(expected, dtype))


def test_symbolic_scalar_still_needs_a_reader():
    with pytest.raises(ValueError) as excinfo:
        parse_literal("(2*b + 1)", Shape(np.int32, ()))
    assert "symbolic dimension" in str(excinfo.value)
