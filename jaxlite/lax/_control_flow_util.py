"""What the control-flow primitives (`cond`, `while`, `scan`) share.

Tracing the user's functions into closed jaxprs (tracers of outer transformations become
leading operands), the type checks of loop carries and branch outputs with JAX's wording,
and the transformations of a jaxpr that keep track of which values are symbolically zero
(jvp) or unbatched (vmap), so that loops can find the fixed point of their carries.
Mirrors the helpers of `jax._src.lax.control_flow.common`.
"""
from __future__ import annotations

import inspect
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator, Sequence

import numpy as np

from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.arg_names import function_name, leaf_names, parameter_names
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from jaxlite.core.leaks import defined_at, is_jaxlite_file
from jaxlite.core.trace import Tracer, current_trace, root_trace
from jaxlite.interpreters.ad import (Zero, instantiate, jvp_flat, linearize_flat,
                                    tangent_aval)
from jaxlite.interpreters.batching import BatchTracer, vmap_flat
from jaxlite.interpreters.staging import (DebugInfo, StagingTrace, hoist_tracer_consts,
                                          trace_to_jaxpr)
from jaxlite.lax.convert import _convert_element_type
from jaxlite.tree_util import (PyTreeDef, keystr, tree_flatten, tree_flatten_with_path,
                               tree_unflatten)


# ------------------------------------------------------- caches of transformed jaxprs

