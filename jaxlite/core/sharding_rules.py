"""Sharding in types: the shardings that avals carry over meshes with Explicit axes
(mirrors JAX's per-primitive sharding rules, "explicit sharding").

An array placed on a mesh whose axes are `AxisType.Explicit` (what `jax.make_mesh` makes)
has an aval whose `sharding` says which mesh axes split each dimension
(`jax.typeof(x).sharding`: a `NamedSharding` over the mesh's `AbstractMesh`). Every
primitive applied to such values computes its results' shardings from its operands' by a
rule registered here under the primitive's name (`RULES`), or refuses the program with
`ShardingTypeError` where JAX's rule refuses it (contracting dimensions split on both
sides, operands split differently, a reshape that moves a split, ...). The rules see only
shapes, specs and the primitive's parameters, so they sit in `core` and no primitive
declaration changes; `typed_results` applies them where avals are made (staging, and the
placement of eager results).

A spec here is a tuple with one entry per dimension: None (not split), a mesh axis name,
or a tuple of names (split over several axes, major first). Only Explicit axes appear in
types: a mesh of Auto axes gives every aval an all-None spec over that mesh, and inside
`shard_map` (`types_suspended`) no rule runs, as over JAX's Manual axes.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator, Sequence

from jaxlite.core.sharding import (ABSTRACT_MESH_OVERRIDE, CURRENT_MESH, AbstractMesh,
                                   NamedSharding, PartitionSpec)

__all__ = ["ShardingTypeError", "RULES", "register", "typed_results", "aval_sharding",
           "spec_of", "types_suspended", "explicit_operands", "types_active",
           "check_static_index", "vma_checked", "checked_axes", "varying_axes",
           "lenient_types", "requested_sharding", "resolved", "context_mesh", "jit_key", "ELEMENTWISE_NAMES"]

Spec = tuple


class ShardingTypeError(Exception):
    """A program whose operands' shardings give no well-defined result sharding (mirrors
    JAX's `core.ShardingTypeError`)."""


# The rule of each primitive: rule(specs, in_avals, out_avals, params, name) -> one spec
# per result. A rule may raise ShardingTypeError.
RULES: dict[str, Callable[..., list[Spec]]] = {}

# Primitives outside `lax._declare.elementwise` whose result is elementwise in its operands.
ELEMENTWISE_NAMES = frozenset({
    "convert_element_type", "select_n", "integer_pow", "clamp", "copy", "copy_p",
    "reduce_precision", "nextafter", "erf_inv", "igamma", "igammac", "lgamma", "digamma",
    "random_gamma_grad", "bessel_i0e", "bessel_i1e", "is_finite", "not", "logistic",
    "stop_gradient", "polygamma", "zeta", "betainc", "igamma_grad_a"})

# Primitives whose results' avals come from the programs they run: their types are
# those programs' result types, made when those were traced.
_FROM_PROGRAMS = frozenset({
    "jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
    "custom_lin", "checkpoint", "remat", "cond", "while", "scan", "custom_linear_solve",
    "custom_transpose_call", "run_state"})

_SUSPENDED: contextvars.ContextVar[bool] = contextvars.ContextVar("types_off", default=False)


def register(*names: str) -> Callable[[Callable], Callable]:
    """Register a sharding rule for the primitives `names`."""
    def decorate(rule: Callable) -> Callable:
        for name in names:
            RULES[name] = rule
        return rule
    return decorate


@contextlib.contextmanager
def types_suspended() -> Iterator[None]:
    """No sharding rules run in this block (`shard_map`'s body and block layouts: there
    the mesh axes are manual, and values are per-device blocks)."""
    token = _SUSPENDED.set(True)
    try:
        yield
    finally:
        _SUSPENDED.reset(token)


# The manual axes of the shard_map bodies (with check_vma) being traced: values there
# carry the axes they vary over in their types.
_VMA_AXES: contextvars.ContextVar[frozenset] = contextvars.ContextVar("vma_axes",
                                                                      default=frozenset())


