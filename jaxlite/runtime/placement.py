"""Where the results of a computation on placed arrays go (JAX's rules for committed
arguments, without a partitioner).

jaxlite computes every operation on the assembled global values (host memory serves all
devices), so the numbers never depend on placement; only the result's sharding does. The
rules, as JAX applies them:

- No argument is committed (placed by `device_put` or `jit`'s shardings): the results are
  uncommitted, on the default device.
- Committed arguments must all use the same devices in the same order, else `ValueError`
  ("Received incompatible devices for jitted computation.").
- All on one device: the results are committed to it.
- On a mesh: each result gets a `NamedSharding` over that mesh whose spec follows the
  computation (`propagate`, one equation at a time, into jit and custom-derivative calls):
  elementwise operations merge their operands' specs (a dimension split two ways is not
  split), reductions drop the reduced dimensions' entries, transposes permute them,
  broadcasts, slices, squeezes, reshapes and concatenations carry those of dimensions they
  keep, dot_general keeps batch and free dimensions' splits (a mesh axis used once);
  sharding constraints (which `shard_map` under `jit` leaves on its results) set theirs;
  anything else (gather, scatter, control flow, where XLA's partitioner chooses a layout)
  gives a replicated result, as does a propagated split that does not divide the result.
  These agree with GSPMD's choices on the cases checked (tests/sharding).

The SPMD partitioner replaces this with sharding propagation over the HLO module and
per-device programs; these rules are the part of it that needs no collectives.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

from jaxlite.core.jaxpr import Literal
from jaxlite.core.sharding import NamedSharding, PartitionSpec, Sharding
from jaxlite.core.sharding_rules import (ELEMENTWISE_NAMES, explicit_operands, spec_of,
                                         typed_results)
from jaxlite.core.sharding_rules_shape import size_groups
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.sharding import SingleDeviceSharding

__all__ = ["committed_shardings", "constraint_mesh", "on_device", "place_eager",
           "place_jit_outputs", "propagate"]

Spec = tuple  # one entry per dimension: None, an axis name, or a tuple of names

# Primitives whose result has the operand's shape and is split as the operand is.
_SAME_LAYOUT_NAMES = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
                                "sort", "rev"})

# The parameters holding the program a call-like primitive runs.
_CALLEE_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def committed_shardings(args: Sequence[Any]) -> list[tuple[int, Sharding]]:
    """(position, sharding) of each committed Array among `args`."""
    return [(i, a._sharding) for i, a in enumerate(args)
            if type(a) is ArrayImpl and a._sharding is not None]


def _type_text(array: ArrayImpl) -> str:
    return f"{array.dtype.name}[{','.join(str(d) for d in array.shape)}]"


def _common_devices(args: Sequence[Any], placed: list[tuple[int, Sharding]],
                    what: str) -> tuple[Any, ...]:
    """The ordered devices every committed argument uses; JAX's ValueError otherwise."""
    first_at, first = placed[0]
    devices = _assignment(first)
    for at, sharding in placed[1:]:
        other = _assignment(sharding)
        if other != devices:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument "
                f"args[{first_at}] of {what} with shape {_type_text(args[first_at])} and "
                f"with device ids {[d.id for d in devices]} on platform "
                f"{devices[0].platform.upper()} and argument args[{at}] of {what} with shape "
                f"{_type_text(args[at])} and with device ids {[d.id for d in other]} on "
                f"platform {other[0].platform.upper()}")
    return devices


def _assignment(sharding: Sharding) -> tuple[Any, ...]:
    if isinstance(sharding, NamedSharding):
        return sharding._device_assignment
    return tuple(sorted(sharding.device_set, key=lambda d: d.id))


def _spec(sharding: Sharding | None, ndim: int) -> Spec | None:
    """A NamedSharding's spec padded to `ndim` entries; None for any other placement."""
    if not isinstance(sharding, NamedSharding):
        return None
    return tuple(sharding.spec) + (None,) * (ndim - len(sharding.spec))


