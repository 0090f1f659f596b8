"""Tests for jaxlite.core.dtypes: JAX's promotion lattice, weak types and canonicalization.

The four tables below were produced by running jax 0.10.2 (``jax.numpy.promote_types`` and
``jax._src.dtypes.result_type(..., return_weak_type_flag=True)``) over every pair of the 15
standard dtypes and the three weak kinds, with ``jax_enable_x64`` on (X64) and off (X32).
Row and column labels follow JAX's documentation: b1 bool, u1..u8 uint8..uint64, i1..i8
int8..int64, bf bfloat16, f2..f8 float16..float64, c4/c8 complex64/complex128, and i*, f*, c*
the weak int, float and complex kinds. In the PROMOTE_TYPES tables the weak kinds are passed
as the Python types int, float, complex; in the RESULT_TYPE tables as the values 1, 1.0, 1j.
A result entry ``i*``, ``f*`` or ``c*`` means "weakly typed, of the default dtype of that kind".
"""
from __future__ import annotations

import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxlite.config import config
from jaxlite.core import dtypes

PROMOTE_TYPES_X64 = """
    b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i* f* c*
 b1 b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i8 f8 c8
 u1 u1 u1 u2 u4 u8 i2 i2 i4 i8 bf f2 f4 f8 c4 c8 u1 f8 c8
 u2 u2 u2 u2 u4 u8 i4 i4 i4 i8 bf f2 f4 f8 c4 c8 u2 f8 c8
 u4 u4 u4 u4 u4 u8 i8 i8 i8 i8 bf f2 f4 f8 c4 c8 u4 f8 c8
 u8 u8 u8 u8 u8 u8 f8 f8 f8 f8 bf f2 f4 f8 c4 c8 u8 f8 c8
 i1 i1 i2 i4 i8 f8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i1 f8 c8
 i2 i2 i2 i4 i8 f8 i2 i2 i4 i8 bf f2 f4 f8 c4 c8 i2 f8 c8
 i4 i4 i4 i4 i8 f8 i4 i4 i4 i8 bf f2 f4 f8 c4 c8 i4 f8 c8
 i8 i8 i8 i8 i8 f8 i8 i8 i8 i8 bf f2 f4 f8 c4 c8 i8 f8 c8
 bf bf bf bf bf bf bf bf bf bf bf f4 f4 f8 c4 c8 bf bf c4
 f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f2 f4 f8 c4 c8 f2 f2 c4
 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c4 c8 f4 f4 c4
 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c8 c8 f8 f8 c8
 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c8 c4 c8 c4 c4 c4
 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8
 i* i8 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i8 f8 c8
 f* f8 f8 f8 f8 f8 f8 f8 f8 f8 bf f2 f4 f8 c4 c8 f8 f8 c8
 c* c8 c8 c8 c8 c8 c8 c8 c8 c8 c4 c4 c4 c8 c4 c8 c8 c8 c8
"""
RESULT_TYPE_X64 = """
    b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i* f* c*
 b1 b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i* f* c*
 u1 u1 u1 u2 u4 u8 i2 i2 i4 i8 bf f2 f4 f8 c4 c8 u1 f* c*
 u2 u2 u2 u2 u4 u8 i4 i4 i4 i8 bf f2 f4 f8 c4 c8 u2 f* c*
 u4 u4 u4 u4 u4 u8 i8 i8 i8 i8 bf f2 f4 f8 c4 c8 u4 f* c*
 u8 u8 u8 u8 u8 u8 f* f* f* f* bf f2 f4 f8 c4 c8 u8 f* c*
 i1 i1 i2 i4 i8 f* i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i1 f* c*
 i2 i2 i2 i4 i8 f* i2 i2 i4 i8 bf f2 f4 f8 c4 c8 i2 f* c*
 i4 i4 i4 i4 i8 f* i4 i4 i4 i8 bf f2 f4 f8 c4 c8 i4 f* c*
 i8 i8 i8 i8 i8 f* i8 i8 i8 i8 bf f2 f4 f8 c4 c8 i8 f* c*
 bf bf bf bf bf bf bf bf bf bf bf f4 f4 f8 c4 c8 bf bf c4
 f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f2 f4 f8 c4 c8 f2 f2 c4
 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c4 c8 f4 f4 c4
 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c8 c8 f8 f8 c8
 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c8 c4 c8 c4 c4 c4
 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8
 i* i* u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i* f* c*
 f* f* f* f* f* f* f* f* f* f* bf f2 f4 f8 c4 c8 f* f* c*
 c* c* c* c* c* c* c* c* c* c* c4 c4 c4 c8 c4 c8 c* c* c*
"""
PROMOTE_TYPES_X32 = """
    b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i* f* c*
 b1 b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i8 f8 c8
 u1 u1 u1 u2 u4 u8 i2 i2 i4 i8 bf f2 f4 f8 c4 c8 u1 f8 c8
 u2 u2 u2 u2 u4 u8 i4 i4 i4 i8 bf f2 f4 f8 c4 c8 u2 f8 c8
 u4 u4 u4 u4 u4 u8 i4 i4 i4 i8 bf f2 f4 f8 c4 c8 u4 f8 c8
 u8 u8 u8 u8 u8 u8 f8 f8 f8 f8 bf f2 f4 f8 c4 c8 u8 f8 c8
 i1 i1 i2 i4 i4 f8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i1 f8 c8
 i2 i2 i2 i4 i4 f8 i2 i2 i4 i8 bf f2 f4 f8 c4 c8 i2 f8 c8
 i4 i4 i4 i4 i4 f8 i4 i4 i4 i8 bf f2 f4 f8 c4 c8 i4 f8 c8
 i8 i8 i8 i8 i8 f8 i8 i8 i8 i8 bf f2 f4 f8 c4 c8 i8 f8 c8
 bf bf bf bf bf bf bf bf bf bf bf f4 f4 f8 c4 c8 bf bf c4
 f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f2 f4 f8 c4 c8 f2 f2 c4
 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c4 c8 f4 f4 c4
 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c8 c8 f8 f8 c8
 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c8 c4 c8 c4 c4 c4
 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8
 i* i8 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i8 f8 c8
 f* f8 f8 f8 f8 f8 f8 f8 f8 f8 bf f2 f4 f8 c4 c8 f8 f8 c8
 c* c8 c8 c8 c8 c8 c8 c8 c8 c8 c4 c4 c4 c8 c4 c8 c8 c8 c8
"""
RESULT_TYPE_X32 = """
    b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c4 c8 i* f* c*
 b1 b1 u1 u2 u4 u4 i1 i2 i4 i4 bf f2 f4 f4 c4 c4 i* f* c*
 u1 u1 u1 u2 u4 u4 i2 i2 i4 i4 bf f2 f4 f4 c4 c4 u1 f* c*
 u2 u2 u2 u2 u4 u4 i4 i4 i4 i4 bf f2 f4 f4 c4 c4 u2 f* c*
 u4 u4 u4 u4 u4 u4 i4 i4 i4 i4 bf f2 f4 f4 c4 c4 u4 f* c*
 u8 u4 u4 u4 u4 u4 i4 i4 i4 i4 bf f2 f4 f4 c4 c4 u4 f* c*
 i1 i1 i2 i4 i4 i4 i1 i2 i4 i4 bf f2 f4 f4 c4 c4 i1 f* c*
 i2 i2 i2 i4 i4 i4 i2 i2 i4 i4 bf f2 f4 f4 c4 c4 i2 f* c*
 i4 i4 i4 i4 i4 i4 i4 i4 i4 i4 bf f2 f4 f4 c4 c4 i4 f* c*
 i8 i4 i4 i4 i4 i4 i4 i4 i4 i4 bf f2 f4 f4 c4 c4 i4 f* c*
 bf bf bf bf bf bf bf bf bf bf bf f4 f4 f4 c4 c4 bf bf c4
 f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f2 f4 f4 c4 c4 f2 f2 c4
 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 c4 c4 f4 f4 c4
 f8 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 c4 c4 f4 f4 c4
 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4
 c8 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4 c4
 i* i* u1 u2 u4 u4 i1 i2 i4 i4 bf f2 f4 f4 c4 c4 i* f* c*
 f* f* f* f* f* f* f* f* f* f* bf f2 f4 f4 c4 c4 f* f* c*
 c* c* c* c* c* c* c* c* c* c* c4 c4 c4 c4 c4 c4 c* c* c*
"""

