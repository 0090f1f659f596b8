"""Dtypes and type promotion, mirroring `jax.dtypes` and `jax.numpy`'s promotion rules.

JAX does not promote the way NumPy does. It places dtypes on a lattice (a partial order in
which every pair of types has a least upper bound) and promotes two types to their join.
Python scalars take part as *weak* types: a Python ``1`` joins ``int8`` to give ``int8``
rather than widening it. With the ``jax_enable_x64`` flag off, 64-bit types are canonicalized
to their 32-bit counterparts everywhere a value's dtype is decided.

The dtypes themselves and canonicalization live in `dtype_canonical` (re-exported here);
this module adds the values' dtypes, the lattice, classification and `finfo` / `iinfo`.

Lattice nodes are ``np.dtype`` objects for strong types and three sentinels (printed ``i*``,
``f*`` and ``c*``) for the weak integer, float and complex kinds. The Python types ``int``,
``float`` and ``complex`` stand for those weak kinds in `promote_types` and `result_type`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence, Union

import ml_dtypes
import numpy as np

from jaxlite.core.dtype_canonical import (  # noqa: F401  (re-exported: jax.dtypes' names)
    STANDARD_DTYPES, WEAK_TYPES, NARROW_FLOAT_DTYPES, NARROW_SIGNED_DTYPES,
    NARROW_UNSIGNED_DTYPES, DTypeLike, ExtendedDType, TypePromotionError, bfloat16, float0,
    extended, prng_key, is_extended, canonicalize_dtype, check_user_dtype_supported,
    check_and_canonicalize_user_dtype, default_int_dtype, default_uint_dtype,
    default_float_dtype, default_complex_dtype)
from jaxlite.core.dtype_canonical import (  # the lattice's nodes and helpers
    _b1, _u1, _u2, _u4, _u8, _i1, _i2, _i4, _i8, _bf, _f2, _f4, _f8, _c4, _c8,
    _CUSTOM_CATEGORY, _PYTHON_TYPE_DTYPE, _is_array_dtype, _strict, _to_np_dtype, _x64)


# ----------------------------------------------------------------------------- values

def is_python_scalar(x: Any) -> bool:
    """True for a Python bool, int, float or complex value (NumPy scalars excluded)."""
    # np.float64 subclasses float and np.complex128 complex, but they carry a strong dtype.
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def is_weakly_typed(x: Any) -> bool:
    """Whether `x` promotes as a weak type (mirrors ``jax._src.dtypes.is_weakly_typed``).

    Python ints, floats and complexes are weak; Python bools are not, since bool has a single
    width. Objects with a ``weak_type`` attribute (traced values, jaxlite arrays) report it.
    """
    if isinstance(x, type):
        return False  # a class's weak_type would be a descriptor, not a flag
    if is_python_scalar(x):
        return not isinstance(x, bool)
    return bool(getattr(x, "weak_type", False))


def _python_kind_type(x: Any) -> type:
    for t in (bool, int, float, complex):  # bool first: it subclasses int
        if isinstance(x, t):
            return t
    raise TypeError(x)




def dtype(x: Any, canonicalize: bool = True) -> np.dtype:
    """The dtype of a value or dtype-like (mirrors ``jax._src.dtypes.dtype``).

    Parameters
    ----------
    x : Any
        A Python scalar, a NumPy array or scalar, any object with a ``dtype`` attribute, or a
        dtype-like (``np.dtype``, scalar type, name, Python type).
    canonicalize : bool
        Apply `canonicalize_dtype` to the result. JAX 0.10 always does; pass False to get the
        uncanonicalized type (a Python int then gives int64).
    """
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if is_python_scalar(x):
        dt = _PYTHON_TYPE_DTYPE[_python_kind_type(x)]
    elif isinstance(x, (type, str, np.dtype)):
        dt = _to_np_dtype(x)
    elif isinstance(x, ExtendedDType) or isinstance(getattr(x, "dtype", None), ExtendedDType):
        return x if isinstance(x, ExtendedDType) else x.dtype
    elif hasattr(x, "dtype"):
        dt = np.dtype(x.dtype)
        if not _is_array_dtype(dt):
            raise TypeError(f"Value {x!r} with dtype {dt} is not a valid jaxlite array type; "
                            "only bool and numeric arrays are supported.")
    else:
        raise TypeError(f"Cannot determine dtype of {x!r}")
    return canonicalize_dtype(dt) if canonicalize else dt


def _spec(x: Any) -> np.dtype:
    # Helpers take dtype-likes and values alike; None means float64, as np.dtype(None) does.
    return _f8 if x is None else dtype(x, canonicalize=False)


def scalar_type_of(x: Any) -> type:
    """The Python scalar type matching `x`'s dtype (mirrors ``jax.dtypes.scalar_type_of``)."""
    dt = dtype(x, canonicalize=False)
    for abstract, py_type in ((np.bool_, bool), (np.integer, int), (np.floating, float),
                              (np.complexfloating, complex)):
        if issubdtype(dt, abstract):
            return py_type
    raise TypeError(f"Invalid scalar value {x!r}")