def _as_sharding(spec: Spec | None, mesh: Any, typed: bool = False) -> NamedSharding:
    entries = [None if e is PartitionSpec.UNCONSTRAINED else e for e in spec or ()]
    while entries and entries[-1] is None and not typed:
        entries.pop()  # JAX's result specs stop at the last split dimension
    return NamedSharding(mesh, PartitionSpec(*entries))


def _place(results: Sequence[Any], args: Sequence[Any], what: str,
           out_specs: Callable[[list[Spec | None]], list[Spec | None]],
           mesh: Any = None, typed: bool = False) -> list[Any]:
    """`results` placed by the rules of the module docstring; `out_specs` maps the
    arguments' specs to the results'. `mesh`: that of the computation's sharding
    constraints, which place results even when no argument is committed."""
    placed = committed_shardings(args)
    if not placed and mesh is None:
        return list(results)
    named = [s for _, s in placed if isinstance(s, NamedSharding)]
    if placed:
        devices = _common_devices(args, placed, what)
        if not named and mesh is None:
            target = SingleDeviceSharding(devices[0])
            return [_with(r, target) for r in results]
    mesh = named[0].mesh if named else mesh
    in_specs = [_spec(a._sharding, a.ndim) if type(a) is ArrayImpl else None for a in args]
    specs = out_specs(in_specs)
    return [_with(r, _as_sharding(spec, mesh, typed)) for r, spec in zip(results, specs)]


def _with(result: Any, sharding: Sharding) -> Any:
    if type(result) is not ArrayImpl:
        return result  # an extended dtype (typed PRNG keys) stays where it is
    if isinstance(sharding, NamedSharding):
        try:
            sharding.shard_shape(result.shape)
        except ValueError:  # a propagated split that does not divide: replicate
            sharding = NamedSharding(sharding.mesh, PartitionSpec())
    return result.with_sharding(sharding)


def _typed(placed: list[Any], avals: Sequence[Any]) -> list[Any]:
    """Placed results keep their types' shardings also where their blocks could not be
    placed evenly (JAX's uneven shards; here the array is then replicated)."""
    for result, aval in zip(placed, avals):
        if type(result) is ArrayImpl and result.aval.sharding != aval.sharding and \
                result.aval.shape == aval.shape:
            result._aval = result.aval.update(sharding=aval.sharding)
    return placed


def on_device(results: Sequence[Any], device: Any) -> list[Any]:
    """`results` committed to `device` (what `jit(..., device=)` gives)."""
    return [_with(r, SingleDeviceSharding(device)) for r in results]


def place_eager(primitive: Any, args: Sequence[Any], results: Any,
                params: dict[str, Any]) -> Any:
    """The results of one eager primitive, placed (see the module docstring)."""
    many = primitive.multiple_results
    outs = list(results) if many else [results]
    avals = [getattr(a, "aval", None) for a in args]
    out_avals = [getattr(o, "aval", None) for o in outs]
    if explicit_operands(avals):
        # Sharding in types: the primitive's sharding rule decides (or refuses).
        typed = typed_results(primitive, avals, out_avals if many else out_avals[0], params)
        typed = typed if many else [typed]
        placed = _typed(_place(outs, args, primitive.name,
                               lambda specs: [spec_of(t) for t in typed], typed=True), typed)
    else:
        placed = _place(outs, args, primitive.name,
                        lambda specs: _rule(primitive, params, avals, specs, out_avals))
    return placed if many else placed[0]


def place_jit_outputs(jaxpr: Any, args: Sequence[Any], results: list[Any],
                      name: str) -> list[Any]:
    """The results of a jitted call of the closed `jaxpr` on `args`, placed."""
    typed = [v.aval for v in jaxpr.jaxpr.outvars]
    if explicit_operands(typed):
        # Sharding in types: the results' types say.
        return _typed(_place(results, args, f"jit({name})",
                             lambda specs: [spec_of(t) for t in typed],
                             constraint_mesh(jaxpr.jaxpr), typed=True), typed)
    return _place(results, args, f"jit({name})",
                  lambda specs: propagate(jaxpr.jaxpr, specs), constraint_mesh(jaxpr.jaxpr))


