"""Inline `call` instructions (mirrors XLA's CallInliner).

Contract: every `call` in every computation is replaced by a copy of the called computation's
instructions, its parameters bound to the call's operands, and the copy's root takes the
call's place; a call with side effects (a host callback inside) stays, since the copy would
hold only what the root needs. Names of the copies are fresh. Calls nested in the called computation are
inlined too (callees are rewritten first). Computations that are no longer called stay in
the module until dead-code elimination drops them. Returns the same module when there is no
call. Nested `jit`, `checkpoint` and custom-derivative calls lower to `call`, so this pass is
what lets fusion see through them.
"""
from __future__ import annotations

from jaxlite.xla.analysis import has_side_effects
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module


def _inline(inst: HloInstruction, context: RewriteContext) -> HloInstruction | None:
    # A call with side effects (a host callback) stays a call: the copy would keep only
    # what the callee's root needs (a callback without results would be lost), in the
    # order of the root's operands (callbacks could change order).
    if inst.opcode is not Opcode.CALL or has_side_effects(inst):
        return None
    (callee,) = inst.called
    copy_of: dict[int, HloInstruction] = {}
    for param in callee.parameters:
        copy_of[id(param)] = inst.operands[param.attr("number")]
    for body_inst in callee.instructions:
        if body_inst.opcode is Opcode.PARAMETER:
            continue
        assert context.names is not None
        copy_of[id(body_inst)] = body_inst.replace(
            name=context.names(body_inst.opcode.text),
            operands=tuple(copy_of[id(o)] for o in body_inst.operands))
    return copy_of[id(callee.root)]


def inline_calls(module: HloModule) -> HloModule:
    """`module` with every `call` replaced by the body of the computation it calls."""
    return rewrite_module(module, _inline)
