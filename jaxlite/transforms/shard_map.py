"""`jaxlite.shard_map` and `jaxlite.smap` (mirror `jax.shard_map` and `jax.smap`).

Each manual mesh axis of size > 1 splits the arguments as their `in_specs` say: an
argument is rearranged into its per-device blocks, stacked on one leading axis per mesh
axis it is split over (`mesh_blocks.to_blocks`), and `f` runs under one `vmap` per manual
mesh axis, bound to the axis name, so that the collectives of `jaxlite.lax` (psum, pmean,
pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute, axis_index) compute across
the devices' blocks with the numbers JAX's give. An argument its spec does not split over
an axis is not mapped over it (every device sees the same value). The results are laid
back out as `out_specs` say (`mesh_blocks.from_blocks`): an axis a spec does not name keeps
the first device's value, an axis it names that the result does not vary over tiles the
copies. Eager results are placed on the mesh's devices (`NamedSharding(mesh, out_spec)`);
under `jit` a sharding constraint makes the jitted call place them so.

Mesh axes of size 1 are bound by a map of size 1 over nothing (`vmap_flat` with every input
unmapped), so the inputs stay unbatched (a `cond` on them stays a `cond`); results that
the collectives made per-member lose the size-1 axis again.

The specs are validated as JAX validates them: `in_specs` / `out_specs` must be pytree
prefixes of the arguments / results holding `PartitionSpec`s (or None leaves in `in_specs`,
for static arguments) that name only manual mesh axes, are no longer than the arrays'
ranks and split dimensions evenly; the mesh comes from `mesh=` or `jax.set_mesh`.

The whole computation runs as one batched program on the host (the devices share its
memory); the SPMD partitioner will run one program per device with collectives between
them, from the same specs.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.avals import get_aval
from jaxlite.core.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec
from jaxlite.core.sharding_rules import types_suspended, vma_checked
from jaxlite.core.trace import Tracer, current_trace
from jaxlite.interpreters.batching import vmap_flat
from jaxlite.lax.shape_ops import squeeze
from jaxlite.lax.sharding_constraint import sharding_constraint_p
from jaxlite.runtime.array import Array, ArrayImpl
from jaxlite.runtime.device import device_put
from jaxlite.runtime.sharding import Mesh, get_abstract_mesh, get_mesh
from jaxlite.transforms import api_util as _api_util
from jaxlite.transforms.mesh_blocks import (check_replication, from_blocks, split_names,
                                            to_blocks)
from jaxlite.tree_util import (keystr, tree_flatten, tree_flatten_with_path, tree_leaves,
                               tree_map, tree_structure, tree_unflatten)

__all__ = ["shard_map", "smap", "Infer", "InferFromArgs"]


class InferFromArgs:
    """The default `in_specs`: take the specs from the arguments' shardings (mirrors
    `jax.sharding.Infer`)."""

    def __repr__(self) -> str:
        return "jax.sharding.Infer"

    def __reduce__(self) -> str:
        return "Infer"


Infer = InferFromArgs()


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = Infer,
              mesh: Any = None, axis_names: Any = frozenset(),
              check_vma: bool = True) -> Callable:
    """Map `f` over the blocks of its arguments on a mesh (mirrors `jax.shard_map`).

    `f` runs once per device of the manual axes (`axis_names`, default all of the mesh's)
    on that device's blocks, with those axes bound for the collectives of `jaxlite.lax`
    (see the module docstring for how). `in_specs` (default `Infer`: allowed when the manual axes
    are Explicit) and `out_specs` are pytree prefixes of the arguments and of `f`'s result,
    with `PartitionSpec` leaves (None leaves of `in_specs` mark static arguments, passed to
    `f` as they are). `mesh=None` uses the mesh of `jax.set_mesh`. Works under jit, grad and
    vmap, and as a decorator (`f` omitted).

    Checked as in JAX: the mesh (type, non-empty, agreeing with the context mesh), the
    manual axes (a subset of the mesh's), the specs' types, axis names and pytree
    structure, their rank against the arguments and results, unreduced/reduced axes.
    With `check_vma` (the default) values in `f` carry the manual axes they vary over
    (`jax.typeof(x)` prints `{V:x}`; `pcast(..., to="varying")` and `all_gather` make
    values vary), and a result that varies over a mesh axis its out_spec does not name
    raises JAX's ValueError; `check_vma=False` returns the first device's value instead.
    Not checked: whether `in_specs` agree with the arguments' Explicit shardings (`Infer`
    takes an argument's NamedSharding's spec).
    """
    kwargs = dict(mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names,
                  check_vma=check_vma)
    if f is None:
        return lambda g: _shard_map(g, **kwargs)
    return _shard_map(f, **kwargs)


def smap(f: Callable | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name: Any) -> Callable:
    """`shard_map` over the one mesh axis `axis_name` of the context mesh, with vmap-style
    axes (mirrors `jax.smap`): `in_axes` / `out_axes` give, per argument / result, the array
    axis split over the mesh axis (None: replicated)."""
    kwargs = dict(in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if f is None:
        return lambda g: _smap(g, **kwargs)
    return _smap(f, **kwargs)


def legacy_shard_map(f: Callable, mesh: Any, in_specs: Any, out_specs: Any,
                     check_rep: bool = True) -> Callable:
    """The deprecated `jax.experimental.shard_map.shard_map` (mirrors it): `shard_map` with
    positional mesh and specs and `check_rep` for `check_vma`."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      axis_names=frozenset(), check_vma=check_rep)


def _axes_to_spec(axis_name: Any, axis: int | None) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def _smap(f: Callable, *, in_axes: Any, out_axes: Any, axis_name: Any) -> Callable:
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                        "entries corresponding to the positional arguments passed to the "
                        f"function, but got {in_axes}.")
    if in_axes is not Infer and not all(isinstance(a, int) for a in tree_leaves(in_axes)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_leaves(out_axes)):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")
    to_spec = functools.partial(_axes_to_spec, axis_name)
    in_specs = Infer if in_axes is Infer else tree_map(to_spec, in_axes,
                                                       is_leaf=lambda x: x is None)
    out_specs = tree_map(to_spec, out_axes, is_leaf=lambda x: x is None)
    return _shard_map(f, mesh=None, in_specs=in_specs, out_specs=out_specs,
                      axis_names={axis_name}, check_vma=True, is_smap=True)