@contextlib.contextmanager
def vma_checked(axes: Sequence[Any]) -> Iterator[None]:
    """Values vary over the manual mesh axes `axes` in this block (a shard_map body with
    check_vma): `varying_axes` reports them, and collectives make their results so."""
    token = _VMA_AXES.set(_VMA_AXES.get() | frozenset(axes))
    try:
        yield
    finally:
        _VMA_AXES.reset(token)


def checked_axes() -> frozenset:
    """The manual axes whose variation is tracked here (see `vma_checked`)."""
    return _VMA_AXES.get()


def varying_axes(value: Any) -> frozenset:
    """The tracked manual axes `value` varies over: those of the maps (shard_map's named
    vmaps) that hold it batched."""
    tracked = _VMA_AXES.get()
    names = set()
    while tracked and hasattr(value, "batch_dim") and hasattr(value, "value"):
        name = getattr(getattr(value, "_trace", None), "axis_name", None)
        if value.batch_dim is not None and name in tracked:
            names.add(name)
        value = value.value
    return frozenset(names)


# Whether rules give unsplit results instead of refusing (transposition, see
# `lenient_types`).
_LENIENT: contextvars.ContextVar[bool] = contextvars.ContextVar("lenient", default=False)


@contextlib.contextmanager
def lenient_types() -> Iterator[None]:
    """Rules that would refuse a program give unsplit results in this block instead: the
    transposes of differentiation, where JAX gives each cotangent its primal's type
    (`x.T @ g` over a split batch is the gradient of a replicated weight, summed across
    devices)."""
    token = _LENIENT.set(True)
    try:
        yield
    finally:
        _LENIENT.reset(token)


# The `out_sharding` a caller asked of the operation being bound (lax.dot, lax.reshape,
# jnp's functions with that keyword): what an ambiguous rule gives instead of refusing.
_REQUESTED: contextvars.ContextVar[Any] = contextvars.ContextVar("requested", default=None)


def resolved(target: Any) -> Any:
    """An `out_sharding` given as a PartitionSpec means one over the context mesh (JAX's
    ValueError without one); other values are returned as they are."""
    if not isinstance(target, PartitionSpec):
        return target
    mesh = CURRENT_MESH.get()
    if mesh is None or not mesh.axis_names:
        raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                         "allowed. Please pass a NamedSharding instance or enter into a mesh "
                         f"context via `jax.set_mesh`. Got {target}")
    return NamedSharding(mesh, target)


@contextlib.contextmanager
def requested_sharding(target: Any) -> Iterator[None]:
    """Bind operations in this block for the result sharding `target` (None: no request)."""
    token = _REQUESTED.set(resolved(target) if target is not None else _REQUESTED.get())
    try:
        yield
    finally:
        _REQUESTED.reset(token)


def _requested(params: dict[str, Any], out: Any) -> Spec | None:
    """The spec an operation's `out_sharding` (parameter or request) gives its result."""
    given = params.get("out_sharding") or params.get("sharding") or _REQUESTED.get()
    if given is None or len(getattr(given, "spec", ())) > len(out.shape):
        return None
    return spec_of(out.update(sharding=aval_sharding(given, len(out.shape))))


def context_mesh() -> AbstractMesh | None:
    """The abstract mesh of `jax.set_mesh` / `use_abstract_mesh`, or None."""
    override = ABSTRACT_MESH_OVERRIDE.get()
    if override is not None:
        return None if override.empty else override
    mesh = CURRENT_MESH.get()
    return None if mesh is None or mesh.empty else mesh.abstract_mesh


def _normal(entry: Any) -> Any:
    if isinstance(entry, tuple):
        return None if not entry else entry[0] if len(entry) == 1 else entry
    return None if entry is PartitionSpec.UNCONSTRAINED else entry