CODES: dict[str, np.dtype] = {
    "b1": np.dtype("bool"), "u1": np.dtype("uint8"), "u2": np.dtype("uint16"),
    "u4": np.dtype("uint32"), "u8": np.dtype("uint64"), "i1": np.dtype("int8"),
    "i2": np.dtype("int16"), "i4": np.dtype("int32"), "i8": np.dtype("int64"),
    "bf": np.dtype(ml_dtypes.bfloat16), "f2": np.dtype("float16"), "f4": np.dtype("float32"),
    "f8": np.dtype("float64"), "c4": np.dtype("complex64"), "c8": np.dtype("complex128"),
}
WEAK_TYPE_ARGS = {"i*": int, "f*": float, "c*": complex}
WEAK_VALUE_ARGS = {"i*": 1, "f*": 1.0, "c*": 1j}


def parse_table(text: str) -> dict[tuple[str, str], str]:
    lines = text.strip().splitlines()
    cols = lines[0].split()
    table = {}
    for line in lines[1:]:
        row, *cells = line.split()
        assert len(cells) == len(cols), line
        table.update({(row, col): cell for col, cell in zip(cols, cells)})
    return table


LABELS = list(CODES) + list(WEAK_TYPE_ARGS)


class Duck:
    """An array-like with only `dtype` and `weak_type`, as traced values carry."""

    def __init__(self, dtype, weak_type: bool = False) -> None:
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type