def _shard_map(f: Callable, *, mesh: Any, in_specs: Any, out_specs: Any, axis_names: Any,
               check_vma: bool, is_smap: bool = False) -> Callable:
    if not callable(f):
        raise TypeError("shard_map requires a callable for its first argument, but got "
                        f"{f} of type {type(f)}.")

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        the_mesh, manual = _checked_mesh(mesh, axis_names, in_specs, out_specs, is_smap)
        leaves, in_tree = tree_flatten(args)
        order = [n for n in the_mesh.axis_names if n in manual]
        sizes = {n: the_mesh.shape[n] for n in order}
        if in_specs is Infer:
            specs: list[Any] = [_inferred_spec(x, the_mesh) for x in leaves]
        else:
            per_leaf = _per_leaf(in_specs, args, "in_specs")
            _check_ranks(f, "in", per_leaf, args)
            _check_divisible(f, per_leaf, args, the_mesh, sizes)
            specs = [s for s, _ in per_leaf]
        dynamic = [s is not None for s in specs]
        _check_abstract_mesh_inputs(the_mesh, [x for x, d in zip(leaves, dynamic) if d])
        # The body sees per-device blocks over manual axes: no sharding rule applies there
        # (as over JAX's Manual axes), and with check_vma values carry the axes they vary
        # over.
        with types_suspended(), vma_checked(order if check_vma else ()):
            outs, out_tree, out_leaf_specs = _run_body(
                f, leaves, in_tree, specs, dynamic, sizes, order, out_specs,
                the_mesh if check_vma else None,
                the_mesh if isinstance(the_mesh, Mesh) and the_mesh.size > 1 else None)
        outs = [_placed(o, the_mesh, spec) for o, spec in zip(outs, out_leaf_specs)]
        return tree_unflatten(out_tree, outs)
    return wrapped