def aval_sharding(sharding: Any, ndim: int) -> NamedSharding | None:
    """The type-level sharding of an array placed with `sharding`: over the abstract mesh,
    the spec's Explicit axes only, one entry per dimension; None when not on a mesh."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None or mesh.empty:
        return None
    abstract = getattr(mesh, "abstract_mesh", mesh)
    explicit = set(abstract.explicit_axes)
    spec = []
    for d in range(ndim):
        entry = sharding.spec[d] if d < len(sharding.spec) else None
        names = entry if isinstance(entry, tuple) else (entry,)
        spec.append(_normal(tuple(n for n in names if n in explicit)))
    return NamedSharding(abstract, PartitionSpec(*spec))


def spec_of(aval: Any) -> Spec:
    """An aval's spec padded to its rank."""
    spec = tuple(_normal(e) for e in aval.sharding.spec)
    return spec + (None,) * (len(aval.shape) - len(spec))


def _mesh_of(avals: Sequence[Any]) -> AbstractMesh | None:
    mesh = None
    for aval in avals:
        other = getattr(getattr(aval, "sharding", None), "mesh", None)
        if other is None or not other.axis_names:
            continue
        if mesh is not None and other != mesh:
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one mesh: "
                                    f"{mesh} and another mesh: {other}")
        mesh = other
    return mesh


def explicit_operands(avals: Sequence[Any]) -> bool:
    """Whether any of `avals` is typed over a mesh with Explicit axes (outside
    `shard_map`'s body)."""
    if _SUSPENDED.get():
        return False
    return any(getattr(a, "sharding", None) is not None and _has_type(a) and
               a.sharding.mesh.explicit_axes for a in avals)


def jit_key(avals: Sequence[Any]) -> Any:
    """What a jit cache key needs beyond the avals' shapes and dtypes: their shardings and
    the context mesh, when any is on a mesh (else None, cheaply)."""
    shardings = tuple(a.sharding for a in avals if getattr(a, "sharding", None) is not None
                      and a.sharding.mesh.axis_names)
    mesh = context_mesh()
    if not shardings and mesh is None:
        return None
    return tuple(a.sharding for a in avals), mesh


def typed_results(primitive: Any, in_avals: Sequence[Any], out_avals: Any,
                  params: dict[str, Any]) -> Any:
    """`out_avals` (one, or a list for a primitive of several results) with the
    shardings JAX's types give them; unchanged where no operand is on a mesh and no mesh
    is current."""
    requested = _REQUESTED.get()
    given = (_given_sharding(params) if params else None) or (
        None if requested is None else _given_sharding({"sharding": requested}))
    mesh = given or _mesh_of(in_avals) or context_mesh()
    if mesh is None or _SUSPENDED.get() or primitive.name in _FROM_PROGRAMS:
        return out_avals
    many = primitive.multiple_results
    outs = list(out_avals) if many else [out_avals]
    if mesh.explicit_axes and (given is not None or
                               any(any(spec_of(a)) for a in in_avals if _has_type(a))):
        specs = _explicit_specs(primitive, in_avals, outs, params, mesh)
    else:
        specs = [(None,) * len(o.shape) for o in outs]
    typed = [o.update(sharding=NamedSharding(mesh, PartitionSpec(*s))) if _has_type(o)
             else o for o, s in zip(outs, specs)]
    return typed if many else typed[0]


def _given_sharding(params: dict[str, Any]) -> AbstractMesh | None:
    """The abstract mesh of the sharding a primitive's parameters name (a sharding
    constraint's, `out_sharding`), or None."""
    given = params.get("sharding", params.get("out_sharding")) if params else None
    given = given[0] if isinstance(given, (list, tuple)) and given else given
    mesh = getattr(given, "mesh", None)
    if mesh is None or mesh.empty:
        return None
    return getattr(mesh, "abstract_mesh", mesh)


def _has_type(aval: Any) -> bool:
    return hasattr(aval, "update") and hasattr(aval, "sharding")


