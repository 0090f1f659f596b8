"""`ffi_call_p`: a call of a registered XLA FFI handler (mirrors JAX's `ffi_call_p`).

Parameters: `target_name`, `result_avals` (the declared results, dtypes kept as given),
`attributes` (the keyword attributes as `xla.ffi.attributes` encodes them: a canonical
text, hashable, so equal calls share one compiled program), `vmap_method`,
`has_side_effect`, `input_output_aliases` ((input, output) pairs: the output buffer starts
as a copy of the input, as XLA's aliasing gives handlers), and `input_layouts` /
`output_layouts`: per operand and result, the major-to-minor order its buffer is stored in
(`()`: row-major). The operands and results of the primitive are the arrays as stored
(`jaxlite.ffi.ffi_call` transposes them in and out); the handler is told the logical
dimensions, as XLA tells it for a buffer of another layout.

- eager: the handler is called on the numpy arguments through a frame built in Python
  (`xla.ffi.frames`);
- lowering: a custom-call to the target name whose `backend_config` is the attribute
  text and whose shape is the tuple of results, numbered as a call site (the handler's
  state is per site of each lowering, as JAX's is per site of each executable); the interpreter backend calls the handler
  the same way, the cpu backend calls it from generated code (`codegen/ffi_thunk.py`);
- vmap: as `vmap_method` says, with JAX's rules ("sequential" and "sequential_unrolled":
  one call per element through a scan; "expand_dims": one call, unbatched arguments get
  a leading axis of size 1; "broadcast_all": one call, every argument batched;
  "legacy_vectorized": one call, unbatched arguments as they are); None raises JAX's
  NotImplementedError;
- jvp and transpose raise JAX's ValueError: differentiate through `custom_vjp`/`custom_jvp`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.dce import dce_rules
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.callbacks import batch_by_vmap_method
from jaxlite.xla.ffi import frames, registry
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["ffi_call_p", "lower_ffi_custom_call", "VMAP_METHODS"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)

ffi_call_p = Primitive("ffi_call", multiple_results=True)


def _abstract_eval(*avals: ShapedArray, result_avals: tuple[ShapedArray, ...],
                   **params: Any) -> list[ShapedArray]:
    return list(result_avals)


def _impl(*args: np.ndarray, target_name: str, result_avals: tuple[ShapedArray, ...],
          attributes: str, input_output_aliases: tuple[tuple[int, int], ...] = (),
          input_layouts: tuple = (), output_layouts: tuple = (),
          **params: Any) -> list[np.ndarray]:
    results = [(tuple(a.shape), np.dtype(a.dtype)) for a in result_avals]
    return frames.call_target(target_name, args, results, attributes,
                              aliases=input_output_aliases,
                              layouts=_layouts(len(args), len(results), input_layouts,
                                               output_layouts))


def _layouts(n_args: int, n_results: int, input_layouts: tuple,
             output_layouts: tuple) -> tuple:
    """Per argument then result, its major-to-minor axis order (`()`: row-major)."""
    return (tuple(input_layouts) or ((),) * n_args) + (tuple(output_layouts) or ((),) * n_results)


def _with_leading_axis(layout: tuple) -> tuple:
    """The layout of a buffer that gained a leading (batch) axis, the slowest."""
    return (0, *(axis + 1 for axis in layout)) if layout else ()


def _not_differentiable(*args: Any, target_name: str, **params: Any):
    raise ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can use "
                     "`jax.custom_jvp` or `jax.custom_jvp` to add support.")


def _batched_layouts(params: dict, dims: Sequence[int | None], vmap_method: str) -> dict:
    """The layouts of the vectorized call: the batch axis is the slowest (as JAX), except
    on operands that "legacy_vectorized" leaves unbatched."""
    ins = params.get("input_layouts") or ((),) * len(dims)
    outs = params.get("output_layouts") or ()  # empty: every result in its default layout
    return dict(params, input_layouts=tuple(
        l if d is None and vmap_method == "legacy_vectorized" else _with_leading_axis(l)
        for l, d in zip(ins, dims)), output_layouts=tuple(_with_leading_axis(l) for l in outs))


def _batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
           **params: Any) -> tuple[list[Any], list[int]]:
    return batch_by_vmap_method(ffi_call_p, axis_size, args, dims,
                                vectorized_params=_batched_layouts, **params)


def lower_ffi_custom_call(ctx: LoweringContext, operands: Sequence[HloInstruction],
                          target_name: str, attributes: str, has_side_effect: bool = False,
                          input_output_aliases: Sequence[tuple[int, int]] = (),
                          layouts: Sequence[tuple] = ()) -> list[HloInstruction]:
    """The custom-call of an FFI call: target, attribute text, a tuple of the equation's
    results; its elements. (Also what `jax.ffi.ffi_lowering` rules emit.)"""
    shape = Shape.tuple([ctx.shape(a) for a in ctx.avals_out])
    attrs: dict[str, Any] = {"target": target_name, "backend_config": attributes,
                             "custom_call_has_side_effect": bool(has_side_effect)}
    if input_output_aliases:
        attrs[frames.ALIASES_ATTRIBUTE] = tuple(tuple(pair) for pair in input_output_aliases)
    if any(layouts):
        attrs[frames.LAYOUTS_ATTRIBUTE] = tuple(tuple(l) for l in layouts)
    attrs[frames.SITE_ATTRIBUTE] = frames.new_site()
    call = ctx.builder.add(Opcode.CUSTOM_CALL, shape, tuple(operands), attrs)
    return [hlo.get_tuple_element(ctx, call, i) for i in range(len(ctx.avals_out))]


def _lower(ctx: LoweringContext, *operands: HloInstruction, target_name: str,
           attributes: str, has_side_effect: bool,
           input_output_aliases: tuple[tuple[int, int], ...] = (),
           input_layouts: tuple = (), output_layouts: tuple = (),
           **params: Any) -> list[HloInstruction]:
    if not registry.registered_anywhere(target_name):  # (a CUDA-only target is fine here:
        registry.lookup(target_name)  # the gpu backend finds it) JAX's NOT_FOUND error
    layouts = _layouts(len(operands), len(ctx.avals_out), input_layouts, output_layouts)
    return lower_ffi_custom_call(ctx, operands, target_name, attributes, has_side_effect,
                                 input_output_aliases, layouts)


def _dce(used_outputs: list[bool], eqn: Any) -> tuple[list[bool], Any]:
    """An unused call stays only when it has side effects (JAX's FfiEffect)."""
    keep = eqn.params["has_side_effect"] or any(used_outputs)
    return [keep] * len(eqn.invars), (eqn if keep else None)


ffi_call_p.abstract_eval = _abstract_eval
ffi_call_p.reference = _impl
ffi_call_p.jvp = _not_differentiable
ffi_call_p.transpose = _not_differentiable
ffi_call_p.batch = _batch
ffi_call_p.lower = _lower
dce_rules[ffi_call_p] = _dce