def _run_body(f: Callable, leaves: list, in_tree: Any, specs: list, dynamic: list,
              sizes: dict, order: list, out_specs: Any, checked_mesh: Any,
              spmd_mesh: Any = None) -> tuple[list, Any, list]:
    """`f` on the arguments' blocks, each manual axis bound by a named map: its results
    laid out globally as `out_specs` say (checked against what they vary over when
    `checked_mesh` is given), their tree and their specs. Under a trace over `spmd_mesh`
    (a mesh of several devices), the stacked axes of blocks and results are constrained
    to lie along their mesh axes, so that jit's partitioner gives each device its own
    block to compute (and the collectives become the devices' own)."""
    blocked = [to_blocks(x, s, sizes, order) for x, s in zip(leaves, specs) if s is not None]
    blocked = [(_along_mesh(b, m, spmd_mesh), m) for b, m in blocked]
    out_trees: list[Any] = []
    out_leaf_specs: list[Any] = []

    def flat(*dyn: Any) -> list[Any]:
        given = iter(dyn)
        full = [next(given) if d else x for x, d in zip(leaves, dynamic)]
        result = f(*tree_unflatten(in_tree, full))
        out_leaves, out_tree = tree_flatten(result)
        out_trees.append(out_tree)
        per_leaf_out = _per_leaf(out_specs, result, "out_specs")
        _check_ranks(f, "out", per_leaf_out, result)
        out_leaf_specs[:] = [s for s, _ in per_leaf_out]
        return out_leaves
    outs, stacked = _with_axes(flat, [b for b, _ in blocked], [m for _, m in blocked],
                               [(n, sizes[n]) for n in order])
    if checked_mesh is not None:
        check_replication(_api_util.function_name(f), checked_mesh, out_leaf_specs, stacked)
    outs = [_along_mesh(o, st, spmd_mesh) for o, st in zip(outs, stacked)]
    outs = [from_blocks(_as_array(o), st, spec, sizes)
            for o, st, spec in zip(outs, stacked, out_leaf_specs)]
    return outs, out_trees[0], out_leaf_specs


def _along_mesh(value: Any, axes: list, mesh: Any) -> Any:
    """A traced `value` whose leading axes stack the blocks of mesh `axes` (in order),
    constrained to be split along them over `mesh`; anything else unchanged."""
    if mesh is None or not axes or not isinstance(value, Tracer):
        return value
    return sharding_constraint_p.bind(value, sharding=NamedSharding(mesh, PartitionSpec(*axes)),
                                      layout=None, context_mesh=mesh.abstract_mesh,
                                      unconstrained_dims=frozenset())



def _as_array(value: Any) -> Any:
    # JAX returns arrays, also for a Python scalar that `f` returned.
    return value if isinstance(value, (Array, Tracer)) else device_put(value)


def _inferred_spec(leaf: Any, mesh: AbstractMesh) -> PartitionSpec:
    """`Infer`'s spec for an argument: that of its NamedSharding over the mesh, else
    replicated."""
    sharding = getattr(leaf, "_sharding", None)
    if isinstance(sharding, NamedSharding) and _abstract(sharding.mesh) == _abstract(mesh):
        return sharding.spec
    return PartitionSpec()


def _placed(value: Any, mesh: AbstractMesh, spec: PartitionSpec) -> Any:
    """A result on the mesh's devices as its out_spec splits it (as JAX's): an eager one
    put there, a traced one constrained (so that `jit` places its result). An abstract
    mesh places on the devices of the mesh `jax.set_mesh` made current."""
    if not isinstance(mesh, Mesh):
        context = get_mesh()
        if context.empty or _abstract(context) != _abstract(mesh):
            return value
        mesh = context
    if mesh.size == 1:
        return value
    if type(value) is ArrayImpl:
        return device_put(value, NamedSharding(mesh, spec))
    return sharding_constraint_p.bind(value, sharding=NamedSharding(mesh, spec), layout=None,
                                      context_mesh=mesh.abstract_mesh,
                                      unconstrained_dims=frozenset())


