"""checkify's error value, and the `check` primitive that raises it.

An `Error` holds, per kind of error (an `ErrorEffect`), whether it happened (`_pred`), which
check raised it first (`_code`, a number unique to the check) and the run-time values its
message needs (`_payload`). The message itself stays in Python: `_metadata` maps each code
to the treedef that rebuilds the exception from the payload. Merging a check into an error
keeps the first failure of each kind; of several kinds, the one whose check was traced
first (smallest code) is reported.

`check_p` takes an error's leaves. Run eagerly it raises `JaxRuntimeError` for a failure;
`checkify` removes it from a program by merging its error into the one it threads (the
"discharge"); anywhere else it cannot be compiled, as in JAX.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, Sequence, Union

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.basearray import Array
from jaxlite.core.primitive import Primitive
from jaxlite.experimental.checkify._errors import (BatchedError, ErrorEffect, JaxException,
                                                   JaxRuntimeError)
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.tree_util import register_pytree_node_class, tree_flatten, tree_map, tree_unflatten

Bool = Union[bool, Array]
Int = Union[int, Array]


@register_pytree_node_class
@dataclasses.dataclass(frozen=True)
class Error:
    """A functional error value (mirrors `jax.experimental.checkify.Error`): what the
    checks of a checkified function found, as arrays."""

    _pred: dict
    _code: dict
    _metadata: dict
    _payload: dict

    def get(self) -> str | None:
        """The error message if an error happened, else None."""
        exception = self.get_exception()
        return None if exception is None else str(exception)

    def get_exception(self) -> JaxException | None:
        """The Python exception if an error happened, else None."""
        if any(np.shape(v) for v in self._pred.values()):
            return self._get_batched_exception()
        return self._first_exception(lambda x: x)

    def throw(self) -> None:
        """Raise JaxRuntimeError if an error happened (functionalized by `checkify`)."""
        check_error_value(self)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    def _first_exception(self, at: Any) -> JaxException | None:
        # The failing kind whose check came first (smallest code).
        best = None
        for effect, code in self._code.items():
            if bool(at(self._pred[effect])):
                code = int(at(code))
                if best is None or code < best[0]:
                    best = (code, effect)
        if best is None:
            return None
        payload = tree_map(at, self._payload[best[1]])
        return tree_unflatten(self._metadata[best[0]], payload)

    def _get_batched_exception(self) -> BatchedError | None:
        shape = np.shape(next(iter(self._pred.values())))
        mapping = {}
        for idx in np.ndindex(*shape):
            exception = self._first_exception(lambda x, i=idx: np.asarray(x)[i])
            if exception is not None:
                mapping[idx] = exception
        return BatchedError(mapping) if mapping else None

    def _update(self, effect: ErrorEffect, pred: Any, code: Any, metadata: dict,
                payload: Any) -> "Error":
        return Error({**self._pred, effect: pred}, {**self._code, effect: code},
                     {**self._metadata, **metadata}, {**self._payload, effect: payload})

    def _add_placeholder_effects(self, effects: Any) -> "Error":
        """The error with an entry for every kind in `effects`: control flow needs the same
        kinds going in and coming out. New entries never fire, so their code is -1."""
        pred, code, payload = dict(self._pred), dict(self._code), dict(self._payload)
        for effect in effects:
            if effect not in pred:
                pred[effect] = False
                code[effect] = -1
                payload[effect] = [jnp.ones(sd.shape, sd.dtype) for sd in effect.shape_dtypes]
        return Error(pred, code, self._metadata, payload)

    def _replace(self, **changes: Any) -> "Error":
        return dataclasses.replace(self, **changes)

    def tree_flatten(self) -> tuple[tuple, dict]:
        return (self._pred, self._code, self._payload), self._metadata

    @classmethod
    def tree_unflatten(cls, metadata: dict, data: tuple) -> "Error":
        pred, code, payload = data
        return cls(pred, code, metadata, payload)


init_error = Error({}, {}, {}, {})
# Codes are unique per check for the life of the process.
next_code = itertools.count(1).__next__


def assert_func(error: Error, pred: Any, new_error: JaxException) -> Error:
    """`error` with `new_error` recorded where `pred` is True (unless it already failed)."""
    code = next_code()
    payload, metadata = tree_flatten(new_error)
    return update_error(error, pred, code, {code: metadata}, payload,
                        new_error.get_effect_type())


def update_error(error: Error, pred: Any, code: Any, metadata: dict, payload: Any,
                 effect: ErrorEffect) -> Error:
    """Merge one failure of kind `effect` into `error`, keeping an earlier one of that kind."""
    failed_before = error._pred.get(effect, False)
    new_pred = failed_before | pred
    new_code = lax.select(failed_before, error._code.get(effect, -1), code)
    old_payload = error._payload.get(effect)
    if old_payload is not None:
        payload = tree_map(functools.partial(lax.select, failed_before), old_payload, payload)
    return error._update(effect, new_pred, new_code, metadata, payload)


# ------------------------------------------------------------------------- check_p

check_p = Primitive("check", multiple_results=True)  # no results: it only raises
check_p.effectful = True  # never removed as dead code

FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")


def _check_impl(*args: Any, err_tree: Any, debug: bool) -> list:
    if debug:
        return []  # a debug_check only acts under checkify
    exception = tree_unflatten(err_tree, args).get_exception()
    if exception is not None:
        raise JaxRuntimeError(str(exception)) from exception
    return []


def _check_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, err_tree: Any,
               debug: bool) -> tuple[list, list]:
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


def _check_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, err_tree: Any,
                 debug: bool) -> tuple[list, list]:
    # One check for the whole batch, reporting one failing member.
    error = tree_unflatten(err_tree, batch_at_front(args, dims, axis_size))
    check_error_value(error, debug=debug)
    return [], []


def _check_lower(ctx: Any, *args: Any, err_tree: Any, debug: bool) -> list:
    if debug:
        return []
    raise ValueError(FUNCTIONALIZATION_ERROR)


check_p.impl = _check_impl
check_p.abstract_eval = lambda *avals, err_tree, debug: []
check_p.jvp = _check_jvp
check_p.batch = _check_batch
check_p.lower = _check_lower
check_p.print_params = lambda params: [("debug", params["debug"])]


def reduce_any_error(error: Error) -> Error:
    """A batched error reduced to one member: per kind, a member where it failed."""
    reduced = init_error
    for effect in error._pred:
        pred, code, payload = error._pred[effect], error._code[effect], error._payload[effect]
        member = jnp.argsort(pred)[-1]
        pred, code, payload = tree_map(lambda x: x[member], (pred, code, payload))
        reduced = reduced._update(effect, pred, code, {}, payload)
    return reduced._replace(_metadata=error._metadata)


def check_error_value(error: Error, *, debug: bool = False) -> None:
    """Bind `check_p` on an error's leaves (reduced first if it is batched)."""
    if any(np.shape(p) for p in error._pred.values()):
        error = reduce_any_error(error)
    leaves, tree = tree_flatten(error)
    check_p.bind(*leaves, err_tree=tree, debug=debug)