def expected_result(code: str) -> tuple[np.dtype, bool]:
    if code.endswith("*"):
        default = {"i": dtypes.default_int_dtype, "f": dtypes.default_float_dtype,
                   "c": dtypes.default_complex_dtype}[code[0]]()
        return default, True
    return CODES[code], False


def test_standard_dtypes_match_table_order():
    assert dtypes.STANDARD_DTYPES == tuple(CODES.values())
    assert dtypes.WEAK_TYPES == (int, float, complex)


@pytest.mark.parametrize("x64", [True, False])
@pytest.mark.parametrize("row", LABELS)
def test_promote_types_table(x64, row):
    table = parse_table(PROMOTE_TYPES_X64 if x64 else PROMOTE_TYPES_X32)
    arg = {**CODES, **WEAK_TYPE_ARGS}
    with config.override("jax_enable_x64", x64):
        got = {col: dtypes.promote_types(arg[row], arg[col]) for col in LABELS}
    want = {col: CODES[table[row, col]] for col in LABELS}
    assert got == want
    assert all(isinstance(v, np.dtype) for v in got.values())


@pytest.mark.parametrize("x64", [True, False])
@pytest.mark.parametrize("row", LABELS)
@pytest.mark.parametrize("weak_form", ["value", "type", "duck"])
def test_result_type_table(x64, row, weak_form):
    table = parse_table(RESULT_TYPE_X64 if x64 else RESULT_TYPE_X32)

    def arg(label):
        if label in CODES:
            return CODES[label]
        if weak_form == "value":
            return WEAK_VALUE_ARGS[label]
        if weak_form == "type":
            return WEAK_TYPE_ARGS[label]
        return Duck({"i*": "int32", "f*": "float16", "c*": "complex64"}[label], True)

    with config.override("jax_enable_x64", x64):
        got = {col: dtypes.result_type(arg(row), arg(col), return_weak_type_flag=True)
               for col in LABELS}
        want = {col: expected_result(table[row, col]) for col in LABELS}
    assert got == want


def test_tables_are_symmetric():
    for text in (PROMOTE_TYPES_X64, PROMOTE_TYPES_X32, RESULT_TYPE_X64, RESULT_TYPE_X32):
        table = parse_table(text)
        assert all(table[a, b] == table[b, a] for a, b in itertools.product(LABELS, LABELS))


def test_result_type_x32_is_canonicalized_x64_result_of_canonical_inputs():
    # Cross-check of the two RESULT_TYPE tables against each other: with x64 off every
    # input is first narrowed to 32 bits, so each X32 entry equals an X64 entry.
    x64, x32 = parse_table(RESULT_TYPE_X64), parse_table(RESULT_TYPE_X32)
    narrow = {"i8": "i4", "u8": "u4", "f8": "f4", "c8": "c4"}
    for a, b in itertools.product(LABELS, LABELS):
        want = x64[narrow.get(a, a), narrow.get(b, b)]
        assert x32[a, b] == narrow.get(want, want), (a, b)