# Whether a jaxpr holds a sharding constraint over several devices, and its mesh.
_CONSTRAINT_MESHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def constraint_mesh(jaxpr: Any) -> Any:
    """The mesh of the first multi-device sharding constraint in `jaxpr` (or in the jitted
    calls it makes), or None: such a program places its results whatever its arguments
    (a `shard_map` inside `jit` leaves one per result)."""
    try:
        return _CONSTRAINT_MESHES[jaxpr]
    except KeyError:
        pass
    mesh = None
    for eqn in jaxpr.eqns:
        sharding = eqn.params.get("sharding")
        if eqn.primitive.name == "sharding_constraint" and isinstance(
                sharding, NamedSharding) and sharding.mesh.size > 1 and \
                hasattr(sharding.mesh, "devices"):
            mesh = sharding.mesh
        elif eqn.primitive.name in ("jit", "pjit") and "jaxpr" in eqn.params:
            mesh = constraint_mesh(eqn.params["jaxpr"].jaxpr)
        if mesh is not None:
            break
    _CONSTRAINT_MESHES[jaxpr] = mesh
    return mesh


def propagate(jaxpr: Any, in_specs: Sequence[Spec | None]) -> list[Spec | None]:
    """The spec of each output of `jaxpr` from its inputs' specs (None: replicated, or not
    on a mesh), one equation at a time."""
    if explicit_operands([v.aval for v in jaxpr.outvars]):
        return [spec_of(v.aval) for v in jaxpr.outvars]  # sharding in types
    env: dict[Any, Spec | None] = dict(zip(jaxpr.invars, in_specs))

    def read(atom: Any) -> Spec | None:
        return None if isinstance(atom, Literal) else env.get(atom)
    for eqn in jaxpr.eqns:
        specs = [read(v) for v in eqn.invars]
        avals = [v.aval for v in eqn.invars]
        outs = _rule(eqn.primitive, eqn.params, avals, specs, [v.aval for v in eqn.outvars])
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _rule(primitive: Any, params: dict[str, Any], avals: Sequence[Any],
          specs: Sequence[Spec | None], out_avals: Sequence[Any]) -> list[Spec | None]:
    """The output specs of one primitive (None: replicated)."""
    name = primitive.name
    callee = _callee(params, len(specs), len(out_avals))
    if callee is not None:
        return propagate(callee, specs)
    if name == "sharding_constraint" and isinstance(params.get("sharding"), NamedSharding):
        return [_spec(params["sharding"], len(out_avals[0].shape))]
    if len(out_avals) != 1 or out_avals[0] is None or not any(specs):
        return [None] * len(out_avals)
    shape = tuple(out_avals[0].shape)
    if getattr(primitive, "elementwise", False) or name in ELEMENTWISE_NAMES:
        return [_merged([s for s, a in zip(specs, avals)
                         if s is not None and a is not None and tuple(a.shape) == shape])]
    rule = _SHAPE_RULES.get(name)
    if rule is None or specs[0] is None and name != "concatenate":
        return [None]
    return [rule(specs, [tuple(a.shape) for a in avals], shape, params)]


def _merged(specs: Sequence[Spec]) -> Spec | None:
    """The spec of an elementwise result: per dimension, the one mesh axis the operands
    agree on (a dimension they split differently is not split), each axis used once."""
    if not specs:
        return None
    out, used = [], set()
    for entries in zip(*specs):
        split = {e for e in entries if e is not None}
        entry = split.pop() if len(split) == 1 else None
        names = set(entry) if isinstance(entry, tuple) else {entry}
        if entry is not None and names & used:
            entry = None
        used |= names if entry is not None else set()
        out.append(entry)
    return tuple(out)


def _reduced(specs: list, shapes: list, shape: tuple, params: dict) -> Spec:
    dropped = set(params["axes"])
    return tuple(e for i, e in enumerate(specs[0]) if i not in dropped)


