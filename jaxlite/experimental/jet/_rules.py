"""Taylor rules of the lax primitives for `jet`.

A rule takes the primals and, per operand, its K Taylor coefficients u_1..u_K (no
factorials) and returns the output primal and coefficients. With u_0 the primal:

- linear primitives apply themselves to each coefficient;
- a product is the Cauchy product: v_k = Σ_j u_j·w_(k-j);
- where v' = c·u' (exp: c = v; sin: c = cos; erf: c = 2/√π·exp(-u²)), differentiating the
  series gives v_k = (1/k)·Σ_(j=1..k) j·u_j·c_(k-j);
- the others are compositions of these (sqrt as a power, tanh through the logistic, ...).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive, registry
from jaxlite.core.util import safe_zip
from jaxlite.experimental.jet._trace import jet2, jet_flat, jet_rules, zero_series
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.tree_util import tree_flatten, tree_unflatten


def _prim(name: str) -> Primitive:
    return registry[name]


def defzero(prim: Primitive) -> None:
    """The primitive's outputs are constant in its inputs (mirrors `jet.defzero`)."""
    jet_rules[prim] = functools.partial(zero_prop, prim)


def zero_prop(prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any],
              **params: Any) -> tuple[Any, Any]:
    return prim.bind(*primals_in, **params), zero_series


def deflinear(prim: Primitive) -> None:
    """The primitive is linear in its operands jointly (mirrors `jet.deflinear`)."""
    jet_rules[prim] = functools.partial(linear_prop, prim)


def linear_prop(prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any],
                **params: Any) -> tuple[Any, Any]:
    primal_out = prim.bind(*primals_in, **params)
    series_out = [prim.bind(*terms, **params) for terms in zip(*series_in)]
    if prim.multiple_results:
        series_out = safe_zip(*series_out)
    return primal_out, series_out


def _chain(c: Sequence[Any], u: Sequence[Any], k: int) -> Any:
    """The k-th coefficient of v when v' = c·u' (both series known below k)."""
    return sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k


def def_deriv(prim: Primitive, deriv: Callable[[Any], Any]) -> None:
    """The rule of a unary primitive from its derivative (mirrors `jet.def_deriv`)."""
    jet_rules[prim] = functools.partial(deriv_prop, prim, deriv)


def deriv_prop(prim: Primitive, deriv: Callable[[Any], Any], primals_in: Sequence[Any],
               series_in: Sequence[Any]) -> tuple[Any, list]:
    x, = primals_in
    series, = series_in
    c0, cs = jet2(deriv, primals_in, series_in)
    c, u = [c0] + cs, [x] + list(series)
    v = [prim.bind(x)]
    for k in range(1, len(u)):
        v.append(_chain(c, u, k))
    return v[0], v[1:]


def def_comp(prim: Primitive, comp: Callable[..., Any], **kwargs: Any) -> None:
    """The rule of a primitive as the jet of an equal composition of others (mirrors
    `jet.def_comp`)."""
    jet_rules[prim] = functools.partial(jet2, comp, **kwargs)