# ----------------------------------------------------------------------------- canonicalization

@pytest.mark.parametrize("wide,narrow", [("int64", "int32"), ("uint64", "uint32"),
                                         ("float64", "float32"), ("complex128", "complex64")])
def test_canonicalize_dtype_narrows_without_x64(wide, narrow):
    with config.override("jax_enable_x64", False):
        assert dtypes.canonicalize_dtype(wide) == np.dtype(narrow)
        assert dtypes.canonicalize_dtype(np.dtype(wide)) == np.dtype(narrow)
        assert dtypes.canonicalize_dtype(getattr(np, wide)) == np.dtype(narrow)
    with config.override("jax_enable_x64", True):
        assert dtypes.canonicalize_dtype(wide) == np.dtype(wide)


@pytest.mark.parametrize("dt", ["bool", "int8", "uint16", "int32", "float16", "float32",
                                "complex64", "bfloat16", ml_dtypes.bfloat16, "float8_e4m3fn"])
def test_canonicalize_dtype_keeps_narrow_types(dt):
    for x64 in (False, True):
        with config.override("jax_enable_x64", x64):
            assert dtypes.canonicalize_dtype(dt) == np.dtype(dt)


def test_canonicalize_python_types_and_none():
    with config.override("jax_enable_x64", False):
        got = [dtypes.canonicalize_dtype(t) for t in (int, float, complex, bool, None)]
        assert got == [np.dtype(t) for t in ("int32", "float32", "complex64", "bool", "float32")]
    with config.override("jax_enable_x64", True):
        got = [dtypes.canonicalize_dtype(t) for t in (int, float, complex, bool, None)]
        assert got == [np.dtype(t) for t in ("int64", "float64", "complex128", "bool", "float64")]


def test_canonicalize_rejects_values():
    with pytest.raises(TypeError):
        dtypes.canonicalize_dtype(1)
    with pytest.raises(TypeError):
        dtypes.canonicalize_dtype("not-a-dtype")
    # A NumPy float equal to 1 must not hit a cache entry made for another type.
    with config.override("jax_enable_x64", False):
        assert dtypes.canonicalize_dtype(np.int64) == np.dtype("int32")
        assert dtypes.canonicalize_dtype(np.float64(1.0)) == np.dtype("float32")


def test_default_dtypes_follow_flag():
    with config.override("jax_enable_x64", False):
        assert [dtypes.default_int_dtype(), dtypes.default_uint_dtype(),
                dtypes.default_float_dtype(), dtypes.default_complex_dtype()] == [
            np.dtype(t) for t in ("int32", "uint32", "float32", "complex64")]
    with config.override("jax_enable_x64", True):
        assert [dtypes.default_int_dtype(), dtypes.default_uint_dtype(),
                dtypes.default_float_dtype(), dtypes.default_complex_dtype()] == [
            np.dtype(t) for t in ("int64", "uint64", "float64", "complex128")]


def test_check_and_canonicalize_user_dtype_warns_only_for_explicit_wide_types():
    with config.override("jax_enable_x64", False):
        with pytest.warns(UserWarning, match="int64"):
            assert dtypes.check_and_canonicalize_user_dtype("int64", "f") == np.dtype("int32")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert dtypes.check_and_canonicalize_user_dtype(float) == np.dtype("float32")
            assert dtypes.check_and_canonicalize_user_dtype("int8") == np.dtype("int8")
    with config.override("jax_enable_x64", True), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.check_and_canonicalize_user_dtype("int64") == np.dtype("int64")
    with pytest.raises(ValueError):
        dtypes.check_and_canonicalize_user_dtype(None)
    with pytest.raises(TypeError):
        dtypes.check_and_canonicalize_user_dtype("U")


# ----------------------------------------------------------------------------- values

@pytest.mark.parametrize("value,weak", [
    (1, True), (1.0, True), (1j, True), (True, False), (2**70, True),
    (np.int32(1), False), (np.float64(1.0), False), (np.complex128(1j), False),
    (np.array(1.0), False), (np.bool_(True), False), (int, False), (np.float32, False),
    (Duck("float32", True), True), (Duck("float32", False), False), ("float32", False),
])
def test_is_weakly_typed(value, weak):
    assert dtypes.is_weakly_typed(value) is weak


