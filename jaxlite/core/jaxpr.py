"""Jaxprs: the typed, first-order programs that tracing produces (mirrors `jax.core.Jaxpr`).

A `Jaxpr` is a list of equations in SSA form over `Var`s and `Literal`s; a `ClosedJaxpr`
pairs it with the values of its constant variables. This module also prints jaxprs in the
style of `jax.make_jaxpr` and evaluates them by binding each equation's primitive, so that
evaluating a jaxpr under a trace transforms it.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.core.source_info import attributed_to

_var_ids = itertools.count()


class Var:
    """A variable of a jaxpr; printed names are chosen when the jaxpr is printed."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray, initial_qdd: Any = None,
                 final_qdd: Any = None) -> None:
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var{self.id}:{self.aval.str_short()}"


class DropVar(Var):
    """An output variable nothing reads (mirrors `jax.extend.core.DropVar`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class Literal:
    """A scalar constant written inline in a jaxpr (e.g. `2.0:f32[]`).

    `value` is a 0-d array-like: a Python or numpy scalar, or, for a weak-typed constant, an
    object with an `aval` that keeps the weak type when the jaxpr is evaluated again. Read
    it with `np.asarray(value)`; `aval` holds its type.
    """

    __slots__ = ("value", "aval")

    def __init__(self, value: Any, aval: ShapedArray) -> None:
        self.value = value
        self.aval = aval

    @property
    def val(self) -> Any:
        """The value (JAX's name for it)."""
        return self.value

    def __repr__(self) -> str:
        value = np.asarray(self.value).item()
        if isinstance(value, bool):
            text = str(value)
        elif isinstance(value, float):
            text = repr(value)
        else:
            text = str(value)
        return f"{text}:{self.aval.str_short()}"


Atom = Var | Literal


@dataclass
class JaxprEqn:
    """One equation: `outvars = primitive[params] invars` (mirrors `jax.extend.core.JaxprEqn`,
    fields in JAX's order; jaxlite records no effects, source information or context)."""

    invars: list[Atom]
    outvars: list[Var]
    primitive: Any
    params: dict[str, Any]
    effects: Any = frozenset()
    source_info: Any = None
    ctx: Any = None

    def replace(self, **changes: Any) -> "JaxprEqn":
        return dataclasses.replace(self, **changes)


@dataclass(eq=False)
class Jaxpr:
    """A program: constants, inputs, equations and outputs (mirrors `jax.core.Jaxpr`).

    Compared and hashed by identity, as JAX's, so that a jaxpr can be a static argument
    (equinox passes closure-converted functions, which hold one, to `jit`).
    """

    constvars: list[Var]
    invars: list[Var]
    outvars: list[Atom]
    eqns: list[JaxprEqn] = field(default_factory=list)
    effects: Any = frozenset()
    debug_info: Any = None
    is_high: bool = False

    def replace(self, **changes: Any) -> "Jaxpr":
        return dataclasses.replace(self, **changes)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pretty_print(self)

    __repr__ = __str__

    def pretty_print(self, *, source_info: bool = False, print_shapes: bool = True,
                     name_stack: bool = False, **_options: Any) -> str:
        """The jaxpr as text, each equation annotated with its user line (`source_info`)
        and name stack (`name_stack`) when asked (mirrors `jax.core.Jaxpr.pretty_print`;
        JAX's other options are accepted and change nothing)."""
        return pretty_print(self, source_info=source_info, print_shapes=print_shapes,
                            name_stack=name_stack)


@dataclass(eq=False)
class ClosedJaxpr:
    """A `Jaxpr` with the values of its constants (mirrors `jax.core.ClosedJaxpr`); compared
    and hashed by identity, as JAX's."""

    jaxpr: Jaxpr
    consts: list[Any]

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    @property
    def literals(self) -> list[Any]:
        return self.consts

    @property
    def effects(self) -> Any:
        return self.jaxpr.effects

    def replace(self, **changes: Any) -> "ClosedJaxpr":
        return dataclasses.replace(self, **changes)

    def __str__(self) -> str:
        return pretty_print(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **options: Any) -> str:
        """Its jaxpr's `pretty_print` (mirrors `jax.core.ClosedJaxpr.pretty_print`)."""
        return self.jaxpr.pretty_print(**options)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any,
               propagate_source_info: bool = True) -> list[Any]:
    """Run a jaxpr by binding each equation under the current trace (`jax.core.eval_jaxpr`).

    With `propagate_source_info`, what an equation stages (under jit, grad, vmap) keeps the
    equation's user line and name stack."""
    env: dict[Var, Any] = {}

    def read(atom: Atom) -> Any:
        return atom.value if isinstance(atom, Literal) else env[atom]

    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, "
                        f"got {len(args)}")
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        try:
            if propagate_source_info and eqn.source_info is not None:
                with attributed_to(eqn.source_info):
                    outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            else:
                outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        except FloatingPointError as error:  # jax_debug_nans: say which line made it
            _note_source(error, eqn)
            raise
        if not eqn.primitive.multiple_results:
            outs = [outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _note_source(error: BaseException, eqn: JaxprEqn) -> None:
    """Add where `eqn` was traced (the user's line) to `error`, once: the innermost
    equation of nested jaxprs names it."""
    frames = getattr(eqn.source_info, "traceback", None)
    if frames and not getattr(error, "_jaxlite_source_noted", False):
        error._jaxlite_source_noted = True  # type: ignore[attr-defined]
        file, line, function = frames[-1]
        error.add_note(f"The operation {eqn.primitive.name} was traced at {file}:{line} "
                       f"({function}).")


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ----------------------------------------------------------------------------- printing

_LINE_WIDTH = 80


class _Names:
    """Assigns a, b, ..., z, ba, bb, ... to variables in order of first appearance.

    Variables that nothing reads are printed `_` and use up no name, as JAX prints them.
    """

    def __init__(self, print_shapes: bool = True,
                 annotate: Callable[[JaxprEqn], list[str]] | None = None) -> None:
        self.names: dict[Var, str] = {}
        self.used: set[Var] = set()
        self.print_shapes = print_shapes
        # The comment lines printed beside each equation (pretty_print's options).
        self.annotate = annotate

    def fresh(self) -> "_Names":
        """Names starting again from `a`, printed with the same options."""
        return _Names(self.print_shapes, self.annotate)

    def __call__(self, atom: Atom) -> str:
        if isinstance(atom, Literal):
            return repr(atom)
        if atom not in self.names:
            self.names[atom] = _nth_name(len(self.names))
        return self.names[atom]

    def binder(self, var: Var) -> str:
        return f"{self(var)}:{var.aval.str_short()}" if self.print_shapes else self(var)

    def out_binder(self, var: Var) -> str:
        if var not in self.used:
            return f"_:{var.aval.str_short()}" if self.print_shapes else "_"
        return self.binder(var)

    def note_uses(self, jaxpr: Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            self.used.update(v for v in eqn.invars if isinstance(v, Var))
        self.used.update(v for v in jaxpr.outvars if isinstance(v, Var))


def _nth_name(n: int) -> str:
    # The digits of n in base 26 written with a..z, as JAX names them: ..., z, ba, bb, ...
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = letters[n % 26]
    n //= 26
    while n:
        text = letters[n % 26] + text
        n //= 26
    return text


@dataclass(frozen=True)
class OwnNames:
    """A jaxpr parameter printed with names of its own, starting again from `a`.

    A primitive's `print_params` wraps its jaxpr in this when JAX prints it that way (the
    body of `jit`); other jaxpr parameters continue the names of the enclosing jaxpr.
    """

    jaxpr: Any


def _format_param(value: Any, names: _Names, indent: int, lead: int) -> str:
    """A parameter's value; a jaxpr starts `lead` columns after `indent`."""
    if isinstance(value, OwnNames):
        return _format_param(value.jaxpr, names.fresh(), indent, lead)
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return _print_jaxpr(value, names, indent, lead)
    if isinstance(value, tuple) and value and all(
            isinstance(v, (Jaxpr, ClosedJaxpr, OwnNames)) for v in value):
        # A tuple of jaxprs (cond's branches) prints one jaxpr per line, as JAX does.
        inner = indent + 2
        lines = [_format_param(v, names, inner, 0) for v in value]
        return "(\n" + "".join(" " * inner + line + "\n" for line in lines) + " " * indent + ")"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _param_items(eqn: JaxprEqn) -> list[tuple[str, Any]]:
    # A primitive may choose which parameters to show and in which order (`jit` shows its
    # name first, as JAX does); the others show all of them sorted by name.
    printer = getattr(eqn.primitive, "print_params", None)
    if printer is not None:
        return list(printer(eqn.params))
    return sorted(eqn.params.items())


def _print_eqn(eqn: JaxprEqn, names: _Names, indent: int) -> str:
    lhs = " ".join(names.out_binder(v) for v in eqn.outvars)
    rhs_args = " ".join(names(v) for v in eqn.invars)
    params = [f"{k}={_format_param(v, names, indent + 2, len(k) + 1)}"
              for k, v in _param_items(eqn)]
    one_line = f"{lhs} = {eqn.primitive.name}"
    if params:
        one_line += "[" + " ".join(params) + "]"
    one_line += f" {rhs_args}" if rhs_args else ""
    if len(one_line) + indent <= _LINE_WIDTH and "\n" not in one_line:
        return one_line
    pad = " " * (indent + 2)
    head = f"{lhs} = {eqn.primitive.name}"
    if params:
        head += "[\n" + "".join(f"{pad}{p}\n" for p in params) + " " * indent + "]"
    return head + (f" {rhs_args}" if rhs_args else "")


def _print_jaxpr(jaxpr: Jaxpr, names: _Names, indent: int, lead: int = 0) -> str:
    names.note_uses(jaxpr)
    consts = " ".join(names.binder(v) for v in jaxpr.constvars)
    ins = " ".join(names.binder(v) for v in jaxpr.invars)
    eqns = [_print_eqn(e, names, indent + 4) for e in jaxpr.eqns]
    outs = "(" + ", ".join(names(v) for v in jaxpr.outvars) + ("," if len(jaxpr.outvars) == 1
                                                              else "") + ")"
    head = f"{{ lambda {consts}; {ins}. let"
    # JAX keeps the space after `let` even with no equations: `let  in (a,) }`.
    one_line = head + " " + "; ".join(eqns) + f" in {outs} }}"
    if names.annotate is None and len(one_line) + indent + lead <= _LINE_WIDTH and \
            "\n" not in one_line:
        return one_line
    pad = " " * (indent + 4)
    if names.annotate is not None:
        eqns = _annotated(eqns, [names.annotate(e) for e in jaxpr.eqns])
    body = "".join(f"\n{pad}{e}" for e in eqns)
    return f"{head}{body}\n{' ' * (indent + 2)}in {outs} }}"


def _annotated(eqns: list[str], notes: list[list[str]]) -> list[str]:
    """Equations with their notes as comments in one column, 4 spaces right of the widest
    one-line equation, one note per line after an equation's first line (JAX's layout)."""
    width = max((len(e) for e in eqns if "\n" not in e), default=0) + 4
    out = []
    for eqn, lines in zip(eqns, notes):
        first, newline, rest = eqn.partition("\n")
        texts = [first + " " * max(width - len(first), 1) + "# " + lines[0]]
        texts += [" " * width + "# " + note for note in lines[1:]]
        texts[-1] += newline + rest
        out.extend(texts)
    return out


def _eqn_notes(source_info: bool, name_stack: bool) -> Callable[[JaxprEqn], list[str]]:
    def notes(eqn: JaxprEqn) -> list[str]:
        info, lines = eqn.source_info, []
        if source_info:
            frames = getattr(info, "traceback", None)
            lines.append(str(frames[-1]) if frames else "unknown")
        if name_stack:
            lines.append(f"[{getattr(info, 'name_stack', '')}]")
        return lines
    return notes


def pretty_print(jaxpr: Jaxpr, *, source_info: bool = False, print_shapes: bool = True,
                 name_stack: bool = False) -> str:
    """The jaxpr as `jax.make_jaxpr` prints it; with `source_info` / `name_stack`, each
    equation is followed by comments with its user line / name stack, as JAX prints them."""
    annotate = _eqn_notes(source_info, name_stack) if source_info or name_stack else None
    return _print_jaxpr(jaxpr, _Names(print_shapes, annotate), 0)
