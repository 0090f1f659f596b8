"""jaxlite.lax functions take the positional parameters that jax.lax 0.10.2's do.

The table was read from JAX 0.10.2 with `inspect.signature` (positional-or-keyword parameter
names) for every function both libraries have.
"""
from __future__ import annotations

import inspect

import pytest

import jaxlite.lax as lax

JAX_POSITIONAL_PARAMETERS = {
    'abs': ('x',),
    'acos': ('x',),
    'acosh': ('x',),
    'add': ('x', 'y'),
    'argmax': ('operand', 'axis', 'index_dtype'),
    'argmin': ('operand', 'axis', 'index_dtype'),
    'asin': ('x',),
    'asinh': ('x',),
    'atan': ('x',),
    'atan2': ('x', 'y'),
    'atanh': ('x',),
    'batch_matmul': ('lhs', 'rhs', 'precision'),
    'bitcast_convert_type': ('operand', 'new_dtype'),
    'bitwise_and': ('x', 'y'),
    'bitwise_not': ('x',),
    'bitwise_or': ('x', 'y'),
    'bitwise_xor': ('x', 'y'),
    'broadcast': ('operand', 'sizes'),
    'broadcast_in_dim': ('operand', 'shape', 'broadcast_dimensions'),
    'broadcasted_iota': ('dtype', 'shape', 'dimension'),
    'cbrt': ('x',),
    'ceil': ('x',),
    'clamp': ('min', 'x', 'max'),
    'collapse': ('operand', 'start_dimension', 'stop_dimension'),
    'complex': ('x', 'y'),
    'concatenate': ('operands', 'dimension'),
    'conj': ('x',),
    'convert_element_type': ('operand', 'new_dtype'),
    'cos': ('x',),
    'cosh': ('x',),
    'cumlogsumexp': ('operand', 'axis', 'reverse'),
    'cummax': ('operand', 'axis', 'reverse'),
    'cummin': ('operand', 'axis', 'reverse'),
    'cumprod': ('operand', 'axis', 'reverse'),
    'cumsum': ('operand', 'axis', 'reverse'),
    'digamma': ('x',),
    'div': ('x', 'y'),
    'dot': ('lhs', 'rhs'),
    'dot_general': ('lhs', 'rhs', 'dimension_numbers', 'precision', 'preferred_element_type'),
    'eq': ('x', 'y'),
    'erf': ('x',),
    'erf_inv': ('x',),
    'erfc': ('x',),
    'exp': ('x',),
    'exp2': ('x',),
    'expand_dims': ('array', 'dimensions'),
    'expm1': ('x',),
    'floor': ('x',),
    'full': ('shape', 'fill_value', 'dtype'),
    'full_like': ('x', 'fill_value', 'dtype', 'shape', 'sharding'),
    'ge': ('x', 'y'),
    'gt': ('x', 'y'),
    'imag': ('x',),
    'index_in_dim': ('operand', 'index', 'axis', 'keepdims'),
    'integer_pow': ('x', 'y'),
    'iota': ('dtype', 'size'),
    'is_finite': ('x',),
    'le': ('x', 'y'),
    'lgamma': ('x',),
    'log': ('x',),
    'log1p': ('x',),
    'logistic': ('x',),
    'lt': ('x', 'y'),
    'max': ('x', 'y'),
    'min': ('x', 'y'),
    'mul': ('x', 'y'),
    'ne': ('x', 'y'),
    'neg': ('x',),
    'nextafter': ('x1', 'x2'),
    'pad': ('operand', 'padding_value', 'padding_config'),
    'population_count': ('x',),
    'pow': ('x', 'y'),
    'real': ('x',),
    'reciprocal': ('x',),
    'reduce_and': ('operand', 'axes'),
    'reduce_max': ('operand', 'axes'),
    'reduce_min': ('operand', 'axes'),
    'reduce_or': ('operand', 'axes'),
    'reduce_prod': ('operand', 'axes'),
    'reduce_sum': ('operand', 'axes'),
    'reduce_xor': ('operand', 'axes'),
    'rem': ('x', 'y'),
    'reshape': ('operand', 'new_sizes', 'dimensions'),
    'rev': ('operand', 'dimensions'),
    'round': ('x', 'rounding_method'),
    'rsqrt': ('x',),
    'select': ('pred', 'on_true', 'on_false'),
    'select_n': ('which',),
    'shift_left': ('x', 'y'),
    'shift_right_arithmetic': ('x', 'y'),
    'shift_right_logical': ('x', 'y'),
    'sign': ('x',),
    'sin': ('x',),
    'sinh': ('x',),
    'slice': ('operand', 'start_indices', 'limit_indices', 'strides'),
    'slice_in_dim': ('operand', 'start_index', 'limit_index', 'stride', 'axis'),
    'sqrt': ('x',),
    'square': ('x',),
    'squeeze': ('array', 'dimensions'),
    'stop_gradient': ('x',),
    'sub': ('x', 'y'),
    'tan': ('x',),
    'tanh': ('x',),
    'transpose': ('operand', 'permutation'),
}


def _positional(fun) -> tuple[str, ...]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in inspect.signature(fun).parameters.values() if p.kind in kinds)


@pytest.mark.parametrize("name", sorted(JAX_POSITIONAL_PARAMETERS))
def test_signature_matches_jax(name):
    assert _positional(getattr(lax, name)) == JAX_POSITIONAL_PARAMETERS[name]


def test_every_required_primitive_has_its_jax_function():
    required = """add sub mul div rem pow integer_pow max min neg sign floor ceil round abs exp
    exp2 expm1 log log1p sqrt rsqrt cbrt tanh logistic sin cos tan asin acos atan atan2 sinh
    cosh asinh acosh atanh erf erfc erf_inv lgamma digamma is_finite nextafter bitwise_and
    bitwise_or bitwise_xor bitwise_not shift_left shift_right_logical shift_right_arithmetic
    population_count eq ne lt le gt ge select_n clamp convert_element_type
    bitcast_convert_type broadcast_in_dim reshape transpose squeeze expand_dims rev pad
    concatenate slice iota reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or
    reduce_xor argmax argmin cumsum cumprod cummax cummin cumlogsumexp dot_general""".split()
    assert [n for n in required if not callable(getattr(lax, n, None))] == []