def test_is_python_scalar():
    assert all(dtypes.is_python_scalar(v) for v in (1, 1.0, 1j, True))
    assert not any(dtypes.is_python_scalar(v) for v in (
        np.float64(1.0), np.complex128(1), np.int64(1), np.array(1), int, "1", None))


@pytest.mark.parametrize("x64", [False, True])
def test_dtype_of_values(x64):
    wide = {"i": "int64", "f": "float64", "c": "complex128"}
    with config.override("jax_enable_x64", x64):
        canon = {k: dtypes.canonicalize_dtype(v) for k, v in wide.items()}
        assert dtypes.dtype(1) == canon["i"]
        assert dtypes.dtype(1.0) == canon["f"]
        assert dtypes.dtype(1j) == canon["c"]
        assert dtypes.dtype(True) == np.dtype(bool)
        assert dtypes.dtype(1, canonicalize=False) == np.dtype("int64")
        assert dtypes.dtype(1.0, canonicalize=False) == np.dtype("float64")
        assert dtypes.dtype(np.array([1, 2], np.int64)) == canon["i"]
        assert dtypes.dtype(np.int64(1), canonicalize=False) == np.dtype("int64")
        assert dtypes.dtype(np.float64) == canon["f"]
        assert dtypes.dtype(float) == canon["f"]
        assert dtypes.dtype("bfloat16") == np.dtype(ml_dtypes.bfloat16)
        assert dtypes.dtype(Duck("float16")) == np.dtype("float16")
        assert dtypes.dtype(dtypes.float0) == dtypes.float0


def test_dtype_errors():
    with pytest.raises(ValueError):
        dtypes.dtype(None)
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        dtypes.dtype([1, 2])
    with pytest.raises(TypeError):
        dtypes.dtype(np.array(["a"]))
    with pytest.raises(TypeError):
        dtypes.dtype(np.array([None]))


def test_scalar_type_of():
    assert dtypes.scalar_type_of(np.uint8(2)) is int
    assert dtypes.scalar_type_of(ml_dtypes.bfloat16(2)) is float
    assert dtypes.scalar_type_of(np.complex64(2)) is complex
    assert dtypes.scalar_type_of(np.bool_(True)) is bool
    assert dtypes.scalar_type_of(3) is int
    assert dtypes.scalar_type_of(np.zeros(2, "float16")) is float
    with pytest.raises(TypeError):
        dtypes.scalar_type_of(dtypes.float0)


def test_float0_and_bfloat16_names():
    assert dtypes.float0 == np.dtype([("float0", np.void, 0)])
    assert dtypes.float0.itemsize == 0
    assert dtypes.bfloat16 is ml_dtypes.bfloat16


# ----------------------------------------------------------------------------- result_type

@pytest.mark.parametrize("x64", [False, True])
def test_result_type_examples(x64):
    rt = dtypes.result_type
    with config.override("jax_enable_x64", x64):
        f, i, c = (dtypes.default_float_dtype(), dtypes.default_int_dtype(),
                   dtypes.default_complex_dtype())
        assert rt(np.float16, 1.0, return_weak_type_flag=True) == (np.dtype("float16"), False)
        assert rt(np.int8, 2) == np.dtype("int8")
        assert rt(np.uint8, 1) == np.dtype("uint8")
        # The join of int32 and f* is f* itself, so the result is weak.
        assert rt(np.int32, 2.0, return_weak_type_flag=True) == (f, True)
        assert rt(np.float32, 2.0, return_weak_type_flag=True) == (np.dtype("float32"), False)
        assert rt(1, 2.0, return_weak_type_flag=True) == (f, True)
        assert rt(1, True, return_weak_type_flag=True) == (i, True)
        assert rt(True, return_weak_type_flag=True) == (np.dtype(bool), False)
        assert rt(1, return_weak_type_flag=True) == (i, True)
        assert rt(np.int8, 1, 1.0, return_weak_type_flag=True) == (f, True)
        assert rt(np.float64, 1j, return_weak_type_flag=True) == (c, False)
        assert rt(None, 1, return_weak_type_flag=True) == (f, False)
        assert rt(np.array([1, 2], np.int64), 1.0, return_weak_type_flag=True) == (f, True)
        assert rt(np.int64(3), 1.0, return_weak_type_flag=True) == (f, True)
        assert rt("float64", 1.0, return_weak_type_flag=True) == (f, False)
        assert rt(float, 1, return_weak_type_flag=True) == (f, True)
        assert rt(1, 2**70) == i
        assert rt("bfloat16", "float16") == np.dtype("float32")
        assert rt(Duck("float32", True), 1, return_weak_type_flag=True) == (f, True)
        assert rt(Duck("bool", True), 1, return_weak_type_flag=True) == (i, True)
        assert rt(dtypes.float0, dtypes.float0) == dtypes.float0