def _sliced(specs: list, shapes: list, shape: tuple, params: dict) -> Spec:
    # A dimension that keeps its size keeps its split.
    return tuple(e if old == new else None for e, old, new in zip(specs[0], shapes[0], shape))


def _squeezed(specs: list, shapes: list, shape: tuple, params: dict) -> Spec:
    dropped = {d % len(shapes[0]) for d in params["dimensions"]}
    return tuple(e for i, e in enumerate(specs[0]) if i not in dropped)


def _broadcast(specs: list, shapes: list, shape: tuple, params: dict) -> Spec:
    out: list[Any] = [None] * len(shape)
    for i, dim in enumerate(params["broadcast_dimensions"]):
        if shapes[0][i] == shape[dim]:
            out[dim] = specs[0][i]
    return tuple(out)


def _concatenated(specs: list, shapes: list, shape: tuple, params: dict) -> Spec | None:
    merged = _merged([s for s in specs if s is not None])
    if merged is None:
        return None
    return tuple(None if d == params["dimension"] else e for d, e in enumerate(merged))


def _dot(specs: list, shapes: list, shape: tuple, params: dict) -> Spec | None:
    """Batch dimensions as the operands split them, then the free dimensions of the
    left and of the right operand; a contracted split is summed away."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs = specs[0]
    rhs = specs[1] if len(specs) > 1 and specs[1] is not None else (None,) * len(shapes[1])
    batch = _merged([tuple(lhs[d] for d in lb), tuple(rhs[d] for d in rb)]) or ()
    free_l = tuple(e for d, e in enumerate(lhs) if d not in lc and d not in lb)
    free_r = tuple(e for d, e in enumerate(rhs) if d not in rc and d not in rb)
    entries, used = [], set()
    for entry in (*batch, *free_l, *free_r):
        names = set(entry) if isinstance(entry, tuple) else {entry}
        keep = entry is not None and not names & used
        used |= names if keep else set()
        entries.append(entry if keep else None)
    return tuple(entries)


def _same(specs: list, shapes: list, shape: tuple, params: dict) -> Spec:
    return specs[0]


def _permuted(specs: list, shapes: list, shape: tuple, params: dict) -> Spec:
    return tuple(specs[0][i] for i in params["permutation"])


def _reshape_rule(specs: list, shapes: list, shape: tuple, params: dict) -> Spec | None:
    if params.get("dimensions") is not None:
        return None
    return _reshaped(specs[0], shapes[0], shape)


_SHAPE_RULES: dict[str, Callable[..., Spec | None]] = {
    **{name: _reduced for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
                                   "reduce_and", "reduce_or", "reduce_xor", "argmax",
                                   "argmin")},
    **{name: _same for name in _SAME_LAYOUT_NAMES},
    "slice": _sliced, "dynamic_slice": _sliced, "pad": _sliced, "squeeze": _squeezed,
    "broadcast_in_dim": _broadcast, "concatenate": _concatenated, "dot_general": _dot,
    "transpose": _permuted, "reshape": _reshape_rule,
}


def _callee(params: dict[str, Any], num_in: int, num_out: int) -> Any:
    """The jaxpr a call-like primitive (jit, custom_jvp_call, remat, ...) runs on its
    operands, when it takes them all and gives all the results; else None."""
    for key in _CALLEE_PARAMS:
        program = params.get(key)
        program = getattr(program, "jaxpr", program)
        if hasattr(program, "eqns") and len(program.invars) == num_in and \
                len(program.outvars) == num_out:
            return program
    return None


def _reshaped(spec: Spec, old: tuple, new: tuple) -> Spec | None:
    """A spec carried through a reshape: dimensions are matched in runs of equal size;
    a run keeps the split of its major dimension on its first dimension of size > 1."""
    out: list[Any] = [None] * len(new)
    try:
        groups = size_groups(old, new)
    except IndexError:  # (sizes with zeros)
        return None
    for olds, news in groups:
        major = next((k for k in olds if old[k] != 1), None)
        target = next((k for k in news if new[k] != 1), None)
        if major is not None and target is not None:
            out[target] = spec[major]
    return tuple(out)
