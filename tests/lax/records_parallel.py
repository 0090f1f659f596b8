"""Test records of the collectives (jaxlite.lax.parallel and parallel_exchange).

A collective only runs where a map binds its axis, so each case's function is the
collective under nested `vmap`s with axis names over the leading axes of its argument: one
axis "i", or two, "i" and "j", of random sizes; the names a case uses may be a subset of
the mesh, in either order. The references loop over the members in numpy: a member's
group is the members that differ from it only along the named axes, numbered with the
first name major (JAX's convention; ppermute numbers them in mesh order, as JAX's device
groups are sorted). The shared tests then wrap these maps in an unnamed vmap (the
collectives' rules for other axes), differentiate them, and jit them.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

import jaxlite as jax
from jaxlite import lax
from records import Case, Record, standard_values

MESH_NAMES = ("i", "j")


# ------------------------------------------------------------------------ members

def _mesh(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(1, 3))))


def _names(rng: np.random.Generator, mesh: tuple[int, ...]) -> tuple[str, ...]:
    """A nonempty subset of the mesh's names, in random order."""
    names = [n for n in MESH_NAMES[:len(mesh)] if rng.random() < 0.7] or ["i"]
    rng.shuffle(names)
    return tuple(names)


def _group(member: tuple, names: tuple, mesh: tuple) -> list[tuple]:
    """The members combined with `member` by a collective over `names`, in their order."""
    positions = [MESH_NAMES.index(n) for n in names]
    out = []
    for coords in itertools.product(*(range(mesh[p]) for p in positions)):
        other = list(member)
        for p, c in zip(positions, coords):
            other[p] = c
        out.append(tuple(other))
    return out


def _mapped(fun: Callable[[Any], Any], mesh: tuple) -> Callable[[Any], Any]:
    """`fun` on every member: vmaps named "i" (outer), "j" over the leading axes."""
    for name in reversed(MESH_NAMES[:len(mesh)]):
        fun = jax.vmap(fun, axis_name=name)
    return fun


def _per_member(x: np.ndarray, mesh: tuple, rule: Callable[[tuple], np.ndarray]) -> np.ndarray:
    members = list(itertools.product(*map(range, mesh)))
    outs = [np.asarray(rule(m)) for m in members]
    return np.stack(outs).reshape(mesh + outs[0].shape)


def _member_shape(rng: np.random.Generator, first: int | None = None) -> tuple[int, ...]:
    shape = [int(s) for s in rng.integers(1, 4, int(rng.integers(1, 3)))]
    if first is not None:
        shape[0] = first
    return tuple(shape)