def test_result_type_mixed_64bit_ints():
    with config.override("jax_enable_x64", True):
        assert dtypes.result_type(np.uint64, np.int64, return_weak_type_flag=True) == (
            np.dtype("float64"), True)
        assert dtypes.promote_types("uint32", "int32") == np.dtype("int64")
    with config.override("jax_enable_x64", False):
        assert dtypes.result_type(np.uint64, np.int64, return_weak_type_flag=True) == (
            np.dtype("int32"), False)
        # promote_types is not canonicalized, but uses the 32-bit lattice.
        assert dtypes.promote_types("uint64", "int64") == np.dtype("float64")
        assert dtypes.promote_types("uint32", "int32") == np.dtype("int32")


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one"):
        dtypes.result_type()
    with pytest.raises(ValueError, match="not a valid dtype"):
        dtypes.result_type(dtypes.float0, np.float32)
    with pytest.raises(ValueError, match="not a valid dtype"):
        dtypes.promote_types(dtypes.float0, dtypes.float0)
    with pytest.raises(TypeError):
        dtypes.result_type([1, 2])
    assert issubclass(dtypes.TypePromotionError, ValueError)


NARROW_FLOATS = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float4_e2m1fn]


@pytest.mark.parametrize("narrow", NARROW_FLOATS)
def test_narrow_floats_promote_only_with_bool_and_weak_scalars(narrow):
    want = (np.dtype(narrow), False)
    for other in (np.bool_, 1, 1.0, np.uint8, np.int64, narrow):
        assert dtypes.result_type(narrow, other, return_weak_type_flag=True) == want
    for other in (1j, np.float32, np.float16, ml_dtypes.bfloat16, np.complex64):
        with pytest.raises(dtypes.TypePromotionError):
            dtypes.result_type(narrow, other)
    with pytest.raises(dtypes.TypePromotionError):
        dtypes.promote_types(narrow, np.float32)


def test_narrow_ints_promote_only_with_bool_and_weak_ints():
    int4 = np.dtype(ml_dtypes.int4)
    assert dtypes.result_type(int4, np.bool_) == int4
    assert dtypes.result_type(int4, 1, return_weak_type_flag=True) == (int4, False)
    for other in (1.0, 1j, np.uint8, np.int8, ml_dtypes.uint4):
        with pytest.raises(dtypes.TypePromotionError):
            dtypes.result_type(int4, other)


STRONG = st.sampled_from(dtypes.STANDARD_DTYPES)
ARGS = st.one_of(STRONG, st.sampled_from([1, 1.0, 1j, True, int, float, complex]),
                 st.builds(Duck, STRONG, st.booleans()))


@settings(max_examples=200, deadline=None)
@given(st.lists(ARGS, min_size=1, max_size=5), st.randoms(use_true_random=False),
       st.booleans())
def test_result_type_is_order_independent_and_pairwise(args, rnd, x64):
    with config.override("jax_enable_x64", x64):
        want = dtypes.result_type(*args, return_weak_type_flag=True)
        shuffled = list(args)
        rnd.shuffle(shuffled)
        assert dtypes.result_type(*shuffled, return_weak_type_flag=True) == want
        # Folding pairwise, carrying the weak flag, gives the same join.
        acc = shuffled[0]
        for nxt in shuffled[1:]:
            dt, weak = dtypes.result_type(acc, nxt, return_weak_type_flag=True)
            acc = Duck(dt, weak)
        assert dtypes.result_type(acc, return_weak_type_flag=True) == want


