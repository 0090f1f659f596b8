"""Functions that apply other functions: vectorize, apply_along_axis, apply_over_axes,
piecewise.

Mirrors `jax.numpy`'s functional helpers. `vectorize` and `apply_along_axis` are built on
the batching transformation, as in JAX: the function is traced once on one element (or one
core slice), and the batching rules of its primitives make it work on the whole array, so
the result is a handful of array operations rather than a Python loop. The batching entry
point comes through `jaxlite.lax._control_flow_util`, the lax module that already batches
the bodies of loops; jaxlite.numpy may not import the interpreters itself.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.lax._control_flow_util import vmap_flat
from jaxlite.numpy._promotion import (broadcast_shapes, broadcast_to_shape, canonicalize_axis,
                                      convert, ensure_array)
from jaxlite.numpy._shape import expand_dims, moveaxis, reshape

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "piecewise"]


# ------------------------------------------------------------------------ batching helper

def map_leading_axis(fun: Callable[..., Any], args: Sequence[Any],
                     mapped: Sequence[bool], size: int) -> list[Any]:
    """`fun` applied to slices along axis 0 of the `mapped` arguments (others passed whole),
    its outputs (a list of arrays) stacked along a new axis 0."""
    in_dims = [0 if m else None for m in mapped]
    return vmap_flat(lambda *a: list(fun(*a)), size, list(args), in_dims, 0, axis_name=None)


# ------------------------------------------------------------------------ signatures

_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*({_DIMS}(?:,\s*{_DIMS})*)\s*->\s*({_DIMS}(?:,\s*{_DIMS})*)\s*$")


def _parse_dims(part: str) -> list[tuple[str, ...]]:
    groups = re.findall(r"\(([^)]*)\)", part)
    return [tuple(d.strip() for d in group.split(",") if d.strip()) for group in groups]


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The core dimension names of the inputs and outputs of a gufunc signature such as
    '(m,n),(n)->(m)'."""
    match = _SIGNATURE.match(signature)
    if match is None:
        raise ValueError(f"not a valid gufunc signature: {signature!r} (expected something "
                         "like '(m,n),(n)->(m)').")
    return _parse_dims(match.group(1)), _parse_dims(match.group(2))


# ------------------------------------------------------------------------ vectorize

class _Vectorized:
    """What `vectorize` returns: the wrapped function, called through batching."""

    def __init__(self, pyfunc: Callable[..., Any], excluded: frozenset,
                 signature: str | None) -> None:
        self.pyfunc = pyfunc
        self.excluded = excluded
        self.signature = signature
        self.core = parse_signature(signature) if signature is not None else None
        functools.update_wrapper(self, pyfunc)

    def _error(self, message: str) -> ValueError:
        return ValueError(f"{message} on vectorized function with excluded={self.excluded!r} "
                          f"and signature={self.signature!r}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = [k for k in kwargs if k not in self.excluded]
        static = {k: v for k, v in kwargs.items() if k in self.excluded}
        positions = [i for i in range(len(args)) if i not in self.excluded]
        values = [ensure_array(np.asarray(v) if isinstance(v, (list, tuple)) else v)
                  for v in [args[i] for i in positions] + [kwargs[k] for k in names]]

        def call(*mapped: Any) -> Any:
            full = list(args)
            for i, value in zip(positions, mapped):
                full[i] = value
            named = dict(zip(names, mapped[len(positions):]))
            return self.pyfunc(*full, **static, **named)

        return self._apply(call, values)

    def _core_dims(self, values: Sequence[Any]) -> tuple[list, list | None, dict]:
        """Input core dims per value, output core dims, and the size of each named dim."""
        if self.core is None:
            return [()] * len(values), None, {}
        in_core, out_core = self.core
        if len(in_core) != len(values):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_core)}, "
                            f"got {len(values)}")
        sizes: dict[str, int] = {}
        for value, dims in zip(values, in_core):
            shape = np.shape(value)
            if len(dims) > len(shape):
                raise self._error(f"input with shape {shape} does not have enough dimensions "
                                  f"for all core dimensions {dims}")
            for name, size in zip(dims, shape[len(shape) - len(dims):]):
                if sizes.setdefault(name, size) != size:
                    raise self._error(f"inconsistent size for core dimension {name!r}: "
                                      f"{size} vs {sizes[name]}")
        return in_core, out_core, sizes

    def _apply(self, call: Callable[..., Any], values: list[Any]) -> Any:
        in_core, out_core, sizes = self._core_dims(values)
        loop_shapes = [np.shape(v)[:np.ndim(v) - len(dims)] for v, dims in zip(values, in_core)]
        loop_shape = broadcast_shapes("vectorize", *loop_shapes)
        size = int(np.prod(loop_shape, dtype=np.int64))
        structure: list[Any] = []

        def one_element(*elements: Any) -> list[Any]:
            out = call(*elements)
            structure.append(isinstance(out, tuple))
            outs = [ensure_array(o) for o in (out if isinstance(out, tuple) else (out,))]
            self._check_outputs(outs, out_core, sizes)
            return outs

        mapped = [bool(loop) and any(s != 1 for s in loop) for loop in loop_shapes]
        flat_args = [_flatten_loop(v, loop_shape, len(dims)) if m
                     else _drop_loop(v, len(dims))
                     for v, dims, m in zip(values, in_core, mapped)]
        if not any(mapped):
            outs = one_element(*flat_args)
            outs = [broadcast_to_shape(o, loop_shape + np.shape(o)) for o in outs]
        else:
            outs = map_leading_axis(one_element, flat_args, mapped, size)
            outs = [reshape(o, loop_shape + np.shape(o)[1:]) for o in outs]
        return tuple(outs) if structure[0] else outs[0]

    def _check_outputs(self, outs: list[Any], out_core: list | None, sizes: dict) -> None:
        if out_core is None:
            return
        if len(outs) != len(out_core):
            raise self._error(f"wrong number of outputs from vectorized function: expected "
                              f"{len(out_core)}, got {len(outs)}")
        for out, dims in zip(outs, out_core):
            shape = np.shape(out)
            if len(shape) != len(dims):
                raise self._error(f"output shape {shape} does not match core dimensions "
                                  f"{dims}")
            for name, size in zip(dims, shape):
                if sizes.setdefault(name, size) != size:
                    raise self._error(f"inconsistent size for core dimension {name!r}: "
                                      f"{size} vs {sizes[name]}")


