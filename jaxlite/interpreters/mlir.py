"""`jax.interpreters.mlir`: how library primitives get lowered under `jit`.

JAX lowers jaxprs to StableHLO (MLIR); jaxlite lowers them to its own HLO IR
(`interpreters/lowering.py`), which both backends (cpu, interpreter) compile. So the one
way a library primitive reaches compiled code is the portable one:

    mlir.register_lowering(my_p, mlir.lower_fun(impl, multiple_results=False))

`lower_fun(impl)` traces `impl` (written with jax.numpy / jax.lax) at the equation's input
types and lowers that jaxpr into the module. A rule written by hand against MLIR is called
with a `LoweringRuleContext` and the operands as jaxlite HLO instructions: rules that only
pass operands through, or that call `lower_fun(...)(ctx, *args)`, work; rules that build
StableHLO operations cannot, and fail naming the primitive. The names of this module that
exist only to build MLIR (`ir_constant`, `aval_to_ir_type`, `emit_python_callback`, ...)
raise NotImplementedError saying so.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Iterable, Sequence, Union

from jaxlite.core.avals import ShapedArray
from jaxlite.core.effects import lowerable_effects
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.source_info import NameStack
from jaxlite.core.trace_state import eval_context
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax import _lowering_util as hlo
from jaxlite.xla.ir import HloInstruction

__all__ = ["register_lowering", "lower_fun", "LoweringRuleContext", "core_call_lowering"]

# The platforms whose lowering jaxlite's backends use: both compile the same HLO for the
# host, so a rule for "cpu" (or for every platform) serves them.
_HOST_PLATFORMS = (None, "cpu")

DEVICE_TO_DEVICE_TYPE = 1
SEND_TO_HOST_TYPE = 2
RECV_FROM_HOST_TYPE = 3

Value = HloInstruction  # what a lowering rule's operands and results are in jaxlite
# JAX's type aliases.
LoweringRule = Callable[..., Sequence[Any]]
MeshAxisName = Any


class Token:
    """An effect token value (MLIR's); jaxlite threads no tokens through lowering."""


class TokenSet:
    """The effect tokens of a lowering (mirrors `mlir.TokenSet`); always empty in jaxlite."""

    def __init__(self, tokens: dict | None = None) -> None:
        self._tokens = dict(tokens or {})

    def effects(self) -> set:
        return set(self._tokens)

    def get(self, effect: Any) -> Any:
        return self._tokens[effect]

    def items(self) -> Any:
        return self._tokens.items()

    def update_tokens(self, tokens: "TokenSet") -> "TokenSet":
        return TokenSet({**self._tokens, **tokens._tokens})


@dataclasses.dataclass(frozen=True)
class LoweringParameters:
    """Options of a lowering (mirrors `mlir.LoweringParameters`); jaxlite reads none."""

    override_lowering_rules: Any = None
    global_constant_computation: bool = False
    for_export: bool = False
    export_ignore_forward_compatibility: bool = False
    hoist_constants_as_args: bool = False


class ModuleContext:
    """What all rules lowering one module share (mirrors `mlir.ModuleContext`).

    `platforms` is what rules usually read; the other fields are kept as given.
    """

    def __init__(self, *, platforms: Sequence[str] = ("cpu",), backend: Any = None,
                 axis_context: Any = None, keepalives: Any = None, channel_iterator: Any = None,
                 host_callbacks: Any = None, lowering_parameters: Any = None,
                 **rest: Any) -> None:
        self.platforms = tuple(platforms)
        self.backend = backend
        self.axis_context = axis_context
        self.keepalives = [] if keepalives is None else keepalives
        self.host_callbacks = [] if host_callbacks is None else host_callbacks
        self.lowering_parameters = lowering_parameters or LoweringParameters()
        for name, value in rest.items():
            setattr(self, name, value)


class LoweringRuleContext:
    """The context a lowering rule receives (mirrors `mlir.LoweringRuleContext`).

    `avals_in` / `avals_out` are the equation's abstract operands and results; the jaxlite
    lowering context it wraps is `jaxlite_context`.
    """

    def __init__(self, module_context: Any = None, name_stack: Any = None,
                 traceback: Any = None, primitive: Any = None,
                 avals_in: Sequence[Any] = (), avals_out: Any = (), tokens_in: Any = None,
                 tokens_out: Any = None, const_lowering: Any = None,
                 axis_size_env: Any = None, dim_var_values: Sequence[Any] = (),
                 jaxpr_eqn_ctx: Any = None, platforms: Sequence[str] | None = None,
                 *, jaxlite_context: LoweringContext | None = None) -> None:
        self.module_context = module_context or ModuleContext()
        self.name_stack = name_stack or NameStack()
        self.traceback = traceback
        self.primitive = primitive
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)
        self.tokens_in = tokens_in or TokenSet()
        self.tokens_out = tokens_out
        self.const_lowering = const_lowering or {}
        self.axis_size_env = axis_size_env
        self.dim_var_values = tuple(dim_var_values)
        self.jaxpr_eqn_ctx = jaxpr_eqn_ctx
        self.platforms = platforms
        self.jaxlite_context = jaxlite_context

    def set_tokens_out(self, tokens_out: TokenSet) -> None:
        self.tokens_out = tokens_out

    def replace(self, **changes: Any) -> "LoweringRuleContext":
        fields = dict(self.__dict__)
        fields.update(changes)
        context = fields.pop("jaxlite_context")
        return LoweringRuleContext(**fields, jaxlite_context=context)