# ----------------------------------------------------------------------------- the lattice

class _WeakKind:
    """A weak lattice node. A plain object, since np.dtype.__eq__ would coerce a string."""

    __slots__ = ("name", "wide")

    def __init__(self, name: str, wide: np.dtype) -> None:
        self.name, self.wide = name, wide

    def __repr__(self) -> str:
        return self.name


_I_WEAK, _F_WEAK, _C_WEAK = _WeakKind("i*", _i8), _WeakKind("f*", _f8), _WeakKind("c*", _c8)
_WEAK_OF_TYPE: dict[type, _WeakKind] = {int: _I_WEAK, float: _F_WEAK, complex: _C_WEAK}
_Node = Union[np.dtype, _WeakKind]


def _lattice_edges(x64: bool, strict: bool = False) -> dict[_Node, tuple[_Node, ...]]:
    """Each node's immediate successors on JAX's documented promotion lattice.

    Under `jax_numpy_dtype_promotion='strict'` only the weak kinds move: a Python scalar
    still joins any type of its kind or above (i* below f* below c*), but two different
    concrete dtypes have no join.
    """
    if strict:
        concrete = [n for n in _lattice_edges(x64) if not isinstance(n, _WeakKind)]
        ints = [d for d in concrete if issubdtype(d, np.integer)]
        floats = [d for d in concrete if issubdtype(d, np.floating)]
        complexes = [d for d in concrete if issubdtype(d, np.complexfloating)]
        return {_I_WEAK: (*ints, _F_WEAK), _F_WEAK: (*floats, _C_WEAK),
                _C_WEAK: tuple(complexes), **{d: () for d in concrete}}
    return {
        _b1: (_I_WEAK,),
        # Narrow ints hang off i* with no successor: they join only bool and weak ints.
        _I_WEAK: (_u1, _i1, *NARROW_SIGNED_DTYPES, *NARROW_UNSIGNED_DTYPES),
        _u1: (_i2, _u2), _u2: (_i4, _u4),
        # uint32 with int32 needs int64; without x64 JAX joins them at int32 instead.
        _u4: (_i8 if x64 else _i4, _u8),
        _u8: (_F_WEAK,),  # no signed int holds every uint64, so mixed 64-bit ints become f*
        _i1: (_i2,), _i2: (_i4,), _i4: (_i8,), _i8: (_F_WEAK,),
        _F_WEAK: (_C_WEAK, _bf, _f2, *NARROW_FLOAT_DTYPES),
        _bf: (_f4,), _f2: (_f4,), _f4: (_f8, _c4), _f8: (_c8,),
        _C_WEAK: (_c4,), _c4: (_c8,), _c8: (),
        **{d: () for d in (*NARROW_FLOAT_DTYPES, *NARROW_SIGNED_DTYPES,
                           *NARROW_UNSIGNED_DTYPES)},
    }


@functools.lru_cache(maxsize=None)
def _upper_bounds(x64: bool, strict: bool = False) -> dict[_Node, frozenset]:
    """Maps each node to the set of nodes at or above it (reflexive-transitive closure)."""
    edges = _lattice_edges(x64, strict)
    bounds: dict[_Node, frozenset] = {}

    def visit(node: _Node) -> frozenset:
        if node not in bounds:
            above = {node}
            for succ in edges[node]:
                above |= visit(succ)
            bounds[node] = frozenset(above)
        return bounds[node]

    for node in edges:
        visit(node)
    return bounds