def _exp_rule(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> tuple:
    x, = primals_in
    u = [x] + list(series_in[0])
    v = [lax.exp(x)]
    for k in range(1, len(u)):
        v.append(_chain(v, u, k))
    return v[0], v[1:]


def _pow_rule(primals_in: Sequence[Any], series_in: Sequence[Any]) -> tuple:
    # x**y = exp(y·log x): the exponent's series, then the exponential's recurrence.
    base, exponent = primals_in
    e0, es = jet2(lambda x, y: lax.mul(y, lax.log(x)), primals_in, series_in)
    u = [e0] + es
    v = [base ** exponent]
    for k in range(1, len(u)):
        v.append(_chain(v, u, k))
    return v[0], v[1:]


def _power_by_squaring(x: Any, n: int) -> Any:
    if n < 0:
        return _power_by_squaring(1 / x, -n)
    if n == 1:
        return x
    half = _power_by_squaring(x * x, n // 2)
    return half if n % 2 == 0 else x * half


def _integer_pow_rule(primals_in: Sequence[Any], series_in: Sequence[Any], *,
                      y: int) -> tuple:
    if y == 0:
        return jet2(jnp.ones_like, primals_in, series_in)
    return jet2(lambda x: _power_by_squaring(x, y), primals_in, series_in)


def _logistic_rule(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> tuple:
    # σ' = e·u' with e = σ(1 - σ), whose coefficients follow from σ's.
    x, = primals_in
    u = [x] + list(series_in[0])
    v = [lax.logistic(x)]
    e = [v[0] * (1 - v[0])]
    for k in range(1, len(u)):
        v.append(_chain(e, u, k))
        e.append((1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1)))
    return v[0], v[1:]


def _tanh_rule(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> tuple:
    # tanh x = 2σ(2x) - 1
    x, = primals_in
    primal, series = _logistic_rule((2 * x,), ([2 * t for t in series_in[0]],))
    return 2 * primal - 1, [2 * t for t in series]


def _log_rule(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> tuple:
    # u = exp(v): u_k = (1/k)Σ j·v_j·u_(k-j), solved for v_k.
    x, = primals_in
    u = [x] + list(series_in[0])
    v = [lax.log(x)]
    for k in range(1, len(u)):
        known = sum(j * v[j] * u[k - j] for j in range(1, k))
        v.append((u[k] - known / k) / u[0])
    return v[0], v[1:]


def _div_rule(primals_in: Sequence[Any], series_in: Sequence[Any]) -> tuple:
    # u = v·w solved for v, coefficient by coefficient.
    x, y = primals_in
    u, w = [x] + list(series_in[0]), [y] + list(series_in[1])
    v: list[Any] = []
    for k in range(len(u)):
        v.append((u[k] - sum(v[j] * w[k - j] for j in range(k))) / w[0])
    return v[0], v[1:]


def _atan2_rule(primals_in: Sequence[Any], series_in: Sequence[Any]) -> tuple:
    # atan2(x, y) = atan(x / y) away from the branch cut: atan' = 1 / (1 + r²).
    x, y = primals_in
    primal_out = lax.atan2(x, y)
    r0, rs = jet2(lax.div, primals_in, series_in)
    one = lax.full_like(r0, 1)
    c0, cs = jet2(lambda r: lax.div(one, 1 + lax.square(r)), (r0,), (rs,))
    c, u = [c0] + cs, [r0] + rs
    v = [primal_out]
    for k in range(1, len(u)):
        v.append(_chain(c, u, k))
    return v[0], v[1:]


def _sinusoid_rule(sign: int, funs: tuple, which: int, primals_in: Sequence[Any],
                   series_in: Sequence[Any], **_: Any) -> tuple:
    # (s, c) = (sin, cos) or (sinh, cosh): s' = c·u', c' = sign·s·u'.
    x, = primals_in
    u = [x] + list(series_in[0])
    s, c = [funs[0](x)], [funs[1](x)]
    for k in range(1, len(u)):
        s.append(_chain(c, u, k))
        c.append(_chain(s, u, k) * sign)
    out = (s, c)[which]
    return out[0], out[1:]


def _erf_inv_rule(primals_in: Sequence[Any], series_in: Sequence[Any]) -> tuple:
    # y = erfinv(x): y' = C·exp(y²)·x' with C = √π/2. The series of c = C·exp(y²) needs
    # y's, so the two are computed alternately.
    x, = primals_in
    u = [x] + list(series_in[0])
    scale = np.sqrt(np.pi) / 2.
    y = [lax.erf_inv(x)]
    squares = [lax.square(y[0])]
    exps = [lax.exp(squares[0])]
    c = [lax.mul(scale, exps[0])]
    for k in range(1, len(u)):
        y.append(_chain(c, u, k))
        if k == len(u) - 1:
            break
        squares.append(sum(y[k - j] * y[j] for j in range(k + 1)))
        exps.append(_chain(exps, squares, k))
        c.append(scale * exps[k])
    return y[0], y[1:]


def _bilinear_rule(prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any],
                   **params: Any) -> tuple:
    x, y = primals_in
    u, w = [x] + list(series_in[0]), [y] + list(series_in[1])
    op = functools.partial(prim.bind, **params)
    v = [sum(op(u[j], w[k - j]) for j in range(k + 1)) for k in range(len(u))]
    return v[0], v[1:]


def _operand_linear_rule(prim: Primitive, n_linear: int, primals_in: Sequence[Any],
                         series_in: Sequence[Any], **params: Any) -> tuple:
    """Linear in the first `n_linear` operands, with the rest (indices) held fixed."""
    fixed = list(primals_in[n_linear:])
    primal_out = prim.bind(*primals_in, **params)
    series_out = [prim.bind(*terms[:n_linear], *fixed, **params) for terms in zip(*series_in)]
    return primal_out, series_out


def _scatter_rule(prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any],
                  **params: Any) -> tuple:
    # Linear in the operand and the updates jointly; the indices stay.
    operand, indices, updates = primals_in
    primal_out = prim.bind(operand, indices, updates, **params)
    series_out = [prim.bind(d_operand, indices, d_updates, **params)
                  for d_operand, _, d_updates in zip(*series_in)]
    return primal_out, series_out


def _reduce_chooser_rule(prim: Primitive, primals_in: Sequence[Any],
                         series_in: Sequence[Any], *, axes: tuple, **params: Any) -> tuple:
    # Where several elements attain the extremum, the coefficients are averaged.
    operand, = primals_in
    gs, = series_in
    primal_out = prim.bind(operand, axes=axes, **params)
    kept = [1 if i in axes else d for i, d in enumerate(np.shape(operand))]
    where = lax.convert_element_type(lax.eq(operand, lax.reshape(primal_out, kept)),
                                     gs[0].dtype)
    counts = lax.reduce_sum(where, axes)
    return primal_out, [lax.div(lax.reduce_sum(lax.mul(g, where), axes), counts) for g in gs]


def _abs_rule(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> tuple:
    x, = primals_in
    signs = lax.select(lax.lt(x, lax.full_like(x, 0, shape=())), lax.full_like(x, -1),
                       lax.full_like(x, 1.0))
    return lax.abs(x), [signs * t for t in series_in[0]]


def _select_n_rule(primals_in: Sequence[Any], series_in: Sequence[Any]) -> tuple:
    which, *cases = primals_in
    return (lax.select_n(which, *cases),
            [lax.select_n(which, *terms[1:]) for terms in zip(*series_in)])


def _extremum_rule(greater: bool, primals_in: Sequence[Any],
                   series_in: Sequence[Any]) -> tuple:
    # max/min: the chosen operand's coefficients; the average where the operands tie.
    x, y = jnp.broadcast_arrays(*primals_in)
    chosen = x > y if greater else x < y
    tied = x == y

    def pick(x_k: Any, y_k: Any) -> Any:
        return lax.select(tied, (x_k + y_k) / 2, lax.select(chosen, x_k, y_k))
    return (lax.select(chosen, x, y),
            [pick(*jnp.broadcast_arrays(*terms)) for terms in zip(*series_in)])


def _cumulative_rule(combine: Callable[[Any, Any], Any], primals_in: Sequence[Any],
                     series_in: Sequence[Any], *, axis: int, reverse: bool) -> tuple:
    # Through the parallel prefix scan, which is made of differentiable primitives.
    scan = functools.partial(lax.associative_scan, combine, axis=axis, reverse=reverse)
    return jet2(scan, primals_in, series_in)


def _jit_rule(primals_in: Sequence[Any], series_in: Sequence[Any], *, jaxpr: ClosedJaxpr,
              name: str) -> tuple:
    # A call stays a call: its body becomes the jet of the body.
    flat, in_tree = tree_flatten((list(primals_in), [list(s) for s in series_in]))
    out_trees = []

    def body(*values: Any) -> list[Any]:
        primals, series = tree_unflatten(in_tree, values)
        outs = jet_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
                        primals, series)
        leaves, tree = tree_flatten(outs)
        out_trees.append(tree)
        return leaves
    closed, consts = hoist_tracer_consts(trace_to_jaxpr(body, [get_aval(v) for v in flat]))
    outs = registry["jit"].bind(*consts, *flat, jaxpr=closed, name=name)
    return tree_unflatten(out_trees[0], outs)


def _inline_rule(primals_in: Sequence[Any], series_in: Sequence[Any], *, jaxpr: ClosedJaxpr,
                 **_: Any) -> tuple:
    # Custom derivative rules are about first-order differentiation; like JAX's jet,
    # Taylor mode differentiates the function itself.
    return jet_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
                    primals_in, series_in)


_ZERO = ("le", "lt", "gt", "ge", "eq", "ne", "not", "and", "or", "xor", "floor", "ceil",
         "round", "sign", "stop_gradient", "is_finite", "shift_left", "shift_right_arithmetic",
         "shift_right_logical", "bitcast_convert_type", "argmax", "argmin", "nextafter",
         "population_count", "clz")
_LINEAR = ("neg", "real", "complex", "conj", "imag", "add", "add_any", "sub",
           "convert_element_type", "broadcast_in_dim", "concatenate", "split", "stack",
           "unstack", "pad", "reshape", "squeeze", "rev", "transpose", "slice", "reduce_sum",
           "reduce_window_sum", "fft", "copy", "device_put", "cumsum", "name", "tile")
for _name in _ZERO:
    defzero(_prim(_name))
for _name in _LINEAR:
    deflinear(_prim(_name))

jet_rules[_prim("dynamic_slice")] = functools.partial(_operand_linear_rule,
                                                      _prim("dynamic_slice"), 1)
jet_rules[_prim("dynamic_update_slice")] = functools.partial(
    _operand_linear_rule, _prim("dynamic_update_slice"), 2)
jet_rules[_prim("gather")] = functools.partial(_operand_linear_rule, _prim("gather"), 1)
for _name in ("scatter-add", "scatter"):
    jet_rules[_prim(_name)] = functools.partial(_scatter_rule, _prim(_name))
jet_rules[_prim("cumprod")] = functools.partial(_cumulative_rule, lax.mul)
jet_rules[_prim("cummax")] = functools.partial(_cumulative_rule, lax.max)
jet_rules[_prim("cummin")] = functools.partial(_cumulative_rule, lax.min)

def_deriv(_prim("erf"), lambda x: lax.mul(lax.full_like(x, 2. / np.sqrt(np.pi)),
                                          lax.exp(lax.neg(lax.square(x)))))
def_comp(_prim("expm1"), lambda x: lax.exp(x) - 1)
def_comp(_prim("log1p"), lambda x: lax.log(1 + x))
def_comp(_prim("sqrt"), lambda x: x ** 0.5)
def_comp(_prim("square"), lambda x: x * x)
def_comp(_prim("rsqrt"), lambda x: x ** -0.5)
def_comp(_prim("asinh"), lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1)))
def_comp(_prim("acosh"), lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1)))
def_comp(_prim("atanh"), lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x)))
def_comp(_prim("erfc"), lambda x: 1 - lax.erf(x))
def_comp(_prim("rem"), lambda x, y: x - y * lax.floor(x / y))
def_comp(_prim("clamp"), lambda a, x, b: lax.min(lax.max(a, x), b))
# Beyond JAX's rules (its jet raises KeyError for these): exact compositions.
def_comp(_prim("tan"), lambda x: lax.div(lax.sin(x), lax.cos(x)))
def_comp(_prim("exp2"), lambda x: lax.exp(lax.mul(x, lax.full_like(x, np.log(2.0)))))