def _jaxlite_context(ctx: Any) -> LoweringContext:
    if isinstance(ctx, LoweringContext):
        return ctx
    inner = getattr(ctx, "jaxlite_context", None)
    if inner is None:
        raise TypeError("a lowering rule was called with a context jaxlite did not make; "
                        "jaxlite calls lowering rules itself, while lowering a jaxpr.")
    return inner


def _with_avals(ctx: Any, avals_in: Sequence[Any], avals_out: Sequence[Any]) -> LoweringContext:
    # A rule may call lower_fun on a context whose avals it replaced (ctx.replace(...)).
    base = _jaxlite_context(ctx)
    if list(avals_in) == base.avals_in and list(avals_out) == base.avals_out:
        return base
    return base.with_builder(base.builder, avals_in, avals_out)


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> Callable[..., Any]:
    """A lowering rule that traces `fun` (mirrors `mlir.lower_fun`).

    The rule traces `fun(*operands, **params)` at the equation's input types, with
    jaxlite's own lax and numpy, and lowers the resulting jaxpr into the module as a call.
    `multiple_results` says whether `fun` returns a sequence of outputs or one.
    """
    def rule(ctx: Any, *args: HloInstruction, **params: Any) -> list[HloInstruction]:
        avals_in = list(ctx.avals_in)

        def traced(*xs: Any) -> list[Any]:
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]
        with eval_context():
            closed = trace_to_jaxpr(traced, [ShapedArray(a.shape, a.dtype, a.weak_type)
                                             for a in avals_in])
        inner = _with_avals(ctx, avals_in, closed.out_avals)
        name = hlo.computation_name(getattr(fun, "__name__", "lower_fun"))
        return hlo.call_jaxpr(inner, closed, args, name)
    rule.is_jaxlite_rule = True  # type: ignore[attr-defined]
    return rule


def _foreign_rule(prim: Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    """A rule written for JAX's MLIR lowering, called with jaxlite's operands."""
    def lower(ctx: LoweringContext, *args: HloInstruction, **params: Any) -> list:
        rule_ctx = LoweringRuleContext(primitive=prim, avals_in=ctx.avals_in,
                                       avals_out=ctx.avals_out, jaxlite_context=ctx)
        try:
            out = rule(rule_ctx, *args, **params)
        except Exception as error:
            error.add_note(
                f"The lowering rule of the library primitive '{prim.name}' failed under "
                "jaxlite, which lowers to its own HLO instead of StableHLO (MLIR). Register "
                "its lowering as mlir.register_lowering(prim, mlir.lower_fun(impl, "
                "multiple_results=...)) with an impl written in jax.numpy / jax.lax.")
            raise
        return flatten_ir_values(out if isinstance(out, (list, tuple)) else [out])
    lower.jax_rule = rule  # type: ignore[attr-defined]
    return lower


def register_lowering(prim: Primitive, rule: Callable[..., Any], platform: str | None = None,
                      inline: bool = True, cacheable: bool = True) -> None:
    """Give `prim` a lowering rule (mirrors `mlir.register_lowering`).

    A rule for `platform=None` or `"cpu"` is what jaxlite's backends use; rules for other
    platforms (cuda, rocm, tpu) are recorded and never used.
    """
    rules = getattr(prim, "platform_lowerings", None)
    if rules is None:
        rules = prim.platform_lowerings = {}
    rules[platform] = rule
    chosen = rules.get("cpu", rules.get(None))
    if platform in _HOST_PLATFORMS and chosen is not None:
        lowering = chosen if getattr(chosen, "is_jaxlite_rule", False) else \
            _foreign_rule(prim, chosen)
        prim.lower = lowering


def core_call_lowering(ctx: Any, *args: HloInstruction, name: str, backend: Any = None,
                       call_jaxpr: ClosedJaxpr | Jaxpr) -> list[HloInstruction]:
    """Lower a call of `call_jaxpr` on `args` (mirrors `mlir.core_call_lowering`)."""
    closed = call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])
    inner = _with_avals(ctx, list(ctx.avals_in), closed.out_avals)
    return hlo.call_jaxpr(inner, closed, args, hlo.computation_name(name))