@functools.lru_cache(maxsize=1024)
def _join(nodes: frozenset, x64: bool, strict: bool = False) -> _Node:
    """Least upper bound of `nodes`: the common upper bound that lies below all the others."""
    bounds = _upper_bounds(x64, strict)
    for n in nodes:
        if n not in bounds:
            raise ValueError(f"dtype={n!r} is not a valid dtype for JAX type promotion.")
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    for candidate in common:
        if bounds[candidate] == common:
            return candidate
    names = ", ".join(sorted(str(n) for n in nodes))
    if strict:
        raise TypePromotionError(
            f"Input dtypes ({names}) have no available implicit dtype promotion path when "
            "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
            "output type, or set jax_numpy_dtype_promotion=standard.")
    raise TypePromotionError(
        f"Dtypes ({names}) have no implicit promotion path. Narrow types such as 8-bit "
        "floats and 4-bit ints promote only with bool and weak Python scalars, to keep "
        "their precision from changing silently; convert explicitly with .astype(...).")


def _promote_node(x: DTypeLike) -> _Node:
    if isinstance(x, type) and x in _WEAK_OF_TYPE:
        return _WEAK_OF_TYPE[x]
    return _to_np_dtype(x)


def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype:
    """The join of two dtypes on JAX's lattice (mirrors ``jax.numpy.promote_types``).

    The result is not canonicalized: with x64 off, int64 with uint64 still gives float64.
    The Python types int, float and complex act as the weak kinds and widen to 64 bits.
    """
    joined = _join(frozenset((_promote_node(a), _promote_node(b))), _x64(), _strict())
    return joined.wide if isinstance(joined, _WeakKind) else joined


def _kind_node(dt: np.dtype) -> _Node:
    """The weak node for a weakly typed value of dtype `dt` (bool has no weak form)."""
    for abstract, node in ((np.integer, _I_WEAK), (np.floating, _F_WEAK),
                           (np.complexfloating, _C_WEAK)):
        if issubdtype(dt, abstract):
            return node
    return dt


def _result_node(x: Any) -> _Node:
    if x is None:
        return default_float_dtype()  # JAX reads a missing dtype as the default float
    if isinstance(x, type) and x in _WEAK_OF_TYPE:
        return _WEAK_OF_TYPE[x]
    if is_weakly_typed(x):
        return _kind_node(dtype(x, canonicalize=False))
    return dtype(x, canonicalize=True)