def _values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Small integers (exact sums) for floats; distinct generic values for float64, where
    the derivative checks run."""
    if np.dtype(dtype) == np.float64:
        return rng.standard_normal(shape)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-8, 9, shape).astype(dtype)
    return standard_values(rng, shape, dtype)


def _case(fun: Callable, reference: Callable, x: np.ndarray, mesh: tuple) -> Case:
    return Case(_mapped(fun, mesh), reference, [x],
                values=lambda rng, shape, dtype: _values(rng, shape, dtype))


# ------------------------------------------------------------------------ reductions

def _reduction_case(api: Callable, combine: Callable) -> Callable:
    def make(rng: np.random.Generator, dtype: Any) -> Case:
        mesh = _mesh(rng)
        names = _names(rng, mesh)
        x = _values(rng, mesh + _member_shape(rng), dtype)
        fun = lambda v: api(v, names)  # noqa: E731

        def reference(x):
            return _per_member(x, mesh, lambda m: combine(
                [x[k] for k in _group(m, names, mesh)]).astype(x.dtype))
        return _case(fun, reference, x, mesh)
    return make


def _sum(values: list) -> np.ndarray:
    return np.sum(values, axis=0, dtype=values[0].dtype)


# ------------------------------------------------------------------------ data movement

def _all_gather_case(rng: np.random.Generator, dtype: Any) -> Case:
    mesh = _mesh(rng)
    names = _names(rng, mesh)
    shape = _member_shape(rng)
    tiled = bool(rng.random() < 0.5)
    axis = int(rng.integers(0, len(shape) + (not tiled)))
    x = _values(rng, mesh + shape, dtype)
    fun = lambda v: lax.all_gather(v, names, axis=axis, tiled=tiled)  # noqa: E731
    join = np.concatenate if tiled else np.stack

    def reference(x):
        return _per_member(x, mesh, lambda m: join(
            [x[k] for k in _group(m, names, mesh)], axis=axis))
    return _case(fun, reference, x, mesh)


def _reduce_scatter_case(rng: np.random.Generator, dtype: Any) -> Case:
    mesh = _mesh(rng)
    names = _names(rng, mesh)
    size = int(np.prod([mesh[MESH_NAMES.index(n)] for n in names]))
    tiled = bool(rng.random() < 0.5)
    chunk = int(rng.integers(1, 3)) if tiled else 1
    shape = list(_member_shape(rng))
    dim = int(rng.integers(0, len(shape)))
    shape[dim] = size * chunk
    x = _values(rng, mesh + tuple(shape), dtype)
    fun = lambda v: lax.psum_scatter(v, names, scatter_dimension=dim,  # noqa: E731
                                     tiled=tiled)

    def reference(x):
        def rule(m):
            group = _group(m, names, mesh)
            total = _sum([x[k] for k in group])
            part = np.split(total, size, axis=dim)[group.index(m)]
            return part if tiled else np.squeeze(part, dim)
        return _per_member(x, mesh, rule)
    return _case(fun, reference, x, mesh)


def _all_to_all_case(rng: np.random.Generator, dtype: Any) -> Case:
    mesh = _mesh(rng)
    names = _names(rng, mesh)
    size = int(np.prod([mesh[MESH_NAMES.index(n)] for n in names]))
    tiled = bool(rng.random() < 0.5)
    shape = list(_member_shape(rng))
    split = int(rng.integers(0, len(shape)))
    concat = int(rng.integers(0, len(shape)))
    shape[split] = size * (int(rng.integers(1, 3)) if tiled else 1)
    x = _values(rng, mesh + tuple(shape), dtype)
    fun = lambda v: lax.all_to_all(v, names, split, concat, tiled=tiled)  # noqa: E731

    def reference(x):
        def rule(m):
            group = _group(m, names, mesh)
            chunks = [np.split(x[k], size, axis=split)[group.index(m)] for k in group]
            if tiled:
                return np.concatenate(chunks, axis=concat)
            return np.stack([np.squeeze(c, split) for c in chunks], axis=concat)
        return _per_member(x, mesh, rule)
    return _case(fun, reference, x, mesh)


def _perm(rng: np.random.Generator, size: int) -> list[tuple[int, int]]:
    """A random permutation with some pairs left out (those members receive zeros)."""
    targets = rng.permutation(size)
    return [(s, int(t)) for s, t in enumerate(targets) if rng.random() < 0.8]


def _ppermute_case(rng: np.random.Generator, dtype: Any) -> Case:
    mesh = _mesh(rng)
    names = _names(rng, mesh)
    size = int(np.prod([mesh[MESH_NAMES.index(n)] for n in names]))
    perm = _perm(rng, size)
    x = _values(rng, mesh + _member_shape(rng), dtype)
    fun = lambda v: lax.ppermute(v, names, perm)  # noqa: E731
    in_mesh_order = tuple(n for n in MESH_NAMES if n in names)

    def reference(x):
        def rule(m):
            group = _group(m, in_mesh_order, mesh)
            sources = [s for s, t in perm if t == group.index(m)]
            return x[group[sources[0]]] if sources else np.zeros_like(x[m])
        return _per_member(x, mesh, rule)
    return _case(fun, reference, x, mesh)


def _pbroadcast_case(rng: np.random.Generator, dtype: Any) -> Case:
    mesh = _mesh(rng)
    names = _names(rng, mesh)
    size = int(np.prod([mesh[MESH_NAMES.index(n)] for n in names]))
    source = int(rng.integers(0, size))
    x = _values(rng, mesh + _member_shape(rng), dtype)
    fun = lambda v: lax.pbroadcast(v, names, source)  # noqa: E731

    def reference(x):
        return _per_member(x, mesh, lambda m: x[_group(m, names, mesh)[source]])
    return _case(fun, reference, x, mesh)


def _axis_index_case(rng: np.random.Generator, dtype: Any) -> Case:
    mesh = _mesh(rng)
    names = _names(rng, mesh)
    x = _values(rng, mesh + (2,), dtype)
    # The index, combined with the member's value so that the function has an input.
    fun = lambda v: v * lax.axis_index(names).astype(v.dtype)  # noqa: E731

    def reference(x):
        return _per_member(x, mesh, lambda m: x[m] * np.asarray(
            _group(m, names, mesh).index(m), x.dtype))
    return _case(fun, reference, x, mesh)


FLOAT_INT = (np.float32, np.int32)
RECORDS = [
    Record("psum", _reduction_case(lax.psum, _sum), dtypes=FLOAT_INT + (np.complex64,)),
    Record("pmax", _reduction_case(lax.pmax, lambda v: np.max(v, axis=0)),
           dtypes=FLOAT_INT, grad=False, notes="no derivative in JAX"),
    Record("pmin", _reduction_case(lax.pmin, lambda v: np.min(v, axis=0)),
           dtypes=FLOAT_INT, grad=False, notes="no derivative in JAX"),
    Record("all_gather", _all_gather_case, dtypes=FLOAT_INT),
    Record("reduce_scatter", _reduce_scatter_case, dtypes=FLOAT_INT),
    Record("all_to_all", _all_to_all_case, dtypes=FLOAT_INT),
    Record("ppermute", _ppermute_case, dtypes=FLOAT_INT),
    Record("pbroadcast", _pbroadcast_case, dtypes=FLOAT_INT),
    Record("axis_index", _axis_index_case, dtypes=(np.float32,)),
]