def flatten_ir_values(xs: Iterable[Any]) -> list[Any]:
    """Values and sequences of values as one flat list (mirrors `mlir.flatten_ir_values`)."""
    flat: list[Any] = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            flat.extend(x)
        else:
            flat.append(x)
    return flat


def flatten_ir_types(xs: Iterable[Any]) -> list[Any]:
    """Types and sequences of types as one flat list (mirrors `mlir.flatten_ir_types`)."""
    return flatten_ir_values(xs)


def unflatten_ir_values_like_types(xs: Iterable[Any], ys: Sequence[Any]) -> list[Any]:
    """Regroup the flat `xs` like the (possibly nested) types `ys` (JAX's)."""
    values = iter(xs)
    return [tuple(next(values) for _ in y) if isinstance(y, (list, tuple)) else next(values)
            for y in ys]


class ConstantHandler:
    """The type of a constant handler (mirrors `mlir.ConstantHandler`)."""

    def __call__(self, val: Any, aval: Any) -> Any:
        raise NotImplementedError


# Registries libraries write into; jaxlite turns constants into HLO with numpy and builds
# no MLIR types, so it never reads them.
_constant_handlers: dict[type, Any] = {}
ir_type_handlers: dict[type, Any] = {}
ir_tree_registry: dict[type, Any] = {}


def register_constant_handler(type_: type, handler_fun: Any) -> None:
    """Record how to turn constants of `type_` into MLIR (mirrors JAX's). jaxlite converts
    constants with numpy and does not call the handler."""
    _constant_handlers[type_] = handler_fun


def _stablehlo_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Make `fn` (JAX's signature, no body) raise: it would build MLIR."""
    @functools.wraps(fn)
    def unsupported(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"jax.interpreters.mlir.{fn.__name__} builds StableHLO (MLIR); jaxlite lowers to "
            "its own HLO IR and has no MLIR. Lower library primitives with "
            "mlir.register_lowering(prim, mlir.lower_fun(impl, multiple_results=...)).")
    return unsupported


@_stablehlo_only
def aval_to_ir_type(ctx, aval):
    """Not available in jaxlite (mirrors `mlir.aval_to_ir_type`): it builds MLIR."""


@_stablehlo_only
def aval_to_ir_types(ctx, aval):
    """Not available in jaxlite (mirrors `mlir.aval_to_ir_types`): it builds MLIR."""


@_stablehlo_only
def dense_int_elements(xs):
    """Not available in jaxlite (mirrors `mlir.dense_int_elements`): it builds MLIR."""


@_stablehlo_only
def dtype_to_ir_type(dtype):
    """Not available in jaxlite (mirrors `mlir.dtype_to_ir_type`): it builds MLIR."""


@_stablehlo_only
def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect, returns_token=True, partitioned=False,
                         sharding=None):
    """Not available in jaxlite (mirrors `mlir.emit_python_callback`): it builds MLIR."""


@_stablehlo_only
def i32_attr(i):
    """Not available in jaxlite (mirrors `mlir.i32_attr`): it builds MLIR."""


@_stablehlo_only
def i64_attr(i):
    """Not available in jaxlite (mirrors `mlir.i64_attr`): it builds MLIR."""