def result_type(*args: Any, return_weak_type_flag: bool = False
                ) -> np.dtype | tuple[np.dtype, bool]:
    """The dtype an operation on `args` produces (mirrors ``jax._src.dtypes.result_type``).

    Inputs are canonicalized, joined on the lattice, and the join canonicalized. Weak inputs
    (Python scalars, ``weak_type`` values, the types int/float/complex) join as i*, f*, c*.
    The result is weak when the join is a weak node, e.g. all inputs weak, or int64 with
    uint64 under x64 (whose join is f*).

    Returns
    -------
    np.dtype or (np.dtype, bool)
        The dtype, plus the weak-type flag when `return_weak_type_flag` is set.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    weak_join = _join_of_weak_inputs(args)
    if weak_join is not None and weak_join != np.bool_:
        # All weak: the kind of the join of their widths, at the kind's default width.
        widest = next(wide for abstract, wide in _KIND_DEFAULTS
                      if issubdtype(weak_join, abstract))
        out = canonicalize_dtype(widest)
        return (out, True) if return_weak_type_flag else out
    x64 = _x64()
    nodes = frozenset(_result_node(a) for a in args)
    if len(nodes) > 1 and any(isinstance(n, ExtendedDType) for n in nodes):
        names = ", ".join(sorted(str(n) for n in nodes))
        raise TypeError(f"Dtypes ({names}) have no promotion path: extended dtypes such as "
                        "typed PRNG keys take part in no arithmetic.")
    only = next(iter(nodes))
    if len(nodes) == 1 and only not in _upper_bounds(x64):
        joined: _Node = only  # e.g. float0 with float0: nothing to promote
    else:
        joined = _join(nodes, x64, _strict())
    weak = isinstance(joined, _WeakKind)
    out = canonicalize_dtype(joined.wide if isinstance(joined, _WeakKind) else joined)
    return (out, weak) if return_weak_type_flag else out


def _weak_input_dtype(x: Any) -> np.dtype | None:
    """The width a weak input carries (64 bits for Python scalars and types, a weakly
    typed array's own dtype), or None for a strong input."""
    if isinstance(x, type):
        return dtype(x(0), canonicalize=False) if x in _WEAK_OF_TYPE else None
    if x is None or not is_weakly_typed(x):
        return None
    return dtype(x, canonicalize=False)


def promotion_type(*args: Any) -> tuple[np.dtype, bool]:
    """The (dtype, weak) that jax.numpy's functions convert their operands to (mirrors the
    lattice step of ``jax._src.dtypes.result_type``, used by ``jnp`` promotion).

    As `result_type`, except that a weak result keeps the width of its inputs rather than
    widening to its kind's default: when every input is weak, their own dtypes join (a weak
    float32 array with a Python int gives weak float32, under x64 too).
    """
    joined = _join_of_weak_inputs(args)
    if joined is None:
        return result_type(*args, return_weak_type_flag=True)
    return joined, joined != np.bool_


# The width a weak result takes in `result_type`, by kind (bfloat16 counts as floating).
_KIND_DEFAULTS = ((np.unsignedinteger, np.uint64), (np.integer, np.int64),
                  (np.floating, np.float64), (np.complexfloating, np.complex128))


def _join_of_weak_inputs(args: Sequence[Any]) -> np.dtype | None:
    """The canonical join of the widths of `args` when all are weak (outside strict
    promotion), else None."""
    widths = [_weak_input_dtype(a) for a in args]
    if not args or any(w is None for w in widths) or _strict():
        return None
    joined = _join(frozenset(widths), _x64())
    return canonicalize_dtype(joined.wide if isinstance(joined, _WeakKind) else joined)


# ----------------------------------------------------------------------------- classification

def _scalar_class(x: Any) -> type:
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return _spec(x).type


def issubdtype(a: Any, b: Any) -> bool:
    """NumPy's ``issubdtype`` made aware of ml_dtypes (mirrors ``jax.dtypes.issubdtype``).

    ``issubdtype(bfloat16, np.floating)`` is True, as is ``issubdtype(int4, np.integer)``.
    A concrete `b` such as ``int`` means its dtype (int64), as in NumPy.
    """
    # Dtypes and classes are remembered (eager jnp asks the same few questions per call);
    # values are not: 1 == True as cache keys, yet their dtypes differ.
    if isinstance(a, (np.dtype, type)) and isinstance(b, (np.dtype, type)):
        return _issubdtype_cached(a, b)
    return _issubdtype(a, b)


def _issubdtype(a: Any, b: Any) -> bool:
    a_t, b_t = _scalar_class(a), _scalar_class(b)
    category = _CUSTOM_CATEGORY.get(a_t)
    return a_t is b_t or issubclass(category if category is not None else a_t, b_t)


_issubdtype_cached = functools.lru_cache(maxsize=4096, typed=True)(_issubdtype)


_ISDTYPE_KINDS: dict[str, type] = {
    "bool": np.bool_, "signed integer": np.signedinteger,
    "unsigned integer": np.unsignedinteger, "integral": np.integer,
    "real floating": np.floating, "complex floating": np.complexfloating, "numeric": np.number,
}


def isdtype(dtype: DTypeLike, kind: Any) -> bool:
    """Array API kind test (mirrors ``jax.numpy.isdtype``).

    `kind` is a dtype, one of the names 'bool', 'signed integer', 'unsigned integer',
    'integral', 'real floating', 'complex floating', 'numeric', or a tuple of those.
    """
    dt = _to_np_dtype(dtype)
    for k in (kind if isinstance(kind, tuple) else (kind,)):
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise ValueError(f"Unrecognized kind={k!r}; expected one of "
                                 f"{list(_ISDTYPE_KINDS)}, or a dtype.")
            if issubdtype(dt, _ISDTYPE_KINDS[k]):
                return True
            continue
        try:
            k_dt = _to_np_dtype(k)
        except TypeError:  # abstract classes such as np.integer are not dtypes
            raise TypeError("Expected kind to be a dtype, string, or tuple; "
                            f"got kind={k!r}") from None
        if dt == k_dt:
            return True
    return False


def _kind_test(abstract: type) -> Callable[[DTypeLike], bool]:
    def test(x: DTypeLike) -> bool:
        return issubdtype(_spec(x), abstract)
    return test


is_bool = _kind_test(np.bool_)
is_bool.__doc__ = "True when `x` (a dtype-like or value) has boolean dtype."
is_integer = _kind_test(np.integer)
is_integer.__doc__ = "True for signed and unsigned integer dtypes (not bool)."
is_signed_integer = _kind_test(np.signedinteger)
is_signed_integer.__doc__ = "True for signed integer dtypes."
is_unsigned = _kind_test(np.unsignedinteger)
is_unsigned.__doc__ = "True for unsigned integer dtypes."
is_floating = _kind_test(np.floating)
is_floating.__doc__ = "True for real floating dtypes, bfloat16 and the ml_dtypes floats too."
is_complex = _kind_test(np.complexfloating)
is_complex.__doc__ = "True for complex dtypes."
is_inexact = _kind_test(np.inexact)
is_inexact.__doc__ = "True for real floating and complex dtypes."


# ----------------------------------------------------------------------------- conversions

def to_inexact_dtype(dtype_: DTypeLike) -> np.dtype:
    """The floating type an int or bool is computed in (mirrors JAX's ``to_inexact_dtype``).

    64-bit integers map to float64 and narrower ones (and bool) to float32; inexact types are
    returned unchanged. Not canonicalized: callers canonicalize afterwards, as ``jnp.sin`` does.
    """
    dt = _spec(dtype_)
    if is_inexact(dt):
        return dt
    if not (is_integer(dt) or is_bool(dt)):
        raise TypeError(f"{dt} has no inexact counterpart")
    return _f8 if dt.itemsize == 8 else _f4


def to_complex_dtype(dtype_: DTypeLike) -> np.dtype:
    """The complex type holding `dtype_`: complex128 for 64-bit inputs, else complex64."""
    dt = to_inexact_dtype(dtype_)
    if is_complex(dt):
        return dt
    return _c8 if dt == _f8 else _c4


def real_dtype(dtype_: DTypeLike) -> np.dtype:
    """The real part's type of a complex dtype; other dtypes are returned unchanged."""
    dt = _spec(dtype_)
    return {_c4: _f4, _c8: _f8}.get(dt, dt)


def to_floating_dtype(dtype_: DTypeLike) -> np.dtype:
    """A real floating type: complex gives its real part, ints as in `to_inexact_dtype`."""
    return real_dtype(to_inexact_dtype(dtype_))


def to_numeric_dtype(dtype_: DTypeLike) -> np.dtype:
    """bool becomes int32 (as in JAX, whatever the x64 flag); numeric dtypes are kept."""
    dt = _spec(dtype_)
    return _i4 if dt == _b1 else dt


def itemsize_bits(dtype: DTypeLike) -> int:
    """Bits per element (mirrors ``jax.dtypes.itemsize_bits``); int4 gives 4, bool 8."""
    dt = _spec(dtype)
    category = _CUSTOM_CATEGORY.get(dt.type)
    if category is np.floating:
        return int(ml_dtypes.finfo(dt).bits)
    if category is not None:
        return int(ml_dtypes.iinfo(dt).bits)
    return dt.itemsize * 8


class _InfoType(type):
    # The constructors below hand back ml_dtypes' own (cached) objects, as JAX's
    # `jnp.finfo` (ml_dtypes' class) does; isinstance accepts those objects.
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.__mro__[1])


class finfo(ml_dtypes.finfo, metaclass=_InfoType):
    """Machine limits of a floating type, bfloat16 included (mirrors ``jax.numpy.finfo``).

    Takes a dtype, a scalar type, an array or a value; a complex type gives the limits of
    its real part.
    """

    def __new__(cls, dtype_: DTypeLike) -> ml_dtypes.finfo:
        if type(dtype_) in (bool, int, float, complex):
            # A Python value names no width (numpy would answer for float64).
            raise TypeError(f"Cannot interpret '{dtype_!r}' as a data type")
        return ml_dtypes.finfo(_spec(dtype_))


class iinfo(ml_dtypes.iinfo, metaclass=_InfoType):
    """Machine limits of an integer type, int4 included (mirrors ``jax.numpy.iinfo``)."""

    def __new__(cls, int_type: DTypeLike) -> ml_dtypes.iinfo:
        return ml_dtypes.iinfo(_spec(int_type))
