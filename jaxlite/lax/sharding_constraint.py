"""`with_sharding_constraint` and its primitive `sharding_constraint` (mirrors
`jax.lax.with_sharding_constraint` and `jax.lax.sharding_constraint_p`).

The constraint tells a partitioner how a value must be laid out over the mesh. jaxlite runs
on one device, where every layout is the whole array, so the primitive is the identity: it
is linear (its transpose constrains the cotangent the same way), batches by leaving the
new dimension unconstrained, and lowers to its operand. What the function checks is JAX's:
the shardings form a tree prefix of the values, a bare `PartitionSpec` needs a mesh set with
`jax.set_mesh`, each spec fits its value's rank and names the mesh's axes, and under a mesh
whose axes are all Explicit the constraint is an assertion about the value's sharding.

Differences from JAX: inside a transformation jaxlite's types carry no sharding, so the
Explicit-mesh assertion is checked on concrete arrays only; `layout` is always None.
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxlite.core.avals import get_aval
from jaxlite.core.sharding import (ABSTRACT_MESH_OVERRIDE, CURRENT_MESH, AbstractMesh,
                                   AxisType, NamedSharding, PartitionSpec, Sharding)
from jaxlite.core.trace import Tracer
from jaxlite.lax.identities import _declare_identity
from jaxlite.tree_util import tree_flatten, tree_unflatten
from jaxlite.xla.hlo_sharding import from_mesh_spec
from jaxlite.xla.opcodes import Opcode

__all__ = ["sharding_constraint_p", "with_sharding_constraint"]

sharding_constraint_p = _declare_identity("sharding_constraint", multiple_results=False)


def _sharding_constraint_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                               sharding: Any, layout: Any, context_mesh: Any,
                               unconstrained_dims: frozenset) -> tuple[Any, Any]:
    x, = args
    d, = dims
    if d is not None:
        # The mapped dimension is left to the partitioner, as in JAX.
        unconstrained_dims = frozenset({u + (d <= u) for u in unconstrained_dims} | {d})
        if isinstance(sharding, NamedSharding):
            ndim = len(get_aval(x).shape)
            spec = list(sharding.spec) + [None] * (ndim - 1 - len(sharding.spec))
            if not hasattr(sharding.mesh, "devices"):
                spec.insert(d, None)
            # Over real devices JAX keeps a spec that replicates (every spec does on one
            # device) as it is, and only marks the unconstrained dimensions.
            spec += [None] * (ndim - len(spec))
            for u in unconstrained_dims:
                spec[u] = PartitionSpec.UNCONSTRAINED
            sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    out = sharding_constraint_p.bind(x, sharding=sharding, layout=layout,
                                     context_mesh=context_mesh,
                                     unconstrained_dims=unconstrained_dims)
    return out, d


sharding_constraint_p.batch = _sharding_constraint_batch


def _lower_sharding_constraint(ctx: Any, x: Any, *, sharding: Any, **params: Any) -> Any:
    """A `Sharding` custom call (XLA's spelling of a constraint) in a module lowered for
    the SPMD partitioner over the constraint's mesh; the operand itself otherwise."""
    mesh = ctx.spmd_mesh
    if mesh is None or not isinstance(sharding, NamedSharding) or \
            sharding.mesh.shape_tuple != mesh.shape_tuple:
        return x
    spec = [None if entry is PartitionSpec.UNCONSTRAINED else entry for entry in sharding.spec]
    layout = from_mesh_spec(mesh.axis_sizes, mesh.axis_names, spec, len(x.shape.dims))
    return ctx.builder.add(Opcode.CUSTOM_CALL, x.shape, [x],
                           attrs={"target": "Sharding", "sharding": layout})


sharding_constraint_p.lower = _lower_sharding_constraint


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Constrain how each array of the pytree `x` is laid out over the mesh (mirrors
    `jax.lax.with_sharding_constraint`). `shardings` is a Sharding, a PartitionSpec (over
    the mesh `jax.set_mesh` made current) or a pytree of those that is a prefix of `x`.
    On jaxlite's one device the values are unchanged."""
    leaves, tree = tree_flatten(x)
    targets = _broadcast_shardings(shardings, tree)
    context_mesh = _context_mesh()
    outs = []
    for leaf, target in zip(leaves, targets):
        sharding = _to_sharding(target, context_mesh)
        ndim = len(get_aval(leaf).shape)
        _check_rank(sharding, ndim)
        if isinstance(sharding, NamedSharding) and _all_explicit(context_mesh):
            _assert_sharding_matches(leaf, sharding, ndim)
            outs.append(leaf)
            continue
        _check_auto_axes(sharding)
        _check_eager_input(leaf, sharding)
        out = sharding_constraint_p.bind(leaf, sharding=sharding, layout=None,
                                         context_mesh=context_mesh,
                                         unconstrained_dims=_unconstrained_dims(sharding))
        outs.append(_committed(out, sharding))
    return tree_unflatten(tree, outs)


def _is_sharding_leaf(value: Any) -> bool:
    return value is None or isinstance(value, (Sharding, PartitionSpec))


def _broadcast_shardings(shardings: Any, tree: Any) -> list[Any]:
    prefix, prefix_tree = tree_flatten(shardings, is_leaf=_is_sharding_leaf)
    for leaf in prefix:
        if not _is_sharding_leaf(leaf):
            raise TypeError("shardings leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {leaf}")
    placeholders = tree_unflatten(tree, [object()] * tree.num_leaves)
    try:
        subtrees = prefix_tree.flatten_up_to(placeholders)
    except ValueError as e:
        raise ValueError("with_sharding_constraint shardings specification must be a tree "
                         f"prefix of the corresponding value; {e}") from None
    return [target for target, subtree in zip(prefix, subtrees)
            for _ in range(len(tree_flatten(subtree)[0]))]


def _context_mesh() -> AbstractMesh:
    override = ABSTRACT_MESH_OVERRIDE.get()
    if override is not None:
        return override
    mesh = CURRENT_MESH.get()
    return AbstractMesh((), ()) if mesh is None else mesh.abstract_mesh


def _to_sharding(target: Any, context_mesh: AbstractMesh) -> Sharding:
    if target is None:
        raise ValueError("One of with_sharding_constraint arguments got sharding None which "
                         "is not allowed. Please only pass `jax.sharding.Sharding` instances.")
    if isinstance(target, PartitionSpec):
        if context_mesh.empty:
            raise RuntimeError(
                "with_sharding_constraint requires a non-empty mesh in context if you are "
                "passing `PartitionSpec`s to shardings. You can define a context mesh via "
                "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and "
                "then the mesh context manager is not required.")
        return NamedSharding(context_mesh, target)
    return target


def _check_rank(sharding: Sharding, ndim: int) -> None:
    if isinstance(sharding, NamedSharding) and len(sharding.spec) > ndim:
        hint = " For scalars the PartitionSpec should be P()" if ndim == 0 else ""
        raise ValueError(
            f"One of with_sharding_constraint arguments is incompatible with its sharding "
            f"annotation {sharding!r}: Sharding {sharding!r} is only valid for values of rank "
            f"at least {len(sharding.spec)}, but was applied to a value of rank {ndim}.{hint}")


def _all_explicit(mesh: AbstractMesh) -> bool:
    return not mesh.empty and all(t == AxisType.Explicit for t in mesh.axis_types)


def _padded(spec: Any, ndim: int) -> PartitionSpec:
    entries = list(spec) + [None] * (ndim - len(spec))
    return PartitionSpec(*entries)


def _assert_sharding_matches(leaf: Any, sharding: NamedSharding, ndim: int) -> None:
    if isinstance(leaf, Tracer):
        return  # jaxlite's traced types carry no sharding to compare with
    have = getattr(leaf, "sharding", None)
    have_spec = _padded(have.spec if isinstance(have, NamedSharding) else (), ndim)
    want_spec = _padded(sharding.spec, ndim)
    if have_spec != want_spec:
        raise AssertionError(
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of type "
            f"`Explicit`. The array sharding: {have_spec!r} did not match the sharding "
            f"provided: {want_spec!r}. Please use `jax.sharding.reshard` to shard your input "
            "to the sharding you want.")


def _check_auto_axes(sharding: Sharding) -> None:
    if not isinstance(sharding, NamedSharding):
        return
    types = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types))
    if any(types[name] == AxisType.Explicit for name in sharding.spec.axis_names()):
        mesh = sharding.mesh
        abstract = mesh.abstract_mesh if hasattr(mesh, "abstract_mesh") else mesh
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
            f"Auto axes of the mesh. Got spec={sharding.spec!r} and mesh={abstract!r}. You "
            "probably meant to use `reshard` API?")