def _check_abstract_mesh_inputs(mesh: AbstractMesh, leaves: Sequence[Any]) -> None:
    """Over an AbstractMesh of several devices the blocks' devices come from the
    arguments' shardings: eager arguments must have one (JAX's ValueError)."""
    if isinstance(mesh, Mesh) or mesh.size == 1:
        return
    if any(not isinstance(x, Tracer) and not isinstance(getattr(x, "_sharding", None),
                                                         NamedSharding) for x in leaves):
        raise ValueError("Please pass `jax.Array`s with a `NamedSharding` as input to "
                         "`shard_map` when passing `AbstractMesh` to the mesh argument.")


def _with_axes(fun: Callable[..., list], args: Sequence[Any], mapped: Sequence[list],
               levels: Sequence[tuple[Any, int]]) -> tuple[list, list[list]]:
    """`fun(*args)` with each mesh axis of `levels` ((name, size), the first outermost)
    bound as a named axis for the collectives; and, per output, the mesh axes it is
    stacked over (in order).

    An argument is mapped over an axis of size > 1 named in its `mapped` list (its leading
    axes, in order); an axis of size 1 maps over nothing, so that the arguments stay
    unbatched (a `cond` on them stays a `cond`). An output that does not vary over an axis
    comes back without a stacked axis for it (every device holds the same value)."""
    if not levels:
        outs = list(fun(*args))
        return outs, [[] for _ in outs]
    (name, size), rest = levels[0], levels[1:]
    per_member: list[bool] = []
    inner_stacked: list[list] = []

    def inner(*xs: Any) -> list[Any]:
        outs, stacked = _with_axes(fun, xs, mapped, rest)
        trace = current_trace()
        per_member[:] = [trace.unpack(o)[1] is not None for o in outs]
        inner_stacked[:] = stacked
        return outs
    in_dims = [0 if size > 1 and name in m else None for m in mapped]
    outs = vmap_flat(inner, size, list(args), in_dims,
                     lambda: [0 if p else None for p in per_member], axis_name=name)
    if size == 1:
        outs = [squeeze(o, (0,)) if p else o for o, p in zip(outs, per_member)]
        return outs, list(inner_stacked)
    return outs, [[name] + st if p else st for p, st in zip(per_member, inner_stacked)]


# ------------------------------------------------------------------------- checks