@settings(max_examples=200, deadline=None)
@given(STRONG, STRONG)
def test_promote_types_is_a_join(a, b):
    # Commutative, idempotent, and an upper bound of both inputs. Not associative, as in
    # JAX: promote_types resolves the weak join f* of uint64 and int8 to a strong float64.
    for x64 in (False, True):
        with config.override("jax_enable_x64", x64):
            p = dtypes.promote_types
            ab = p(a, b)
            assert ab == p(b, a)
            assert p(a, a) == a
            assert p(ab, a) == ab and p(ab, b) == ab
    with config.override("jax_enable_x64", True):
        u8, i1, bf = np.dtype("uint64"), np.dtype("int8"), np.dtype(ml_dtypes.bfloat16)
        assert p(p(u8, i1), bf) == np.dtype("float64")
        assert p(u8, p(i1, bf)) == bf


# ----------------------------------------------------------------------------- classification

@pytest.mark.parametrize("a,b,want", [
    (ml_dtypes.bfloat16, np.floating, True), (ml_dtypes.bfloat16, np.inexact, True),
    (ml_dtypes.bfloat16, np.number, True), (ml_dtypes.bfloat16, np.generic, True),
    (ml_dtypes.bfloat16, ml_dtypes.bfloat16, True), (ml_dtypes.bfloat16, np.float16, False),
    (np.float16, ml_dtypes.bfloat16, False), (dtypes.float0, np.floating, False),
    (dtypes.float0, np.void, True), (dtypes.float0, dtypes.float0, True),
    (dtypes.float0, np.generic, True), (np.int32, int, False), (np.int64, int, True),
    (np.float32, float, False), (np.float64, float, True), (np.complex64, complex, False),
    (np.bool_, bool, True), (np.int32, np.integer, True), (np.uint8, np.signedinteger, False),
    (ml_dtypes.int4, np.signedinteger, True), (ml_dtypes.int4, np.integer, True),
    (ml_dtypes.uint4, np.unsignedinteger, True), (ml_dtypes.float8_e4m3fn, np.floating, True),
    (np.dtype("int32"), np.integer, True), ("float32", np.floating, True),
    (int, np.integer, True), (float, np.floating, True), (bool, np.bool_, True),
    (np.int32, np.int32, True), (np.float32, np.float64, False),
    ("bfloat16", np.floating, True), (np.ones(2), np.floating, True),
    (np.bool_, np.number, False), (np.bool_, np.integer, False),
])
def test_issubdtype(a, b, want):
    assert dtypes.issubdtype(a, b) is want


@pytest.mark.parametrize("dt,kind,want", [
    (np.bool_, "bool", True), (np.int8, "signed integer", True),
    (np.uint8, "signed integer", False), (np.uint8, "unsigned integer", True),
    (np.uint8, "integral", True), (np.bool_, "integral", False),
    (ml_dtypes.bfloat16, "real floating", True), (np.complex64, "real floating", False),
    (np.complex64, "complex floating", True), (np.complex64, "numeric", True),
    (np.bool_, "numeric", False), (ml_dtypes.bfloat16, "numeric", True),
    (np.int32, np.int32, True), (np.int32, np.int64, False),
    (ml_dtypes.int4, "signed integer", True), (ml_dtypes.float8_e4m3fn, "real floating", True),
    (dtypes.float0, "numeric", False), ("int32", "numeric", True),
    (np.dtype("int32"), np.dtype("int32"), True), (np.int32, int, False),
    (np.int32, ("integral", "bool"), True), (np.float32, ("integral", "bool"), False),
    (np.float32, ("integral", np.float32), True),
])
def test_isdtype(dt, kind, want):
    assert dtypes.isdtype(dt, kind) is want


def test_isdtype_errors():
    with pytest.raises(ValueError, match="Unrecognized kind"):
        dtypes.isdtype(np.int32, "bogus")
    with pytest.raises(TypeError, match="Expected kind"):
        dtypes.isdtype(np.int32, np.integer)
    with pytest.raises(TypeError):
        dtypes.isdtype(1, "numeric")