def _check_eager_input(leaf: Any, sharding: Sharding) -> None:
    # A spec over an abstract mesh places a concrete array through the array's own mesh.
    if isinstance(leaf, Tracer) or not isinstance(sharding, NamedSharding) or \
            hasattr(sharding.mesh, "devices") or not hasattr(leaf, "sharding"):
        return
    have = leaf.sharding
    if not isinstance(have, NamedSharding):
        raise TypeError(
            "The sharding on the input must be a `NamedSharding` since the target sharding "
            f"has an `AbstractMesh` in it. Got sharding type {type(have)} for shape "
            f"{get_aval(leaf).str_short()}")
    if have.mesh.shape_tuple != sharding.mesh.shape_tuple:
        raise ValueError(
            f"Mesh shape of the input {have.mesh.shape_tuple} does not match the mesh shape "
            f"of the target sharding {sharding.mesh.shape_tuple} for shape "
            f"{get_aval(leaf).str_short()}")


def _unconstrained_dims(sharding: Sharding) -> frozenset:
    if not isinstance(sharding, NamedSharding):
        return frozenset()
    return frozenset(i for i, entry in enumerate(sharding.spec)
                     if entry is PartitionSpec.UNCONSTRAINED)


def _committed(out: Any, sharding: Sharding) -> Any:
    # A concrete result is committed to the sharding, as JAX's eager constraint is; the
    # runtime's arrays offer `with_sharding` (this layer cannot name their class).
    place = getattr(out, "with_sharding", None)
    if place is None or isinstance(out, Tracer):
        return out
    if isinstance(sharding, NamedSharding) and not hasattr(sharding.mesh, "devices"):
        return out
    return place(sharding)