def _checked_mesh(mesh: Any, axis_names: Any, in_specs: Any, out_specs: Any,
                  is_smap: bool) -> tuple[AbstractMesh, frozenset]:
    """The mesh and the manual axes, checked as `jax.shard_map` checks them."""
    context = get_abstract_mesh()
    if mesh is None:
        if context.empty:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
        mesh = context
    elif isinstance(mesh, AbstractMesh) and not context.empty and \
            _abstract(mesh) != _abstract(context):
        raise ValueError(f"The context mesh {context} should match the mesh passed to "
                         f"shard_map {mesh}")
    if not isinstance(mesh, AbstractMesh):
        raise TypeError("shard_map requires a `jax.sharding.Mesh` or a "
                        "`jax.sharding.AbstractMesh` instance for its second argument, but "
                        f"got {mesh} of type {type(mesh)}.")
    if mesh.empty:
        raise ValueError(f"shard_map requires a non-empty mesh. Got {mesh}")
    if not isinstance(axis_names, (frozenset, set)):
        raise TypeError("`axis_names` argument of shard_map should be of type `frozenset` "
                        f"or `set`. Got type: {type(axis_names)}")
    all_names = frozenset(mesh.axis_names)
    manual = frozenset(axis_names) or all_names
    if not manual <= all_names:
        raise ValueError(f"jax.shard_map requires axis_names={manual} to be a subset of "
                         f"mesh.axis_names={all_names}")
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    if in_specs is Infer and not all(types[a] == AxisType.Explicit for a in manual):
        kinds = ", ".join(f"AxisType.{types[a].name}" for a in manual)
        raise TypeError(f"in_axes was not specified when axis_name={manual} was of type "
                        f"{kinds}" if is_smap else
                        "shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                        f"axis_names={manual} are of type {kinds}")
    if in_specs is not Infer and in_specs is not None:
        _check_specs("in", in_specs, manual, mesh, types)
    _check_specs("out", out_specs, manual, mesh, types)
    return mesh, manual


def _abstract(mesh: AbstractMesh) -> AbstractMesh:
    return AbstractMesh(mesh.axis_sizes, mesh.axis_names, mesh.axis_types)


def _check_specs(prefix: str, specs: Any, manual: frozenset, mesh: AbstractMesh,
                 types: dict) -> None:
    if prefix == "in" and specs is None:
        raise TypeError("shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was None.\nInstead of "
                        "`in_specs=None`, did you mean `in_specs=P()`, where "
                        "`P = jax.sharding.PartitionSpec`?")
    paths = tree_flatten_with_path(specs, is_leaf=lambda x: isinstance(x, PartitionSpec))[0]
    wrong = [f"  {prefix}_specs{keystr(k)} is {x} of type {type(x).__name__}, "
             for k, x in paths if not isinstance(x, PartitionSpec)]
    if wrong:
        raise TypeError(f"shard_map {prefix}_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but:\n\n" + "\n\n".join(wrong)
                        + f"\n\nCheck the {prefix}_specs values passed to shard_map.")
    unknown = [f"  {prefix}_specs{keystr(k)} refers to {name!r}" for k, spec in paths
               for name in _names(spec) if name not in manual]
    if unknown:
        raise ValueError(f"shard_map {prefix}_specs argument must refer to an axis marked as "
                         f"manual ({manual}), but:\n\n" + "\n\n".join(unknown)
                         + f"\n\nCheck the {prefix}_specs values passed to shard_map.")
    for _, spec in paths:
        _check_unreduced(prefix, spec, manual, mesh, types)


def _names(spec: PartitionSpec) -> list[Any]:
    names = []
    for entry in spec:
        names.extend(entry if isinstance(entry, tuple) else [entry])
    return [n for n in names if n is not None]


def _check_unreduced(prefix: str, spec: PartitionSpec, manual: frozenset,
                     mesh: AbstractMesh, types: dict) -> None:
    if not spec.unreduced and not spec.reduced:
        return
    if manual != frozenset(mesh.axis_names):
        raise NotImplementedError(
            f"unreduced/reduced can only be passed to {prefix}_specs when shard_map is in "
            f"full manual mode. Got mesh axis names {mesh.axis_names}, manual_axes: {manual}, "
            f"specs: {spec}.")
    for kind, axes in (("unreduced", spec.unreduced), ("reduced", spec.reduced)):
        if not all(types.get(a) == AxisType.Explicit for a in axes):
            raise ValueError(f"{kind} in {prefix}_specs {spec} can only be used when the mesh "
                             "passed to shard_map contains axis names all of type `Explicit`. "
                             f"Got mesh {mesh}")


def _per_leaf(specs: Any, tree: Any, what: str) -> list[tuple[Any, tuple]]:
    """`specs`, a pytree prefix of `tree`, broadcast to one (spec, key path of the spec)
    per leaf of `tree`."""
    is_spec = lambda x: x is None or isinstance(x, PartitionSpec)  # noqa: E731
    spec_paths, spec_tree = tree_flatten_with_path(specs, is_leaf=is_spec)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except ValueError as error:
        whose = "arguments" if what == "in_specs" else "outputs"
        raise ValueError(f"pytree structure error: shard_map {what} is not a pytree prefix "
                         f"of the {whose}: {error}") from None
    return [(spec, path) for (path, spec), sub in zip(spec_paths, subtrees)
            for _ in range(tree_structure(sub).num_leaves)]


def _check_ranks(f: Callable, prefix: str, specs: list[tuple[Any, tuple]],
                 tree: Any) -> None:
    """Each spec is no longer than the rank of its value (JAX's ValueError otherwise)."""
    name = _api_util.function_name(f)
    lines = []
    for (spec, spec_path), (path, leaf) in zip(specs, tree_flatten_with_path(tree)[0]):
        ndim = len(get_aval(leaf).shape)
        if spec is None or len(spec) <= ndim:
            continue
        where = (f"the passed args{keystr(path)}{_bound_to(f, path)}" if prefix == "in"
                 else f"{name}(*args){keystr(path)}")
        lines.append(f"{prefix}_specs{keystr(spec_path)} is {spec} which has length "
                     f"{len(spec)}, but {where} has shape {_type_str(get_aval(leaf))}, which "
                     f"has rank {ndim} (and {ndim} < {len(spec)})")
    if lines:
        put = "input" if prefix == "in" else "output"
        raise ValueError(
            f"shard_map applied to the function '{name}' was given an {prefix}_specs entry "
            f"which is too long to be compatible with the corresponding {put} value from the "
            "function:\n\n" + "\n\n".join(lines) + f"\n\nEntries in {prefix}_specs must be "
            f"of length no greater than the number of axes in the corresponding {put} value. "
            f"For scalar values (rank 0), use an {prefix}_specs entry of `P()`.")


def _check_divisible(f: Callable, specs: list[tuple[Any, tuple]], args: Any,
                     mesh: AbstractMesh, sizes: dict[Any, int]) -> None:
    """Each split dimension divides evenly over its mesh axes (JAX's ValueError)."""
    lines = []
    for (spec, _), (path, leaf) in zip(specs, tree_flatten_with_path(args)[0]):
        if spec is None:
            continue
        shape = get_aval(leaf).shape
        for axis, names in enumerate(split_names(spec, len(shape), sizes)):
            parts = int(np.prod([sizes[n] for n in names]))
            if shape[axis] % parts == 0:
                continue
            target = (f"mesh axis {names[0]!r} (of size {parts})" if len(names) == 1 else
                      f"mesh axes {tuple(names)} (of total size {parts})")
            lines.append(f"the passed args{keystr(path)} of shape "
                         f"{_type_str(get_aval(leaf))}{_bound_to(f, path)} corresponds to "
                         f"in_specs of value {spec}, which maps array axis {axis} (of size "
                         f"{shape[axis]}) to {target}, but {parts} does not evenly divide "
                         f"{shape[axis]}")
    if lines:
        raise ValueError(
            f"shard_map applied to the function '{_api_util.function_name(f)}' was given "
            "argument arrays with axis sizes that are not evenly divisible by the "
            "corresponding mesh axis sizes:\n\nThe mesh given has shape "
            f"{tuple(mesh.axis_sizes)} with corresponding axis names {mesh.axis_names}.\n\n"
            + "\n\n".join(lines) + "\n\nArray arguments' axis sizes must be evenly "
            "divisible by the mesh axis or axes indicated by the corresponding elements of "
            "the argument's in_specs entry. Consider checking that in_specs are correct, and "
            "if so consider changing the mesh axis sizes or else padding the input and "
            f"adapting '{_api_util.function_name(f)}' appropriately.")


def _type_str(aval: Any) -> str:
    return f"{np.dtype(aval.dtype).name}[{','.join(str(d) for d in aval.shape)}]"


def _bound_to(f: Callable, path: tuple) -> str:
    index = getattr(path[0], "idx", None) if path else None
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return ""
    if index is None or index >= len(params):
        return ""
    return f", where args[{index}] is bound to {_api_util.function_name(f)}'s parameter " \
           f"'{params[index].name}',"