def _flatten_loop(value: Any, loop_shape: tuple[int, ...], core_ndim: int) -> Any:
    """`value` broadcast to `loop_shape` in its loop dims, which are then merged into one."""
    core_shape = np.shape(value)[np.ndim(value) - core_ndim:]
    full = broadcast_to_shape(value, loop_shape + core_shape)
    return reshape(full, (int(np.prod(loop_shape, dtype=np.int64)),) + core_shape)


def _drop_loop(value: Any, core_ndim: int) -> Any:
    """`value` without its loop dims, which are all of size 1."""
    return reshape(value, np.shape(value)[np.ndim(value) - core_ndim:])


def vectorize(pyfunc: Callable[..., Any], *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """Turn a function of scalars (or of core arrays) into one that broadcasts over arrays
    (mirrors `jax.numpy.vectorize`).

    Parameters
    ----------
    pyfunc : the function to vectorize; it is traced once, on one element, and batched.
    excluded : positions (ints) or keyword names (strs) of arguments passed through whole.
    signature : a generalized-ufunc signature such as '(n),(n)->()': the core dimensions
        that `pyfunc` sees of each argument and returns for each output; other leading
        dimensions are broadcast together and looped over.

    Differences from JAX: keyword arguments that are not excluded are vectorized like
    positional ones, as in numpy (JAX 0.10.2 passes them in an inconsistent way).
    """
    if not callable(pyfunc):
        raise TypeError(f"vectorize: expected a function, got {pyfunc!r}.")
    return _Vectorized(pyfunc, frozenset(excluded), signature)


# ------------------------------------------------------------------------ along axes

def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """Apply `func1d` to every 1-d slice of `arr` along `axis` (`jax.numpy.apply_along_axis`).

    The dimensions of `func1d`'s result take the place of `axis` in the output. Extra
    `args` and `kwargs` are passed to every call unchanged.
    """
    arr = ensure_array(arr)
    axis = canonicalize_axis(axis, np.ndim(arr))
    moved = moveaxis(arr, axis, -1)
    loop_shape = np.shape(moved)[:-1]
    size = int(np.prod(loop_shape, dtype=np.int64))
    flat = reshape(moved, (size, np.shape(moved)[-1]))
    (out,) = map_leading_axis(lambda row: [ensure_array(func1d(row, *args, **kwargs))],
                              [flat], [True], size)
    out = reshape(out, loop_shape + np.shape(out)[1:])
    out_ndim = np.ndim(out) - len(loop_shape)
    # The result's own dims sit after the loop dims; move them to where `axis` was.
    order = (list(range(axis)) + list(range(len(loop_shape), np.ndim(out)))
             + list(range(axis, len(loop_shape))))
    return lax.transpose(out, tuple(order)) if out_ndim else out


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Any:
    """Apply `func(a, axis)` for each axis in turn, keeping the rank (`jnp.apply_over_axes`).

    `func` must return an array of the same rank or one less; a reduced axis is put back
    with size 1, as numpy does.
    """
    a = ensure_array(a)
    for axis in (axes if isinstance(axes, (list, tuple)) else [axes]):
        out = ensure_array(func(a, axis))
        if np.ndim(out) == np.ndim(a) - 1:
            out = expand_dims(out, axis)
        elif np.ndim(out) != np.ndim(a):
            raise ValueError(f"apply_over_axes: func must return an array of rank "
                             f"{np.ndim(a)} or {np.ndim(a) - 1}, got shape {np.shape(out)} "
                             f"for axis {axis}.")
        a = out
    return a


# ------------------------------------------------------------------------ piecewise

def piecewise(x: Any, condlist: Any, funclist: list[Any], *args: Any, **kw: Any) -> Any:
    """Evaluate pieces of a function chosen by conditions (mirrors `jax.numpy.piecewise`).

    Parameters
    ----------
    x : the input array.
    condlist : a sequence of bool arrays shaped like `x` (a later true condition wins).
    funclist : one function or constant per condition, plus optionally a default for the
        entries where no condition holds (else 0). Functions get `x`, `*args`, `**kw` and
        are evaluated everywhere; the result has `x`'s dtype.
    """
    x = ensure_array(x)
    conditions = [ensure_array(c) for c in (condlist if isinstance(condlist, (list, tuple))
                                            else list(ensure_array(condlist)))]
    if len(funclist) not in (len(conditions), len(conditions) + 1):
        raise ValueError(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                         f"{len(conditions) + 1} functions are expected; got {len(funclist)}")

    def piece(f: Any) -> Any:
        value = f(x, *args, **kw) if callable(f) else f
        return broadcast_to_shape(convert(value, x.dtype), np.shape(x))

    default = funclist[len(conditions)] if len(funclist) > len(conditions) else 0
    out = piece(default)
    for condition, f in zip(conditions, funclist):
        condition = broadcast_to_shape(lax.convert_element_type(condition, np.bool_),
                                       np.shape(x))
        out = lax.select(condition, piece(f), out)
    return out