@_stablehlo_only
def ir_attribute(val):
    """Not available in jaxlite (mirrors `mlir.ir_attribute`): it builds MLIR."""


@_stablehlo_only
def ir_constant(val, *, const_lowering=None, aval=None):
    """Not available in jaxlite (mirrors `mlir.ir_constant`): it builds MLIR."""


@_stablehlo_only
def ir_constants(val, *, const_lowering=None, aval=None):
    """Not available in jaxlite (mirrors `mlir.ir_constants`): it builds MLIR."""


@_stablehlo_only
def jaxpr_subcomp(ctx, jaxpr, name_stack, tokens, consts_for_constvars, *args,
                  dim_var_values, const_lowering, outer_traceback):
    """Not available in jaxlite (mirrors `mlir.jaxpr_subcomp`): it builds MLIR."""


@_stablehlo_only
def lower_jaxpr_to_fun(ctx, name, jaxpr, effects, *, num_const_args, main_function=False,
                       replicated_args=None, in_avals, arg_shardings=None,
                       result_shardings=None, use_sharding_annotations=True,
                       input_output_aliases=None, xla_donated_args=None, arg_names=None,
                       result_names=None, arg_memory_kinds=None, result_memory_kinds=None,
                       arg_layouts=None, result_layouts=None,
                       propagated_out_mem_kinds=None):
    """Not available in jaxlite (mirrors `mlir.lower_jaxpr_to_fun`): it builds MLIR."""


@_stablehlo_only
def lower_jaxpr_to_module(module_name, jaxpr, *, num_const_args, in_avals, ordered_effects,
                          platforms, backend, axis_context, donated_args,
                          replicated_args=None, arg_shardings=None, result_shardings=None,
                          in_layouts=None, out_layouts=None, arg_names=None,
                          result_names=None, num_partitions=1, all_default_mem_kind=True,
                          input_output_aliases=None, propagated_out_mem_kinds=None,
                          lowering_parameters):
    """Not available in jaxlite (mirrors `mlir.lower_jaxpr_to_module`): it builds MLIR."""


@_stablehlo_only
def make_ir_context():
    """Not available in jaxlite (mirrors `mlir.make_ir_context`): it builds MLIR."""


@_stablehlo_only
def merge_mlir_modules(dst_module, sym_name, src_module, dst_symtab=None):
    """Not available in jaxlite (mirrors `mlir.merge_mlir_modules`): it builds MLIR."""


@_stablehlo_only
def module_to_bytecode(module):
    """Not available in jaxlite (mirrors `mlir.module_to_bytecode`): it builds MLIR."""


@_stablehlo_only
def module_to_string(module, enable_debug_info=None):
    """Not available in jaxlite (mirrors `mlir.module_to_string`): it builds MLIR."""


@_stablehlo_only
def shape_tensor(ctx, sizes):
    """Not available in jaxlite (mirrors `mlir.shape_tensor`): it builds MLIR."""



@_stablehlo_only
def dense_int_array(*args, **kwargs):
    """Not available in jaxlite (mirrors `mlir.dense_int_array`): it builds MLIR."""


@_stablehlo_only
def token_type(*args, **kwargs):
    """Not available in jaxlite (mirrors `mlir.token_type`): it builds MLIR."""


class _MLIROnly:
    """A class of JAX's MLIR lowering that jaxlite has no use for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"jax.interpreters.mlir.{type(self).__name__} belongs to JAX's StableHLO (MLIR) "
            "lowering; jaxlite lowers to its own HLO IR.")


class LoweringResult(_MLIROnly):
    """Not available in jaxlite (mirrors `mlir.LoweringResult`): an MLIR module."""


class ShapePolyLoweringState(_MLIROnly):
    """Not available in jaxlite (mirrors `mlir.ShapePolyLoweringState`): no symbolic shapes."""


class ShardingContext(_MLIROnly):
    """Not available in jaxlite (mirrors `mlir.ShardingContext`): one device, no sharding."""


class SPMDAxisContext(_MLIROnly):
    """Not available in jaxlite (mirrors `mlir.SPMDAxisContext`): one device, no SPMD."""


AxisContext = Union[SPMDAxisContext, ShardingContext]


class Mesh(_MLIROnly):
    """Not available here (mirrors `jax.sharding.Mesh` as `mlir` re-exports it)."""


__all__ += ["lowerable_effects"]