class JaxprCache:
    """Values derived from a source object (a jaxpr, or a function a loop traces), by the
    source's identity and a hashable key, for as long as the source lives.

    A jitted function's cache keeps the same `ClosedJaxpr` per signature, so `grad` of a
    function that calls it transforms that jaxpr once and then reuses the result, which the
    compiled-call cache in turn finds by identity; a loop body traced once per function and
    signature is likewise one jaxpr, compiled once (JAX caches its jvp, partial-eval and
    loop-body jaxprs by weak reference in the same way). Each source keeps at most
    `per_source` values and all sources together `total`, least recently used dropped; the
    x64 flag is part of every key. A source that cannot be weakly referenced is not cached.
    `misses` counts the computations, for tests.
    """

    def __init__(self, per_source: int = 64, total: int = 8192) -> None:
        self.per_source, self.total = per_source, total
        self._entries: OrderedDict = OrderedDict()  # (id(source), key) -> value
        self._keys: dict[int, tuple[weakref.ref, OrderedDict]] = {}  # id -> (ref, keys)
        self._lock = threading.Lock()
        self.misses = 0

    def get(self, source: Any, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value for (`source`, `key`), computed by `compute()` on a miss. `compute`
        returns (value, cacheable); an uncacheable value is returned but not kept."""
        full = (id(source), key, bool(config.read("jax_enable_x64")))
        with self._lock:
            owner = self._keys.get(full[0])
            if owner is not None and owner[0]() is source and full in self._entries:
                self._entries.move_to_end(full)
                return self._entries[full]
        # Computed outside the lock: it traces, and may come back here for an inner jaxpr.
        value, cacheable = compute()
        self.misses += 1
        if cacheable:
            self._keep(source, full, value)
        return value

    def _keep(self, source: Any, full: tuple, value: Any) -> None:
        ident = full[0]
        with self._lock:
            owner = self._keys.get(ident)
            if owner is None or owner[0]() is not source:
                try:
                    ref = weakref.ref(source, lambda _, ident=ident: self._forget(ident))
                except TypeError:
                    return
                if owner is not None:
                    self._drop_source(ident)
                owner = self._keys[ident] = (ref, OrderedDict())
            self._entries[full] = value
            owner[1][full] = None
            owner[1].move_to_end(full)
            while len(owner[1]) > self.per_source:
                self._entries.pop(owner[1].popitem(last=False)[0], None)
            while len(self._entries) > self.total:
                old, _ = self._entries.popitem(last=False)
                old_owner = self._keys.get(old[0])
                if old_owner is not None:
                    old_owner[1].pop(old, None)

    def _drop_source(self, ident: int) -> None:
        owner = self._keys.pop(ident, None)
        if owner is not None:
            for full in owner[1]:
                self._entries.pop(full, None)

    def _forget(self, ident: int) -> None:
        # Run by the collector, which may interrupt this thread inside the lock: no lock
        # here (dict operations are atomic; a racing entry is at worst computed again).
        owner = self._keys.get(ident)
        if owner is not None and owner[0]() is None:
            self._drop_source(ident)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._keys.clear()


# ----------------------------------------------------------------------------- tracing

def debug_info(what: str, fun: Callable[..., Any], in_tree: PyTreeDef,
               in_avals: Sequence[ShapedArray]) -> DebugInfo | None:
    """What errors say about `fun` traced for `what` ("scan", "while_body", "cond"...): its
    name, where it is defined and its arguments' leaf names, as JAX's messages name a loop
    body. A wrapper jaxlite made around the user's function names it through its
    `debug_target` (what, held function, the user's arguments from the wrapper's); other
    wrappers give None, and errors then name the line that called the loop."""
    args = tree_unflatten(in_tree, list(in_avals))
    target = getattr(fun, "debug_target", None)
    if target is not None and target[1]() is not None:
        what, fun, args = target[0], target[1](), target[2](args)
    location = defined_at(fun)
    if not location or is_jaxlite_file(location.rpartition(":")[0]):
        return None
    names: tuple[str, ...] = ()
    if isinstance(args, tuple):
        names = tuple(leaf_names(args, parameter_names(fun, len(args))))
    return DebugInfo(what, function_name(fun), names, location)


def trace_function(fun: Callable[..., Any], in_tree: PyTreeDef, in_avals: Sequence[ShapedArray],
                   what: str = "", named: Callable[..., Any] | None = None
                   ) -> tuple[ClosedJaxpr, list[Any], PyTreeDef]:
    """Trace `fun(*tree_unflatten(in_tree, leaves))` into a jaxpr without constants.

    Returns the jaxpr, whose leading inputs stand for the values `fun` closes over (arrays,
    and tracers of outer transformations, which must see them flow into the primitive),
    those values, and the pytree structure of the output. As in JAX, the primitive takes
    them as operands (the loop constants of a scan or while). Errors name the
    transformation `what` and the user's function `named` (`fun` by default) taking the
    same arguments (see `debug_info`).
    """
    out_trees: list[PyTreeDef] = []

    def flat(*leaves: Any) -> list[Any]:
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out_leaves
    debug = debug_info(what, named or fun, in_tree, in_avals) if what else None
    closed = trace_to_jaxpr(flat, list(in_avals), debug)
    jaxpr = closed.jaxpr
    opened = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(opened, []), list(closed.consts), out_trees[0]


# Loop bodies traced at top level, by the user's function (see `traced_once`).
TRACES = JaxprCache()
# The options that change what tracing a function produces, besides x64.
_TRACE_OPTIONS = ("jax_numpy_rank_promotion", "jax_numpy_dtype_promotion",
                  "jax_default_matmul_precision")


def traced_once(owner: Any, what: str, fun: Callable[..., Any], in_tree: PyTreeDef,
                in_avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any], PyTreeDef]:
    """`trace_function(fun, in_tree, in_avals)`, traced once per `owner` (the user's
    function, held weakly), `what`, signature and options when called outside every
    transformation, as JAX caches the jaxprs of loop bodies: a loop called eagerly again
    with the same function then carries the same jaxpr, whose compilation is cached.

    As in JAX, a function traced once is not traced again for the same signature, so a
    global it reads is read at the first trace. Traces under a transformation, and those
    closing over tracers, are not kept.
    """
    if current_trace() is not root_trace():
        return trace_function(fun, in_tree, in_avals, what, owner)

    def compute() -> tuple[tuple[ClosedJaxpr, list[Any], PyTreeDef], bool]:
        traced = trace_function(fun, in_tree, in_avals, what, owner)
        return traced, not any(isinstance(c, Tracer) for c in traced[1])
    options = tuple(config.read(name) for name in _TRACE_OPTIONS)
    return TRACES.get(owner, (what, in_tree, tuple(in_avals), options), compute)


# The functions that loop wrappers build around a user's function (fori_loop's step,
# map's body), one per user function and variant (see `wrapper_for`).
WRAPPERS = JaxprCache()


def wrapper_for(fun: Callable, variant: Hashable,
                build: Callable[[Callable[[], Callable]], Callable]) -> Any:
    """`build(held)`, the wrapper a loop function makes around the user's `fun`, made once
    per `fun` and `variant`, so that a loop called again with the same function passes the
    same wrapper to `traced_once` (and compiles once). `held()` gives `fun` back; the
    wrapper must reach `fun` only through it, which does not keep `fun` alive."""
    try:
        held = weakref.ref(fun)
    except TypeError:  # not weakly referable: a wrapper per call, as before
        return build(lambda: fun)
    return WRAPPERS.get(fun, variant, lambda: (build(held), True))


def run_in_python() -> bool:
    """Whether control flow runs as Python `if`/`while` (under `jax.disable_jit()`, as JAX)."""
    return bool(config.read("jax_disable_jit"))


def is_concrete(value: Any) -> bool:
    """Whether Python can read the value (not a tracer that hides it)."""
    return not isinstance(value, Tracer) or value.concrete_value() is not None


def abstractify(leaves: Sequence[Any]) -> list[ShapedArray]:
    return [get_aval(x) for x in leaves]


def eval_closed(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def nested_equations(*values: Any) -> Iterator[JaxprEqn]:
    """Every equation of the jaxprs among `values` (in tuples and lists too), and of the
    jaxprs nested in their equations' parameters."""
    stack: list[Any] = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, (tuple, list)):
            stack.extend(value)
        elif isinstance(value, (ClosedJaxpr, Jaxpr)):
            for eqn in (value.jaxpr if isinstance(value, ClosedJaxpr) else value).eqns:
                yield eqn
                stack.extend(eqn.params.values())


