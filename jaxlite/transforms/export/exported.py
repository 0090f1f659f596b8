"""`export(jit(f))(*args)` and the `Exported` it returns (mirrors `jax.export`).

An `Exported` is a program detached from its Python function: the input and output
structures and types, and the module, kept as jaxlite's HLO text (`mlir_module()` prints it
as StableHLO, which real XLA compiles: see `jaxlite.xla.stablehlo`). Large constants are
part of the module, so it stands alone. `call` runs it through `jit` as one
`call_exported` equation (so it composes with jit and grad; vmap raises, as in JAX).

The VJP: before serialization an Exported can export its function's VJP on demand (its
`_get_vjp` holds the function); `serialize(vjp_order=k)` stores k levels of them, and a
deserialized Exported has exactly those. `call` under grad goes through a `custom_vjp` whose
backward pass calls the VJP's Exported.

Shape polymorphism: exported for `ShapeDtypeStruct`s with symbolic dimensions
(`symbolic_shape("b, ...")`), the module keeps symbolic sizes, and each call specializes it
to the arguments' sizes (`shape_refinement`), once per size.

Differences from JAX 0.10.2: one device (`nr_devices` 1, no shardings), no shape
assertions inside the module (`call` checks the sizes before running it), and the
serialized form is jaxlite's own (JAX's is a flatbuffer around MLIR bytecode).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import shape_poly
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.shape_poly_parse import evaluate
from jaxlite.interpreters.lowering import lower_jaxpr
from jaxlite.lax.call_exported import call_exported_p
from jaxlite.lax.callbacks import CUSTOM_CALL_TARGET as _HOST_CALLBACK
from jaxlite.lax.custom_derivatives import custom_vjp
from jaxlite.runtime import dispatch
from jaxlite.runtime.device import default_backend
from jaxlite.transforms import api_util as _api_util
from jaxlite.transforms.autodiff import vjp as _vjp
from jaxlite.transforms.export import serialization, shape_refinement
from jaxlite.transforms.jit import PjitFunction, jit
from jaxlite.transforms.tracing import ShapeDtypeStruct
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from jaxlite.xla import stablehlo
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import parse_module, print_module

__all__ = ["Exported", "export", "deserialize", "CALLING_CONVENTION_VERSION"]

# JAX 0.10.2 writes version 10 and reads 9 and 10; jaxlite writes the same number.
CALLING_CONVENTION_VERSION = 10
_PLATFORMS = ("cpu", "cuda", "rocm")
# Every constant of an exported program stays inside its module.
_ALL_CONSTANTS_INLINE = 1 << 62


@dataclasses.dataclass(frozen=True, eq=False)
class Exported:
    """A function lowered for fixed argument types, detached from Python (mirrors
    `jax.export.Exported`)."""

    fun_name: str
    in_tree: PyTreeDef
    in_avals: tuple[ShapedArray, ...]
    out_tree: PyTreeDef
    out_avals: tuple[ShapedArray, ...]
    platforms: tuple[str, ...]
    hlo_text: str = dataclasses.field(repr=False)
    calling_convention_version: int = CALLING_CONVENTION_VERSION
    disabled_safety_checks: tuple[Any, ...] = ()
    _get_vjp: Callable[["Exported"], "Exported"] | None = dataclasses.field(
        default=None, repr=False)

    nr_devices = 1
    ordered_effects: tuple = ()
    unordered_effects: tuple = ()
    uses_global_constants = False

    @property
    def in_shardings_hlo(self) -> tuple[None, ...]:
        return (None,) * len(self.in_avals)

    @property
    def out_shardings_hlo(self) -> tuple[None, ...]:
        return (None,) * len(self.out_avals)

    @property
    def module_kept_var_idx(self) -> tuple[int, ...]:
        return tuple(range(len(self.in_avals)))

    @functools.cached_property
    def _module(self) -> HloModule:
        if self.uses_shape_polymorphism:
            return shape_refinement.symbolic_module(
                self.hlo_text, shape_refinement.scope_of(self.in_avals))
        return parse_module(self.hlo_text)

    @property
    def uses_shape_polymorphism(self) -> bool:
        """Whether some input has a symbolic dimension (`jax.export.symbolic_shape`)."""
        return shape_refinement.scope_of(self.in_avals) is not None

    def hlo_module(self) -> HloModule:
        """The program as jaxlite's HLO module (parsed once; with symbolic sizes if the
        Exported is shape-polymorphic)."""
        return self._module

    def dimension_values(self, shapes: Sequence[tuple[int, ...]]) -> dict[str, int]:
        """The dimension variables' values for arguments of `shapes` (JAX's ValueErrors for
        shapes that do not fit the exported ones)."""
        if not self.uses_shape_polymorphism:
            return {}
        return shape_refinement.dimension_values(self.in_avals, shapes)

    def out_avals_for(self, shapes: Sequence[tuple[int, ...]]) -> tuple[ShapedArray, ...]:
        """The output avals of a call with arguments of `shapes` (concrete sizes)."""
        env = self.dimension_values(shapes)
        return tuple(a.update(shape=tuple(evaluate(d, env) for d in a.shape))
                     for a in self.out_avals)

    def hlo_module_for(self, shapes: Sequence[tuple[int, ...]]) -> HloModule:
        """The program specialized to arguments of `shapes` (the module itself when the
        Exported has no symbolic dimensions; one specialization per size, kept)."""
        env = self.dimension_values(shapes)
        if not env:
            return self._module
        key = tuple(sorted(env.items()))
        if key not in self._specializations:
            self._specializations[key] = shape_refinement.specialize(self.hlo_text, env)
        return self._specializations[key]

    @functools.cached_property
    def _specializations(self) -> dict[tuple, HloModule]:
        return {}

    def mlir_module(self) -> str:
        """The program as StableHLO text (mirrors `Exported.mlir_module`)."""
        return stablehlo.print_module(self._module)

    @property
    def mlir_module_serialized(self) -> bytes:
        """The StableHLO text as bytes (JAX's holds MLIR bytecode)."""
        return self.mlir_module().encode()

    def has_vjp(self) -> bool:
        """Whether `vjp()` (and so `call` under grad) is available."""
        return self._get_vjp is not None

    def vjp(self) -> "Exported":
        """The Exported of the VJP: `(*primals, *output cotangents) -> input cotangents`
        (flat, mirrors `Exported.vjp`)."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes of this Exported and `vjp_order` levels of VJPs (mirrors
        `Exported.serialize`); `deserialize` reads them back."""
        return serialization.dumps(self._json(vjp_order))

    def _json(self, vjp_order: int) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in (
            "fun_name", "in_tree", "in_avals", "out_tree", "out_avals", "hlo_text",
            "calling_convention_version")}
        fields["platforms"] = list(self.platforms)
        fields["vjp"] = self.vjp()._json(vjp_order - 1) if vjp_order > 0 else None
        return serialization.to_json(fields)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the exported program on arguments of the exported types (mirrors
        `Exported.call`); usable under jit and grad."""
        leaves, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{self.fun_name}' was exported, but they differ: called "
                f"with {tree}, exported with {self.in_tree}.")
        self._check_platform()
        got = [get_aval(leaf) for leaf in leaves]
        for i, (aval, want) in enumerate(zip(got, self.in_avals)):
            _check_argument(i, aval, want, self.uses_shape_polymorphism)
        self.dimension_values([a.shape for a in got])
        return tree_unflatten(self.out_tree, self._flat_call(*leaves))

    def _check_platform(self) -> None:
        platform = {"gpu": "cuda", "interpreter": "cpu"}.get(default_backend(),
                                                           default_backend())
        if platform not in self.platforms:
            raise ValueError(f"Function '{self.fun_name}' was exported for platforms "
                             f"'{self.platforms}' but it is used on '{(platform,)}'.")

    @functools.cached_property
    def _flat_call(self) -> Callable[..., list]:
        bound = jit(lambda *xs: call_exported_p.bind(*xs, exported=self))
        if not self.has_vjp():
            return bound
        differentiable = custom_vjp(bound)

        def forward(*xs: Any) -> tuple[list, tuple]:
            # Through `differentiable` again: a higher derivative differentiates this
            # forward pass, which then uses the next level of VJP.
            return differentiable(*xs), xs

        def backward(primals: tuple, cotangents: list) -> tuple:
            out_avals = self.out_avals_for([np.shape(x) for x in primals])
            cts = [np.zeros(a.shape, a.to_tangent_aval().dtype) if c is None else c
                   for c, a in zip(cotangents, out_avals)]
            return tuple(self.vjp()._flat_call(*primals, *cts))
        differentiable.defvjp(forward, backward)
        return differentiable


def _check_argument(i: int, got: ShapedArray, want: ShapedArray, polymorphic: bool) -> None:
    if got.dtype != want.dtype:
        raise ValueError(f"Dtype mismatch for args[{i}]: expected {want.dtype} and called "
                         f"with {got.dtype}")
    # (`dimension_values` checks the shapes of a polymorphic Exported)
    if not polymorphic and got.shape != want.shape:
        raise ValueError(f"Shape mismatch for args[{i}]: expected {want.shape} and called "
                         f"with {got.shape}")


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[Any] = ()) -> Callable[..., Exported]:
    """A function that traces and lowers `fun_jit` (a `jit` function) for the types of its
    arguments (arrays or `ShapeDtypeStruct`s) and returns the `Exported` (mirrors
    `jax.export.export`)."""
    if not isinstance(fun_jit, PjitFunction):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit}")
    chosen = tuple(platforms) if platforms is not None else (default_export_platform(),)
    unknown = [p for p in chosen if p not in _PLATFORMS]
    if unknown:
        raise ValueError(f"export: unknown platforms {unknown}; jaxlite exports for "
                         f"{list(_PLATFORMS)}.")

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        return _export_traced(fun_jit, args, kwargs, chosen, tuple(disabled_checks))
    return do_export


def _export_traced(fun_jit: PjitFunction, args: tuple, kwargs: dict,
                   platforms: tuple[str, ...], disabled: tuple) -> Exported:
    name = _api_util.function_name(fun_jit._fun)
    _check_one_scope(name, tree_flatten((args, kwargs))[0])
    traced, _ = fun_jit._trace(args, kwargs, abstract=True)
    if traced.consts:
        raise ValueError(f"export: {name} closes over values traced by an outer "
                         "transformation; an exported function may depend only on its "
                         "arguments.")
    lowered = lower_jaxpr(traced.jaxpr, dispatch.module_name(name), f"jit({name})",
                          max_constant_elements=_ALL_CONSTANTS_INLINE)
    text = print_module(lowered.module)
    if f'custom_call_target="{_HOST_CALLBACK}"' in text:
        # The callback is a Python function of this process: nothing a file can carry.
        raise NotImplementedError(
            f"serialization of host_callbacks is not yet implemented: {name} calls "
            "pure_callback, io_callback or jax.debug.print/callback; export the function "
            "without them (compute on the host before or after calling the Exported).")
    return Exported(name, traced.in_tree, tuple(traced.jaxpr.in_avals), traced.out_tree,
                    tuple(traced.jaxpr.out_avals), platforms, text,
                    disabled_safety_checks=disabled,
                    _get_vjp=functools.partial(_export_vjp, fun_jit))


def _check_one_scope(name: str, leaves: Sequence[Any]) -> None:
    """JAX's error for symbolic dimensions of several `symbolic_shape` calls."""
    first: tuple[int, Any] | None = None
    for i, leaf in enumerate(leaves):
        for d in getattr(leaf, "shape", ()):
            if not shape_poly.is_symbolic_dim(d):
                continue
            if first is None:
                first = (i, d)
            elif d.scope is not first[1].scope:
                raise ValueError(
                    f"Invalid mixing of symbolic scopes when exporting {name}. Expected "
                    f"current (from args[{first[0]}]) scope of '{first[1]}' and found for "
                    f"'{d}' (args[{i}]) another scope: make all the symbolic shapes with "
                    "one `symbolic_shape` call, or pass the same `scope=` to each.")


