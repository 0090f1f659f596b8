"""What the collectives of `parallel.py` and `parallel_exchange.py` share.

A collective primitive names the axes it communicates over. Nothing evaluates it directly:
the `vmap` (or `pmap`) that binds one of its axes resolves it through the primitive's
`batch` rule, which reads that axis's name from `rule_trace().axis_name` and rewrites the
collective as ordinary array operations along the batch axis. Every other trace passes it
along: `jvp` through the linear rules, `jit` by staging it (its shape rule checks that the
names are bound), and a batch trace of another axis by moving its positional parameters
past the batch axis. A collective that reaches eager evaluation or lowering was used
outside every map that binds its names.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.batching import collective_axes, rule_trace, vmap_flat
from jaxlite.interpreters.named_axes import axis_size, check_axis_names


def axis_names(axis_name: Any) -> tuple:
    """An `axis_name` argument as a tuple of names (a tuple or list names several axes)."""
    if isinstance(axis_name, (tuple, list)):
        return tuple(axis_name)
    return (axis_name,)


def group_size(names: Sequence[Any], axis_index_groups: Any = None) -> int:
    """The number of members a collective over `names` combines (JAX's `_axis_size`)."""
    if axis_index_groups is not None:
        return len(axis_index_groups[0])
    return math.prod(axis_size(name) for name in names)


def canonical_groups(axis_index_groups: Any) -> tuple | None:
    if axis_index_groups is None:
        return None
    return tuple(tuple(int(i) for i in group) for group in axis_index_groups)


def own_axis() -> Any:
    """The name of the axis whose batch rule is running (None for an unnamed vmap)."""
    trace = rule_trace()
    return None if trace is None else trace.axis_name


def resolves_here(names: Sequence[Any], axis_index_groups: Any = None) -> bool:
    """Whether the running batch rule's axis is one of `names` (then the rule resolves it)."""
    own = own_axis()
    if own is None or own not in names:
        return False
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                  "Please open a feature request!")
    return True


def other_names(names: Sequence[Any]) -> tuple:
    own = own_axis()
    return tuple(n for n in names if n != own)


def sizes_around_own(names: Sequence[Any]) -> tuple[int, int]:
    """Sizes of the combined axes before and after the running rule's axis in `names`.

    A collective over several names treats them as one axis whose index is major in the
    first name (JAX's and XLA's convention).
    """
    position = list(names).index(own_axis())
    return (math.prod(axis_size(n) for n in names[:position]),
            math.prod(axis_size(n) for n in names[position + 1:]))


def declare_collective(name: str, names_of: Callable[[dict], tuple], api: str,
                       multiple_results: bool = False) -> Primitive:
    """A collective primitive with the rules every collective shares: registration with the
    batch traces, and a clear error where it escapes every map that binds its names."""
    primitive = Primitive(name, multiple_results)
    collective_axes[primitive] = names_of

    def reference(*args: Any, **params: Any) -> Any:
        raise _escaped(api, names_of(params), "eager evaluation")

    def lower(ctx: Any, *args: Any, **params: Any) -> Any:
        raise _escaped(api, names_of(params), "lowering to HLO")
    primitive.reference = reference
    primitive.lower = lower
    return primitive


def _escaped(api: str, names: tuple, where: str) -> Exception:
    check_axis_names(names, api)  # an unbound name is JAX's NameError
    return NotImplementedError(
        f"{api} over the axes {names} reached {where} outside the vmap or pmap that binds "
        "them: collectives run only where a map resolves them.")


def within_own_axis(fun: Callable[[Any], Any], x: Any, dim: int | None,
                    size: int) -> tuple[Any, int]:
    """Run `fun` per member of the running rule's axis, that axis bound again.

    A batch rule for a collective over several names expresses the collective with simpler
    collectives; inside `fun` those resolve the rule's own axis at once and reach the other
    names' maps through the parent traces. The result's batch axis is 0.
    """
    out, = vmap_flat(lambda v: [fun(v)], size, [x], [dim], 0, axis_name=own_axis())
    return out, 0