def test_kind_predicates():
    table = {
        "bool": (dtypes.is_bool, ["bool"]),
        "integer": (dtypes.is_integer, ["int8", "uint16", "int64", "uint8", "uint64",
                                        ml_dtypes.int4, ml_dtypes.uint4]),
        "signed": (dtypes.is_signed_integer, ["int8", "int64", ml_dtypes.int4]),
        "unsigned": (dtypes.is_unsigned, ["uint8", "uint16", "uint64", ml_dtypes.uint4]),
        "floating": (dtypes.is_floating, ["float16", "bfloat16", "float32", "float64",
                                          "float8_e5m2"]),
        "complex": (dtypes.is_complex, ["complex64", "complex128"]),
        "inexact": (dtypes.is_inexact, ["float16", "bfloat16", "float32", "complex64"]),
    }
    everything = ["bool", "int8", "uint16", "int64", "uint8", "uint64", "float16", "bfloat16",
                  "float64", "float32", "float8_e5m2", "complex64", "complex128",
                  ml_dtypes.int4, ml_dtypes.uint4, dtypes.float0]
    for name, (pred, members) in table.items():
        for dt in everything:
            assert pred(dt) is (dt in members or (name == "inexact" and (
                dtypes.is_floating(dt) or dtypes.is_complex(dt)))), (name, dt)
    assert dtypes.is_floating(np.zeros(2, ml_dtypes.bfloat16))
    assert dtypes.is_integer(3) and not dtypes.is_integer(True)


# ----------------------------------------------------------------------------- conversions

@pytest.mark.parametrize("x64", [False, True])
def test_to_inexact_and_complex(x64):
    inexact = {"bool": "float32", "uint8": "float32", "uint16": "float32", "uint32": "float32",
               "uint64": "float64", "int8": "float32", "int16": "float32", "int32": "float32",
               "int64": "float64", "bfloat16": "bfloat16", "float16": "float16",
               "float32": "float32", "float64": "float64", "complex64": "complex64",
               "complex128": "complex128"}
    complex_ = {"bool": "complex64", "uint64": "complex128", "int32": "complex64",
                "int64": "complex128", "bfloat16": "complex64", "float16": "complex64",
                "float64": "complex128", "complex64": "complex64"}
    floating = {"bool": "float32", "int64": "float64", "complex64": "float32",
                "complex128": "float64", "bfloat16": "bfloat16"}
    with config.override("jax_enable_x64", x64):
        for src, want in inexact.items():
            assert dtypes.to_inexact_dtype(src) == np.dtype(want), src
        for src, want in complex_.items():
            assert dtypes.to_complex_dtype(src) == np.dtype(want), src
        for src, want in floating.items():
            assert dtypes.to_floating_dtype(src) == np.dtype(want), src
        assert dtypes.to_inexact_dtype(int) == np.dtype("float64")
        assert dtypes.to_numeric_dtype(np.bool_) == np.dtype("int32")
        assert dtypes.to_numeric_dtype(np.uint8) == np.dtype("uint8")
    with pytest.raises(TypeError):
        dtypes.to_inexact_dtype(dtypes.float0)


def test_real_dtype():
    assert dtypes.real_dtype(np.complex64) == np.dtype("float32")
    assert dtypes.real_dtype("complex128") == np.dtype("float64")
    assert dtypes.real_dtype(np.float16) == np.dtype("float16")
    assert dtypes.real_dtype("int32") == np.dtype("int32")


def test_finfo_iinfo_itemsize_bits():
    fi = dtypes.finfo(ml_dtypes.bfloat16)
    assert float(fi.eps) == 2.0 ** -7
    assert float(fi.max) == pytest.approx(3.38953e38, rel=1e-5)
    assert fi.bits == 16
    assert dtypes.finfo("bfloat16").nmant == 7
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dtypes.finfo(np.complex64).dtype == np.dtype("float32")
    with pytest.raises(ValueError):
        dtypes.finfo(np.int32)
    assert dtypes.iinfo(np.int8).max == 127
    assert dtypes.iinfo(ml_dtypes.int4).min == -8
    for bad in (np.bool_, ml_dtypes.bfloat16):
        with pytest.raises(ValueError):
            dtypes.iinfo(bad)
    assert [dtypes.itemsize_bits(t) for t in (ml_dtypes.bfloat16, ml_dtypes.int4, np.bool_,
                                              np.float64, ml_dtypes.float4_e2m1fn)] == [
        16, 4, 8, 64, 4]