def _export_vjp(fun_jit: PjitFunction, primal: Exported) -> Exported:
    """The Exported of `primal`'s VJP, traced from its function."""
    n_in = len(primal.in_avals)

    def vjp_fun(*xs: Any) -> tuple:
        def flat_fun(*leaves: Any) -> list:
            args, kwargs = tree_unflatten(primal.in_tree, leaves)
            return tree_flatten(fun_jit(*args, **kwargs))[0]
        _, pullback = _vjp(flat_fun, *xs[:n_in])
        return pullback(list(xs[n_in:]))
    vjp_fun.__name__ = f"{primal.fun_name}_vjp"
    # The cotangent of an integer output is float0, as in JAX's VJP.
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in primal.in_avals] + [
        ShapeDtypeStruct(a.shape, a.to_tangent_aval().dtype) for a in primal.out_avals]
    return export(jit(vjp_fun), platforms=primal.platforms)(*specs)


def default_export_platform() -> str:
    """The platform `export` lowers for by default (mirrors
    `jax.export.default_export_platform`)."""
    return {"gpu": "cuda", "interpreter": "cpu"}.get(default_backend(), default_backend())


def deserialize(blob: bytes | bytearray) -> Exported:
    """The Exported of `Exported.serialize`'s bytes (mirrors `jax.export.deserialize`);
    ValueError for bytes of another kind or of a newer format."""
    return _from_json(serialization.loads(blob))


def _from_json(data: dict[str, Any]) -> Exported:
    fields = serialization.from_json(data)
    vjp = fields.pop("vjp")
    vjp_exported = _from_json(vjp) if vjp is not None else None
    return Exported(fields["fun_name"], fields["in_tree"], fields["in_avals"],
                    fields["out_tree"], fields["out_avals"], fields["platforms"],
                    fields["hlo_text"], fields["calling_convention_version"],
                    _get_vjp=None if vjp_exported is None else (lambda _: vjp_exported))