jet_rules[_prim("erf_inv")] = _erf_inv_rule
jet_rules[_prim("exp")] = _exp_rule
jet_rules[_prim("pow")] = _pow_rule
jet_rules[_prim("integer_pow")] = _integer_pow_rule
jet_rules[_prim("logistic")] = _logistic_rule
jet_rules[_prim("tanh")] = _tanh_rule
jet_rules[_prim("log")] = _log_rule
jet_rules[_prim("atan2")] = _atan2_rule
jet_rules[_prim("div")] = _div_rule
jet_rules[_prim("sin")] = functools.partial(_sinusoid_rule, -1, (lax.sin, lax.cos), 0)
jet_rules[_prim("cos")] = functools.partial(_sinusoid_rule, -1, (lax.sin, lax.cos), 1)
jet_rules[_prim("sinh")] = functools.partial(_sinusoid_rule, 1, (lax.sinh, lax.cosh), 0)
jet_rules[_prim("cosh")] = functools.partial(_sinusoid_rule, 1, (lax.sinh, lax.cosh), 1)
for _name in ("dot_general", "mul", "conv_general_dilated"):
    jet_rules[_prim(_name)] = functools.partial(_bilinear_rule, _prim(_name))
jet_rules[_prim("reduce_max")] = functools.partial(_reduce_chooser_rule, _prim("reduce_max"))
jet_rules[_prim("reduce_min")] = functools.partial(_reduce_chooser_rule, _prim("reduce_min"))
jet_rules[_prim("abs")] = _abs_rule
jet_rules[_prim("select_n")] = _select_n_rule
jet_rules[_prim("max")] = functools.partial(_extremum_rule, True)
jet_rules[_prim("min")] = functools.partial(_extremum_rule, False)
jet_rules[_prim("jit")] = _jit_rule
for _name in ("custom_jvp_call", "custom_vjp_call", "checkpoint"):
    jet_rules[_prim(_name)] = _inline_rule