def _explicit_specs(primitive: Any, in_avals: Sequence[Any], outs: list[Any],
                    params: dict[str, Any], mesh: AbstractMesh) -> list[Spec]:
    name = primitive.name
    specs = [spec_of(a) if _has_type(a) else () for a in in_avals]
    if getattr(primitive, "elementwise", False) or name in ELEMENTWISE_NAMES:
        rule = RULES["elementwise"]
    else:
        rule = RULES.get(name)
    if rule is None:
        raise ShardingTypeError(
            f"sharding rule for {name} is not implemented. Please file an issue at "
            "https://github.com/jax-ml/jax/issues. You can work around this error by "
            "dropping that operation into full auto sharding mode via: "
            "`jax.sharding.auto_axes(fun, out_shardings=...)`")
    try:
        out_specs = [tuple(_normal(e) for e in s)
                     for s in rule(specs, in_avals, outs, params, name)]
    except ShardingTypeError:
        if not _LENIENT.get():
            raise
        return [(None,) * len(o.shape) for o in outs]
    if _LENIENT.get():
        out_specs = [(None,) * len(s) if _duplicated(s) else s for s in out_specs]
    for out, spec in zip(outs, out_specs):
        if _duplicated(spec):
            shown = ", ".join(a.str_short() for a in in_avals if _has_type(a))
            result = out.update(sharding=_Typed(PartitionSpec(*spec)))
            raise ShardingTypeError(f"{name} operation with inputs: {shown} produces an "
                                    f"illegally sharded result: {result.str_short()}")
    return out_specs


class _Typed:
    """A spec that names a mesh axis twice, for printing the type a rule refused (a
    NamedSharding refuses such a spec)."""

    def __init__(self, spec: PartitionSpec) -> None:
        self.spec = spec


def _duplicated(spec: Spec) -> bool:
    names = [n for e in spec if e is not None for n in (e if isinstance(e, tuple) else (e,))]
    return len(names) != len(set(names))


def _sharding_text(aval: Any) -> str:
    return repr(aval.sharding)


# ------------------------------------------------------------------ the rules