def io_callbacks_in(*jaxprs: ClosedJaxpr | Jaxpr) -> tuple[bool, bool]:
    """Whether the jaxprs (or jaxprs nested in their equations) call `io_callback`, and
    whether one such call is ordered: JAX's IO effects, which some vmap rules refuse."""
    found = ordered = False
    for eqn in nested_equations(*jaxprs):
        if eqn.primitive.name == "io_callback":
            found, ordered = True, ordered or bool(eqn.params.get("ordered"))
    return found, ordered


def is_partial_eval() -> bool:
    """Whether a jvp rule runs under linearize (its tangent trace stages linear work)."""
    trace = current_trace()
    return isinstance(trace, StagingTrace) and trace.forward_known


def with_unused_invars(closed: ClosedJaxpr, at: int,
                       avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """`closed` taking extra, unused inputs of `avals`, inserted before its input `at`."""
    if not avals:
        return closed
    jaxpr = closed.jaxpr
    invars = list(jaxpr.invars)
    invars[at:at] = [Var(a) for a in avals]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns),
                       closed.consts)


def unify_hoisted(traced: Sequence[tuple[ClosedJaxpr, Sequence[Any]]]
                  ) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Jaxprs of one signature from jaxprs that each lead with their own hoisted tracers.

    Each returned jaxpr takes every jaxpr's tracers (in order) before its other inputs;
    the second result is all those tracers, to pass as the leading operands.
    """
    all_consts = [c for _, consts in traced for c in consts]
    avals = [[get_aval(c) for c in consts] for _, consts in traced]
    unified = []
    for i, (closed, consts) in enumerate(traced):
        before = [a for group in avals[:i] for a in group]
        after = [a for group in avals[i + 1:] for a in group]
        closed = with_unused_invars(closed, len(consts), after)
        unified.append(with_unused_invars(closed, 0, before))
    return unified, all_consts


def function_description(fun: Any) -> str:
    """`name at file:line`, as JAX names the user's functions in error messages."""
    name = getattr(fun, "__name__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def first_parameter_name(fun: Any, default: str) -> str:
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return default
    return params[0] if params else default


# ---------------------------------------------------------------------------- types

def type_str(aval: ShapedArray) -> str:
    """`float32[2,3]`: the type as JAX's control-flow errors print it."""
    return f"{np.dtype(aval.dtype).name}[{','.join(str(d) for d in aval.shape)}]"


def same_type(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shapes and dtypes (weak types may differ, as JAX's `typematch`)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _what_differs(a: ShapedArray, b: ShapedArray) -> str:
    parts = [p for p, differs in (("shapes", a.shape != b.shape),
                                  ("dtypes", a.dtype != b.dtype)) if differs]
    return " and ".join(parts)


def check_carry(what: str, carry_name: str, init: Any, out_tree: PyTreeDef,
                in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> None:
    """The carry output of a loop body must have the carry input's structure and types."""
    in_tree = tree_flatten(init)[1]
    if in_tree != out_tree:
        raise TypeError(
            f"{what} body function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nThe input carry {carry_name} has structure "
            f"{in_tree} but the carry output has structure {out_tree}.\n\nRevise the function "
            "so that the carry output has the same pytree structure as the carry input.")
    paths = [keystr(p) for p, _ in tree_flatten_with_path(init)[0]]
    lines = []
    for path, a, b in zip(paths, in_avals, out_avals):
        if same_type(a, b):
            continue
        component = f"carry {carry_name}" if not path else f"carry component {carry_name}{path}"
        lines.append(f"The input {component} has type {type_str(a)} but the corresponding "
                     f"output carry component has type {type_str(b)}, so the "
                     f"{_what_differs(a, b)} do not match.")
    if lines:
        raise TypeError(
            f"{what} body function carry input and carry output must have equal types, but "
            "they differ:\n\n" + "\n".join(lines) + "\n\nRevise the function so that all "
            "output types match the corresponding input types.")


def promote_weak_carry(init_leaves: Sequence[Any], in_avals: Sequence[ShapedArray],
                       out_avals: Sequence[ShapedArray]) -> tuple[list[Any], bool]:
    """Convert weakly typed initial carries to the type the body gives them back.

    `fori_loop(0, n, lambda i, c: c + 0.5, 0)` starts with a weak int and returns floats:
    as in JAX, such a carry starts as the promoted type instead of failing the type check.
    A carry whose only change is losing its weak type stays as it is (JAX's `typematch`
    ignores weak types), so values the body computes from it stay weak in the first step.
    Returns the new leaves and whether any changed (then the body is traced again).
    """
    new, changed = [], False
    for leaf, a, b in zip(init_leaves, in_avals, out_avals):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            dtype = dtypes.result_type(a, b)
            new.append(_convert_element_type(leaf, dtype, weak_type=False))
            changed = True
        else:
            new.append(leaf)
    return new, changed


def check_branch_outputs(what: str, names: Sequence[str], funs: Sequence[Any],
                         trees: Sequence[PyTreeDef],
                         avals: Sequence[Sequence[ShapedArray]]) -> None:
    """Every branch of a cond or switch must return the same structure and types."""
    described = "\n".join(f"{n} is {function_description(f)}" for n, f in zip(names, funs))
    first = names[0]
    for name, tree in zip(names[1:], trees[1:]):
        if tree != trees[0]:
            raise TypeError(
                f"{what} branch outputs must have the same pytree structure, but they "
                f"differ:\n\n{described}\n\n{first} output has structure {trees[0]} but "
                f"{name} output has structure {tree}.\n\nRevise {first} and/or {name} so "
                "that they have the same pytree structure.")
    paths = [keystr(p) for p, _ in tree_flatten_with_path(
        tree_unflatten(trees[0], range(len(avals[0]))))[0]]
    for name, branch_avals in zip(names[1:], avals[1:]):
        for path, a, b in zip(paths, avals[0], branch_avals):
            if same_type(a, b):
                continue
            at = f" at path {path}" if path else ""
            raise TypeError(
                f"{what} branches must have equal output types but they differ.\n\n"
                f"{described}\n\nThe output of {first}{at} has type {type_str(a)} but the "
                f"corresponding output of {name} has type {type_str(b)}, so the "
                f"{_what_differs(a, b)} do not match.\n\nRevise {first} and/or {name} so that "
                "all output types match.")


def convert_outputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """`closed` with each output converted to the weak type in `avals` (if it differs)."""
    if all(a.weak_type == b.weak_type for a, b in zip(closed.out_avals, avals)):
        return closed

    def fun(*args: Any) -> list[Any]:
        outs = eval_closed(closed, *args)
        return [_convert_element_type(o, a.dtype, weak_type=a.weak_type) for o, a in
                zip(outs, avals)]
    return trace_to_jaxpr(fun, closed.in_avals)


# ------------------------------------------------------------------- transformed jaxprs

def differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


def is_zero(tangent: Any) -> bool:
    """A symbolic zero, or the float0 tangent of an integer value."""
    return isinstance(tangent, Zero) or get_aval(tangent).dtype == dtypes.float0


def nonzero_tangents(tangents: Sequence[Any]) -> list[bool]:
    return [not is_zero(t) for t in tangents]


def jvp_closed(closed: ClosedJaxpr, nonzero: Sequence[bool],
               instantiate_out: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """The jvp of `closed`: (primals, tangents where `nonzero`) -> (outputs, tangents).

    Output tangents are returned where they are not symbolically zero or where
    `instantiate_out` asks for them (as zeros); the second result says which.
    """
    in_avals = closed.in_avals
    nonzero = [nz and differentiable(a) for nz, a in zip(nonzero, in_avals)]
    out_nonzero: list[bool] = []
    num_in = len(in_avals)

    def fun(*args: Any) -> list[Any]:
        primals, given = list(args[:num_in]), iter(args[num_in:])
        tangents = [next(given) if nz else Zero(tangent_aval(a))
                    for nz, a in zip(nonzero, in_avals)]
        outs, out_tangents = jvp_flat(lambda *a: eval_closed(closed, *a), primals, tangents)
        mask = [differentiable(a) and (inst or not is_zero(t)) for t, inst, a in
                zip(out_tangents, instantiate_out, closed.out_avals)]
        out_nonzero[:] = mask
        return list(outs) + [instantiate(t) for t, m in zip(out_tangents, mask) if m]
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero) if nz]
    jaxpr = trace_to_jaxpr(fun, list(in_avals) + tangent_avals)
    return jaxpr, out_nonzero


def linearize_closed(closed: ClosedJaxpr, nonzero: Sequence[bool],
                     out_nonzero: Sequence[bool], forwardable: int = 0
                     ) -> tuple[ClosedJaxpr, ClosedJaxpr, list[int | None]]:
    """Split the jvp of `closed` into a known and a linear jaxpr.

    The known jaxpr maps the primal inputs to the outputs followed by residuals; the linear
    one maps (residuals, tangents where `nonzero`) to the output tangents where
    `out_nonzero`. A residual that is one of the first `forwardable` inputs itself is not
    an output of the known jaxpr: the third result gives, per residual of the linear
    jaxpr, that input's index, or None for residuals the known jaxpr returns (in order).
    """
    nonzero = [nz and differentiable(a) for nz, a in zip(nonzero, closed.in_avals)]
    parts: list[Any] = []

    def known_fun(*xs: Any) -> list[Any]:
        outs, linear, _ = linearize_flat(lambda *a: eval_closed(closed, *a), xs, nonzero)
        linear, residuals = hoist_tracer_consts(linear)
        forwarded = [next((i for i in range(forwardable) if xs[i] is r), None)
                     for r in residuals]
        parts[:] = [linear, forwarded]
        return list(outs) + [r for r, f in zip(residuals, forwarded) if f is None]
    known = trace_to_jaxpr(known_fun, closed.in_avals)
    linear, forwarded = parts
    keep = [i for i, nz in enumerate(out_nonzero) if nz]
    if len(keep) != len(linear.out_avals):
        full = linear
        linear = trace_to_jaxpr(lambda *a: [eval_closed(full, *a)[i] for i in keep],
                                full.in_avals)
    return known, linear, forwarded


def batch_closed(closed: ClosedJaxpr, axis_size: int, batched: Sequence[bool],
                 force_out: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """`closed` mapped over a leading axis of the inputs marked `batched`.

    An output is batched (along its leading axis) when it depends on a batched input or
    `force_out` asks for it; the second result says which outputs are.
    """
    in_avals = [ShapedArray((axis_size, *a.shape), a.dtype, a.weak_type) if b else a
                for a, b in zip(closed.in_avals, batched)]
    out_batched: list[bool] = []

    def inner(*xs: Any) -> list[Any]:
        outs = eval_closed(closed, *xs)
        out_batched[:] = [f or (isinstance(o, BatchTracer) and o.batch_dim is not None)
                          for o, f in zip(outs, force_out)]
        return outs

    def fun(*args: Any) -> list[Any]:
        return vmap_flat(inner, axis_size, args, [0 if b else None for b in batched],
                         lambda: [0 if b else None for b in out_batched])
    jaxpr = trace_to_jaxpr(fun, in_avals)
    return jaxpr, out_batched


def symbolic_zeros(tangents: Sequence[Any], mask: Sequence[bool],
                   avals: Sequence[ShapedArray]) -> list[Any]:
    """Tangents where `mask`, taken in order from `tangents`; `Zero` elsewhere."""
    given = iter(tangents)
    return [next(given) if m else Zero(tangent_aval(a)) for m, a in zip(mask, avals)]
