"""Convolutions and their two gradients on the cpu backend's GEMM kernels (pixel form,
input dilation, weight form) and the canonicalization pass that puts them there, against
a float64 numpy reference written here (patches per window tap, and their adjoints).

Tolerance: a float32 dot product of k terms is within about k * 2**-24 of the exact sum
relative to the sum of the terms' magnitudes, so each result is checked against the same
reference computed on |x|, |w|, |ct| times that bound.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jaxlite as jax
from jaxlite import lax
from jaxlite.backends.cpu.codegen import conv_kernel, conv_panels
from jaxlite.backends.cpu.codegen import module as codegen_module
from jaxlite.backends.cpu.gemm import DEFAULT_BLOCKING
from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.conv_canonicalization import canonicalize_convolutions
from jaxlite.xla.text import parse_module

CPU = jax.devices("cpu")[0]
EPS32 = 2.0 ** -24


# ---------------------------------------------------------------------- the reference

def _embed(x: np.ndarray, pads: list, dilation: tuple) -> np.ndarray:
    """x (N, C, spatial...) dilated and padded (negative pads crop)."""
    spatial = [0 if n == 0 else 1 + d * (n - 1) for n, d in zip(x.shape[2:], dilation)]
    full = np.zeros(x.shape[:2] + tuple(s + max(lo, 0) + max(hi, 0)
                                        for s, (lo, hi) in zip(spatial, pads)))
    full[(Ellipsis,) + tuple(slice(max(lo, 0), max(lo, 0) + s, d) for s, (lo, _), d in
                             zip(spatial, pads, dilation))] = x
    return full[(Ellipsis,) + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                                    for (lo, hi), n in zip(pads, full.shape[2:]))]


def _unembed(y: np.ndarray, shape: tuple, pads: list, dilation: tuple) -> np.ndarray:
    """The adjoint of `_embed`: the elements of y that came from x."""
    spatial = [0 if n == 0 else 1 + d * (n - 1) for n, d in zip(shape[2:], dilation)]
    full = np.zeros(shape[:2] + tuple(s + max(lo, 0) + max(hi, 0)
                                      for s, (lo, hi) in zip(spatial, pads)))
    full[(Ellipsis,) + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                             for (lo, hi), n in zip(pads, full.shape[2:]))] = y
    return full[(Ellipsis,) + tuple(slice(max(lo, 0), max(lo, 0) + s, d) for s, (lo, _), d in
                                    zip(spatial, pads, dilation))]


def reference(x, w, ct, strides, pads, lhs_dil, rhs_dil, groups, batch_groups):
    """(conv, d(sum conv*ct)/dx, d/dw) in float64, for canonical layouts: x (N, C, S...),
    w (O, I, K...), ct (N / batch_groups, O, S'...)."""
    x, w, ct = (np.asarray(a, np.float64) for a in (x, w, ct))
    xp = _embed(x, pads, lhs_dil)
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sizes = ct.shape[2:]
    g, b = groups, batch_groups
    out = np.zeros(ct.shape)
    dxp = np.zeros(xp.shape)
    dw = np.zeros(w.shape)
    p = math.prod(out_sizes)
    for tap in np.ndindex(*w.shape[2:]):
        window = (Ellipsis,) + tuple(slice(t * d, t * d + s * (m - 1) + 1, s) for t, d, s, m
                                     in zip(tap, rhs_dil, strides, out_sizes))
        xs = xp[window]
        wt = w[(Ellipsis,) + tap]
        if b > 1:
            xg = xs.reshape(b, n // b, c, p)
            wg = wt.reshape(b, o // b, c)
            cg = ct.reshape(n // b, b, o // b, p)
            out += np.einsum("bncp,boc->nbop", xg, wg).reshape(out.shape)
            dxp[window] += np.einsum("nbop,boc->bncp", cg, wg).reshape(xs.shape)
            dw[(Ellipsis,) + tap] += np.einsum("bncp,nbop->boc", xg, cg).reshape(wt.shape)
        else:
            xg = xs.reshape(n, g, c // g, p)
            wg = wt.reshape(g, o // g, c // g)
            cg = ct.reshape(n, g, o // g, p)
            out += np.einsum("ngcp,goc->ngop", xg, wg).reshape(out.shape)
            dxp[window] += np.einsum("ngop,goc->ngcp", cg, wg).reshape(xs.shape)
            dw[(Ellipsis,) + tap] += np.einsum("ngcp,ngop->goc", xg, cg).reshape(wt.shape)
    return out, _unembed(dxp, x.shape, pads, lhs_dil), dw


# ---------------------------------------------------------------------- the check

SPECS = {2: [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"), ("NHWC", "OIHW", "NCHW")],
         1: [("NWC", "WIO", "NWC"), ("NCW", "OIW", "NCW")]}


def _to_canonical(spec: str, kernel: bool) -> tuple[int, ...]:
    first = "OI" if kernel else "NC"
    return tuple(spec.index(ch) for ch in first + "".join(
        ch for ch in spec if ch not in first))


def check_conv(rng, n, c, o, spatial, kernel, strides, pads, lhs_dil, rhs_dil, groups=1,
               batch_groups=1, specs=("NHWC", "HWIO", "NHWC")):
    """The jitted conv and both gradients on the cpu backend against `reference`."""
    lhs_spec, rhs_spec, out_spec = specs
    xc = rng.standard_normal((n, c, *spatial)).astype(np.float32)
    wc = rng.standard_normal((o, c // groups, *kernel)).astype(np.float32)
    x = np.transpose(xc, np.argsort(_to_canonical(lhs_spec, False)))
    w = np.transpose(wc, np.argsort(_to_canonical(rhs_spec, True)))

    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, pads, lhs_dil, rhs_dil, specs,
                                        feature_group_count=groups,
                                        batch_group_count=batch_groups)
    out = np.asarray(jax.jit(conv, device=CPU)(x, w))
    out_perm = _to_canonical(out_spec, False)
    ctc = rng.standard_normal(np.transpose(out, out_perm).shape).astype(np.float32)
    ct = np.transpose(ctc, np.argsort(out_perm))
    dx, dw = jax.jit(jax.grad(lambda x, w: (conv(x, w) * ct).sum(), (0, 1)),
                     device=CPU)(x, w)
    args = (strides, pads, lhs_dil, rhs_dil, groups, batch_groups)
    want = reference(xc, wc, ctc, *args)
    bound = reference(np.abs(xc), np.abs(wc), np.abs(ctc), *args)
    terms = max(c * math.prod(kernel), n * math.prod(ctc.shape[2:]), o * math.prod(kernel))
    got = (np.transpose(out, out_perm), np.transpose(np.asarray(dx),
                                                     _to_canonical(lhs_spec, False)),
           np.transpose(np.asarray(dw), _to_canonical(rhs_spec, True)))
    for name, g, r, m in zip(("conv", "grad x", "grad w"), got, want, bound):
        assert g.shape == r.shape, name
        np.testing.assert_array_less(np.abs(g - r), 2 * terms * EPS32 * m + 1e-30,
                                     err_msg=name)


@st.composite
def conv_cases(draw):
    rank = draw(st.sampled_from([1, 2]))
    n = draw(st.integers(1, 4))
    groups, batch_groups = draw(st.sampled_from([(1, 1), (1, 1), (1, 1), (2, 1), (1, 2)]))
    c = groups * draw(st.integers(1, 12))
    o = groups * batch_groups * draw(st.integers(1, 12))
    n = n * batch_groups
    spatial = [draw(st.integers(3, 14)) for _ in range(rank)]
    kernel = [draw(st.integers(1, 4)) for _ in range(rank)]
    strides = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    lhs_dil = tuple(draw(st.sampled_from([1, 1, 2])) for _ in range(rank))
    rhs_dil = tuple(draw(st.sampled_from([1, 1, 2])) for _ in range(rank))
    pads = [(draw(st.integers(-1, 3)), draw(st.integers(-1, 3))) for _ in range(rank)]
    for i in range(rank):   # at least one output element
        extent = 1 + rhs_dil[i] * (kernel[i] - 1)
        base = 1 + lhs_dil[i] * (spatial[i] - 1) + pads[i][0] + pads[i][1]
        if base < extent:
            pads[i] = (pads[i][0], pads[i][1] + extent - base)
    specs = draw(st.sampled_from(SPECS[rank]))
    return dict(n=n, c=c, o=o, spatial=spatial, kernel=kernel, strides=strides,
                pads=pads, lhs_dil=lhs_dil, rhs_dil=rhs_dil, groups=groups,
                batch_groups=batch_groups, specs=specs)


@given(conv_cases(), st.integers(0, 2 ** 16))
def test_convolution_and_gradients_match_float64(case, seed):
    check_conv(np.random.default_rng(seed), **case)


@pytest.mark.parametrize("strides,pads,lhs_dil,rhs_dil", [
    ((1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1)),     # the CNN's layer: SAME, stride 1
    ((2, 2), [(0, 1), (0, 1)], (1, 1), (1, 1)),     # stride 2: input gradient dilated
    ((1, 2), [(2, 0), (1, 2)], (1, 1), (2, 1)),     # window dilation, uneven pads
    ((1, 1), [(1, 1), (0, 0)], (2, 1), (1, 1)),     # input dilation in the forward pass
])
def test_gemm_sized_convolutions(strides, pads, lhs_dil, rhs_dil):
    """Shapes large enough for the GEMM kernels in all three convolutions, with blocks of
    pixels that do not divide the output."""
    check_conv(np.random.default_rng(3), 4, 24, 20, [11, 13], [3, 3], strides, pads,
               lhs_dil, rhs_dil)



@pytest.mark.parametrize("strides,pads,lhs_dil,rhs_dil", [
    ((1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1)),     # SAME: padding on every side
    ((2, 2), [(0, 1), (0, 1)], (1, 1), (1, 1)),
    ((1, 2), [(2, 0), (1, 2)], (1, 1), (2, 1)),
    ((1, 1), [(1, 1), (0, 0)], (2, 1), (1, 1)),
])
def test_panel_form_convolutions(strides, pads, lhs_dil, rhs_dil):
    """32 input features and a multiple of 8 output pixels: the forward convolution writes
    its patches as the GEMM's packed panels (conv_panels), and equals the row form's result
    bit for bit (same products summed in the same order). The panel form is chosen only
    where the micro-kernel is a panel high (512-bit vectors); it is forced here elsewhere,
    where it must still be exact."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 12, 16, 32)).astype(np.float32)
    w = rng.standard_normal((3, 3, 32, 20)).astype(np.float32)

    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, pads, lhs_dil, rhs_dil,
                                        ("NHWC", "HWIO", "NHWC"))
    plans = []

    def spy(inst):
        plan = original(inst)
        if isinstance(plan, conv_kernel.ConvPlan):
            plans.append(plan.panels)
            return dataclasses.replace(plan, panels=not row_form)
        return plan
    original = conv_kernel.conv_plan
    results = []
    for row_form in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(codegen_module, "conv_plan", spy)
            # a different parameter order: a fresh compilation, not a cache hit
            f = jax.jit(conv if not row_form else lambda w, x: conv(x, w), device=CPU)
            results.append(np.asarray(f(x, w) if not row_form else f(w, x)))
    chosen = DEFAULT_BLOCKING["float32"].mr == conv_panels.PANEL
    assert plans and all(p == chosen for p in plans)
    if chosen:
        np.testing.assert_array_equal(results[0], results[1])
    else:  # a panel is not whole micro-kernel tiles: edge tiles split k, another order
        taps = 3 * 3 * 32
        bound = 2 * taps * EPS32 * np.abs(x).max() * np.abs(w).max()
        np.testing.assert_array_less(np.abs(results[0] - results[1]), bound)
    check_conv(rng, 4, 32, 20, [12, 16], [3, 3], strides, pads, lhs_dil, rhs_dil)

def test_weight_gradient_in_chunks_of_positions():
    """400 input features: the weight form splits its 9 output positions into chunks of
    2 (work items), the last one shorter."""
    check_conv(np.random.default_rng(5), 2, 400, 8, [6, 7], [3, 3], (1, 1),
               [(1, 1), (1, 1)], (1, 1), (1, 1))


@pytest.mark.parametrize("groups,batch_groups", [(2, 1), (3, 1), (1, 2)])
def test_gemm_sized_grouped_convolutions(groups, batch_groups):
    """Groups of 8 features and more are split into one GEMM convolution each."""
    check_conv(np.random.default_rng(4), 4 * batch_groups, 8 * groups, 12 * groups,
               [9, 10], [3, 3], (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), groups,
               batch_groups)


def test_weight_gradient_runs_on_the_gemm():
    """All three convolutions of an NHWC layer compile to GEMMs, the weight gradient in
    the weight form with several accumulating blocks."""
    x = np.ones((16, 14, 14, 8), np.float32)
    w = np.ones((3, 3, 8, 16), np.float32)

    def loss(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC")).sum()
    compiled = jax.jit(jax.grad(loss, (0, 1)), device=CPU).lower(x, w).compile()
    text = compiled.as_text()
    assert "dim_labels=f01b_i01o->01bf" in text and "dim_labels=b01f_01io->b01f" in text
    assert compiled.runtime_executable().text("llvm").count('call void @"gemm.') >= 4
    dx, dw = jax.jit(jax.grad(loss, (0, 1)), device=CPU)(x, w)
    # Every output sums 3x3x8 ones; interior inputs reach 9 outputs of 16 features.
    assert float(dx[0, 5, 5, 0]) == 9 * 16 and float(dx[0, 0, 0, 0]) == 4 * 16
    assert float(dw[1, 1, 0, 0]) == 16 * 14 * 14 and float(dw[0, 0, 0, 0]) == 16 * 13 * 13


# ---------------------------------------------------------------------- the pass

def _module(text: str) -> HloModule:
    return parse_module("HloModule m\n\nENTRY %main {\n" + text + "\n}\n")


def test_pass_puts_convolutions_in_their_forms():
    module = _module("""
  %x = f32[2,5,6,3] parameter(0)
  %w = f32[4,3,3,3] parameter(1)
  %ct = f32[2,5,6,4] parameter(2)
  %y = f32[2,4,5,6] convolution(%x, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->bf01
  %g = f32[3,3,3,4] convolution(%x, %ct), window={size=5x6 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  %k = f32[3,3,3,4] convolution(%x, %ct), window={size=5x6 pad=1_1x1_1}, dim_labels=f01b_i01o->b01f
  ROOT %t = (f32[2,4,5,6], f32[3,3,3,4], f32[3,3,3,4]) tuple(%y, %g, %k)""")
    out = canonicalize_convolutions(module)
    convs = [i for i in out.entry.instructions if i.opcode is Opcode.CONVOLUTION]
    assert [c.attr("dim_labels") for c in convs] == [
        "b01f_01io->b01f", "f01b_i01o->01bf", "f01b_i01o->01bf"]
    # Already canonical: the same module object back.
    assert canonicalize_convolutions(out) is out
    root = out.entry.root
    assert root.operands[1].opcode is Opcode.CONVOLUTION
    assert root.operands[0].opcode is Opcode.TRANSPOSE
    assert root.operands[0].attr("dimensions") == (0, 3, 1, 2)
    assert root.operands[2].opcode is Opcode.TRANSPOSE


def test_pass_splits_large_groups():
    module = _module("""
  %x = f32[2,5,6,8] parameter(0)
  %w = f32[3,3,4,10] parameter(1)
  ROOT %y = f32[2,5,6,10] convolution(%x, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2""")
    out = canonicalize_convolutions(module)
    root = out.entry.root
    assert root.opcode is Opcode.CONCATENATE and root.attr("dimensions") == (3,)
    assert [c.opcode for c in root.operands] == [Opcode.CONVOLUTION] * 2
    assert [c.operands[0].attr("starts") for c in root.operands] == [(0, 0, 0, 0),
                                                                    (0, 0, 0, 4)]
    assert all(c.attr("feature_group_count") == 1 for c in root.operands)


def test_pass_leaves_grouped_and_integer_convolutions():
    module = _module("""
  %x = f32[2,5,6,4] parameter(0)
  %w = f32[2,3,3,3] parameter(1)
  %i = s32[2,5,6,4] parameter(2)
  %v = s32[3,3,4,2] parameter(3)
  %y = f32[2,3,5,6] convolution(%x, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_io01->bf01, feature_group_count=2
  %z = s32[2,2,5,6] convolution(%i, %v), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->bf01
  ROOT %t = (f32[2,3,5,6], s32[2,2,5,6]) tuple(%y, %z)""")
    assert canonicalize_convolutions(module) is module