@register("elementwise")
def _broadcasting(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """Operands of one shape: per dimension, the one split they agree on (an operand of
    size 1 there, unsplit, does not count)."""
    ranked = [(s, a.shape) for s, a in zip(specs, avals) if _has_type(a) and a.shape]
    if not ranked:
        return [(None,) * len(o.shape) for o in outs]
    result = []
    for d in range(len(ranked[0][0])):
        entries = [s[d] for s, _ in ranked]
        if all(e == entries[0] for e in entries):
            result.append(entries[0])
            continue
        split = {s[d] for s, shape in ranked if not (shape[d] == 1 and s[d] is None)}
        split.discard(None)
        if len(split) > 1:
            shown = ", ".join(str(s) for s, _ in ranked)
            raise ShardingTypeError(
                f"{name} got incompatible shardings for broadcasting: {shown}.")
        result.append(split.pop() if split else None)
    return [tuple(result)] * len(outs)


def _check_consistent(left: Spec, right: Spec, message: str) -> None:
    if any(a is not None and b is not None and a != b for a, b in zip(left, right)):
        raise ShardingTypeError(message)


@register("dot_general")
def _dot_general(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """Batch dimensions (split as the lhs splits them), then the lhs's and the rhs's free
    dimensions; contracting dimensions must not be split on both sides."""
    requested = _requested(params, outs[0])
    if requested is not None:
        return [requested]
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs, rhs = specs
    lhs_batch, rhs_batch = tuple(lhs[d] for d in lb), tuple(rhs[d] for d in rb)
    _check_consistent(lhs_batch, rhs_batch,
                      "dot_general requires lhs batch dimensions and rhs batch dimensions "
                      f"to have the consistent sharding, got {lhs_batch} and {rhs_batch}.")
    lhs_contract, rhs_contract = tuple(lhs[d] for d in lc), tuple(rhs[d] for d in rc)
    _check_consistent(lhs_contract, rhs_contract,
                      "dot_general requires contracting dimensions to have consistent "
                      f"sharding, got {lhs_contract} and {rhs_contract}.")
    if any(a is not None and b is not None for a, b in zip(lhs_contract, rhs_contract)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should "
            "be sharded. Please specify the output sharding via the `out_sharding` "
            f"parameter. Got lhs_contracting_spec={lhs_contract} and "
            f"rhs_contracting_spec={rhs_contract}")
    free_l = tuple(e for d, e in enumerate(lhs) if d not in lc and d not in lb)
    free_r = tuple(e for d, e in enumerate(rhs) if d not in rc and d not in rb)
    return [lhs_batch + free_l + free_r]


@register("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
          "reduce_or", "reduce_xor", "argmax", "argmin", "reduce")
def _reduction(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """The reduced dimensions' entries dropped (a split one is summed across devices)."""
    axes = set(params.get("axes", params.get("dimensions", ())))
    return [tuple(e for d, e in enumerate(specs[0]) if d not in axes)] * len(outs)


@register("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
def _cumulative(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    axis = params["axis"]
    if specs[0][axis] is not None:
        raise ShardingTypeError("Input should be unsharded over the axis being reduced. Got "
                                f"input type={avals[0]} and axis={axis}")
    return [specs[0]]


@register("sort")
def _sort(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    dimension = params["dimension"]
    for spec, aval in zip(specs, avals):
        if spec[dimension] is not None:
            raise ShardingTypeError(
                "Arguments to sort must be unsharded over the sorting dimension. Got arg "
                f"sharding={_sharding_text(aval)} and sorting dimension={dimension}")
    return [specs[0]] * len(outs)


@register("transpose")
def _transpose(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    return [tuple(specs[0][d] for d in params["permutation"])]


@register("broadcast_in_dim")
def _broadcast_in_dim(specs: list, avals: list, outs: list, params: dict,
                      name: str) -> list:
    """An operand dimension keeps its split where it lands; new dimensions are unsplit."""
    given = params.get("sharding")
    if given is not None:
        return [spec_of(outs[0].update(sharding=given))]
    out: list[Any] = [None] * len(outs[0].shape)
    for d, target in enumerate(params["broadcast_dimensions"]):
        out[target] = specs[0][d]
    return [tuple(out)]


@register("squeeze")
def _squeeze(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    dropped = {d % len(specs[0]) for d in params["dimensions"]}
    return [tuple(e for d, e in enumerate(specs[0]) if d not in dropped)]


@register("slice", "dynamic_slice", "pad", "rev", "dynamic_update_slice", "copy_p",
          "reduce_precision", "scatter", "scatter_add", "scatter_mul", "scatter_min",
          "scatter_max", "scatter_sub", "scatter_apply", "optimization_barrier")
def _like_first_operand(specs: list, avals: list, outs: list, params: dict,
                        name: str) -> list:
    """Results split as the (first) operand is."""
    return [specs[i] if i < len(specs) and len(specs[i]) == len(o.shape) else specs[0]
            for i, o in enumerate(outs)]


@register("concatenate")
def _concatenate(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """Operands split alike; the result is split as they are."""
    if any(s != specs[0] for s in specs[1:]):
        shown = ", ".join(_sharding_text(a) for a in avals)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}")
    return [specs[0]]


@register("sharding_constraint", "reshard", "device_put")
def _given(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """The sharding the operation names (its `sharding` parameter)."""
    given = params.get("sharding")
    given = given[0] if isinstance(given, (list, tuple)) else given
    if given is None or not hasattr(given, "spec"):
        return list(specs[:len(outs)])
    return [spec_of(o.update(sharding=aval_sharding(given, len(o.shape))
                             or o.sharding)) for o in outs]


@register("iota")
def _iota(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    given = params.get("sharding")
    if given is None:
        return [(None,) * len(outs[0].shape)]
    return [spec_of(outs[0].update(sharding=given))]


def types_active() -> bool:
    """Whether sharding rules run here (not inside `shard_map` or `auto_axes`)."""
    return not _SUSPENDED.get()


# The rules of reshape and indexing register themselves (and jnp's indexing check).
from jaxlite.core.sharding_rules_shape import check_static_index  # noqa: E402
