"""`jnp.ufunc`: a function object with numpy's ufunc methods, and `frompyfunc`.

Mirrors `jax.numpy.ufunc`. A ufunc wraps an elementwise function of `nin` arrays and adds
`reduce`, `accumulate`, `at`, `outer` and `reduceat`. Each method may be given a fast
implementation (`jnp.add.reduce` is `jnp.sum`); otherwise it folds the function along an
axis with `lax.scan`, which works for any binary function but runs one step per element.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy._functional import vectorize
from jaxlite.numpy._promotion import (broadcast_to_shape, canonicalize_axis, convert,
                                      ensure_array, user_dtype)
from jaxlite.numpy._shape import moveaxis, ravel, reshape

__all__ = ["ufunc", "frompyfunc"]


class ufunc:  # noqa: N801 (numpy's name)
    """An elementwise function with numpy's ufunc methods (mirrors `jax.numpy.ufunc`).

    Parameters
    ----------
    func : the elementwise function of `nin` arguments, returning `nout` arrays.
    nin, nout : how many inputs and outputs it has.
    name : the name shown in `repr` (default: `func.__name__`).
    nargs : nin + nout unless given.
    identity : the value of a reduction over nothing (None: such reductions fail).
    call, reduce, accumulate, at, reduceat : fast implementations of the methods, with the
        signatures of the methods below; the generic versions fold `func` with `lax.scan`.
    """

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 name: str | None = None, nargs: int | None = None, identity: Any = None,
                 call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None,
                 accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None,
                 reduceat: Callable[..., Any] | None = None) -> None:
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs) if nargs is not None else self.nin + self.nout
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", repr(func))
        self.__doc__ = getattr(func, "__doc__", None)
        self._call = call or vectorize(func)
        self._reduce, self._accumulate = reduce, accumulate
        self._at, self._reduceat = at, reduceat

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __hash__(self) -> int:
        return hash((self._func, self.nin, self.nout, self.identity, self.__name__))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and hash(self) == hash(other)

    def _no_option(self, what: str, value: Any) -> None:
        if value is not None:
            raise NotImplementedError(f"{what} argument of {self!r} is not supported: "
                                      "jaxlite arrays are immutable; use the return value.")

    def _binary_only(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs (with one output); "
                             f"{self!r} has nin={self.nin}, nout={self.nout}.")

    def _output_dtype(self, dtype: np.dtype) -> np.dtype:
        """The dtype the function gives for inputs of `dtype` (logical_and of ints gives
        bool, logaddexp float), found by calling it on zeros."""
        zero = lax.full((), 0, dtype)
        return ensure_array(self._func(*[zero] * self.nin)).dtype

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        self._no_option("out", out)
        self._no_option("where", where)
        return self._call(*args)

    # -------------------------------------------------------------------- reduce

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """Fold the function over `axis` (numpy's `ufunc.reduce`); `axis=None` folds all."""
        self._binary_only("reduce")
        self._no_option("out", out)
        if self._reduce is not None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                                where=where)
        return self._reduce_by_scan(a, axis, dtype, keepdims, initial, where)

    def _reduce_by_scan(self, a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any,
                        where: Any) -> Any:
        a = _with_dtype(a, dtype, "reduce")
        if where is not None:
            where = broadcast_to_shape(ensure_array(where), np.shape(a))
        if isinstance(axis, tuple) and len(axis) != 1:
            if len(axis) == 0:
                return a
            raise NotImplementedError(f"{self!r}.reduce over a tuple of axes needs a fast "
                                      "reduce; fold one axis at a time.")
        if axis is None:
            kept_shape = (1,) * np.ndim(a)
            a, where = ravel(a), None if where is None else ravel(where)
            axis = 0
        else:
            axis = canonicalize_axis(axis[0] if isinstance(axis, tuple) else axis, np.ndim(a))
            kept_shape = np.shape(a)[:axis] + (1,) + np.shape(a)[axis + 1:]
        if initial is None and where is not None:
            if self.identity is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'.")
            initial = self.identity
        out = self._fold(moveaxis(a, axis, 0), initial,
                         None if where is None else moveaxis(where, axis, 0))
        return reshape(out, kept_shape) if keepdims else out

    def _fold(self, x: Any, initial: Any, mask: Any) -> Any:
        """The function folded over axis 0 of `x`, from `initial` (else from x[0]),
        skipping the entries where `mask` is False."""
        mask = lax.full(np.shape(x), True) if mask is None else mask
        if initial is None:
            if np.shape(x)[0] == 0:
                if self.identity is None:
                    raise ValueError(f"zero-size array to reduction operation "
                                     f"{self.__name__} which has no identity")
                initial = self.identity
            else:
                initial, x, mask = x[0], x[1:], mask[1:]
        dtype = self._output_dtype(x.dtype)
        carry = broadcast_to_shape(convert(initial, dtype), np.shape(x)[1:])
        return lax.scan(lambda c, item: (self._step(c, *item), None), carry, (x, mask))[0]

    def _step(self, carry: Any, item: Any, keep: Any) -> Any:
        new = convert(self._func(carry, item), carry.dtype)
        return lax.select(keep, new, carry)

    # -------------------------------------------------------------------- accumulate

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """Running folds of the function along `axis` (numpy's `ufunc.accumulate`)."""
        self._binary_only("accumulate")
        self._no_option("out", out)
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        a = _with_dtype(a, dtype, "accumulate")
        axis = canonicalize_axis(axis, np.ndim(a))
        x = moveaxis(a, axis, 0)
        dtype = self._output_dtype(x.dtype)
        if np.shape(x)[0] == 0:
            return convert(a, dtype)

        def step(carry: Any, item: Any) -> tuple[Any, Any]:
            new = convert(self._func(carry, item), dtype)
            return new, new

        start = convert(x[0], dtype)
        _, rest = lax.scan(step, start, x[1:])
        return moveaxis(lax.concatenate([start[None], rest], 0), 0, axis)

    # -------------------------------------------------------------------- outer

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803 (numpy's names)
        """The function on every pair (a, b): shape A.shape + B.shape (`ufunc.outer`)."""
        self._binary_only("outer")
        A, B = ensure_array(A), ensure_array(B)
        return self(reshape(A, np.shape(A) + (1,) * np.ndim(B)), B)

    # -------------------------------------------------------------------- at

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """`a` with the function applied at `indices`, once per occurrence of an index
        (numpy's unbuffered `ufunc.at`); pass `inplace=False`, since arrays are immutable.
        """
        if inplace:
            raise NotImplementedError(
                f"{self!r}.at cannot work in place like numpy's, because jaxlite arrays are "
                "immutable. Pass inplace=False and use the result: "
                f"a = jnp.{self.__name__}.at(a, indices, b, inplace=False).")
        if (b is None) != (self.nin == 1):
            raise ValueError(f"{self!r}.at takes {'no' if self.nin == 1 else 'one'} "
                             "operand b besides the array and the indices.")
        if self._at is not None:
            return self._at(a, indices, b)
        return self._at_by_scan(ensure_array(a), indices, b)

    def _at_by_scan(self, a: Any, indices: Any, b: Any) -> Any:
        index = tuple(ensure_array(i) for i in (indices if isinstance(indices, tuple)
                                                  else (indices,)))
        shape = np.broadcast_shapes(*(np.shape(i) for i in index))
        count = int(np.prod(shape, dtype=np.int64))
        if count == 0:
            return a
        flat = tuple(ravel(broadcast_to_shape(i, shape)) for i in index)
        tail = np.shape(a)[len(index):]
        operands = None if b is None else reshape(
            broadcast_to_shape(ensure_array(b), shape + tail), (count,) + tail)
        apply = (lambda current, operand: self._func(current)) if b is None else self._func
        # The result takes the function's dtype (logical_and.at of ints gives bools).
        dtype = self._output_dtype(a.dtype)
        a = convert(a, dtype)

        def step(carry: Any, item: Any) -> tuple[Any, None]:
            where, operand = item
            return carry.at[where].set(convert(apply(carry[where], operand), dtype)), None

        return lax.scan(step, a, (flat, operands))[0]

    # -------------------------------------------------------------------- reduceat

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """Folds over the slices between consecutive `indices` along `axis`
        (numpy's `ufunc.reduceat`): a[i:j] folded when i < j, else a[i] alone."""
        self._binary_only("reduceat")
        self._no_option("out", out)
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        a = _with_dtype(a, dtype, "reduceat")
        axis = canonicalize_axis(axis, np.ndim(a))
        x = moveaxis(a, axis, 0)
        size = np.shape(x)[0]
        starts = ensure_array(indices)
        if np.ndim(starts) != 1:
            raise ValueError(f"{self!r}.reduceat: indices must be 1-d, got shape "
                             f"{np.shape(starts)}.")
        ends = lax.concatenate([starts[1:], lax.full((1,), size, starts.dtype)], 0)
        # All segments are folded at once: the carry holds one running value per segment,
        # and element k joins segment s when start_s < k < end_s.
        carry = x[starts]  # JAX keeps the input dtype here (logical_and.reduceat of ints)
        positions = lax.iota(starts.dtype, size)
        inside = lax.bitwise_and(lax.lt(starts[:, None], positions[None, :]),
                                 lax.lt(positions[None, :], ends[:, None]))
        lead = (slice(None),) + (None,) * (np.ndim(x) - 1)

        def step(c: Any, item: Any) -> tuple[Any, None]:
            value, keep = item
            new = convert(self._func(c, value), c.dtype)
            return lax.select(broadcast_to_shape(keep[lead], np.shape(c)), new, c), None

        out = lax.scan(step, carry, (x, moveaxis(inside, 1, 0)))[0]
        return moveaxis(out, 0, axis)


def _with_dtype(a: Any, dtype: Any, method: str) -> Any:
    a = ensure_array(a)
    return a if dtype is None else convert(a, user_dtype(dtype, method))


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A `ufunc` from a function of scalars, vectorized with `jnp.vectorize`
    (mirrors `jax.numpy.frompyfunc`)."""
    return ufunc(func, nin, nout, identity=identity)
