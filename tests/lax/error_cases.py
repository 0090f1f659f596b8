"""Bad (and borderline) calls to `lax` functions, for comparing exception types and messages
with JAX 0.10.2.

`/tmp/jaxvenv/bin/python tests/lax/error_cases.py > tests/lax/data/errors_jax.txt` recorded
what JAX does with each call (one line per case: name, then `ok` and the result's shape, or
the exception's type and the first line of its message); tests/lax/test_errors.py makes the
same calls with jaxlite and compares. The module takes `lax` and `jnp` as arguments so that
the same table runs under both.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter",
          "complex", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or",
          "bitwise_xor", "shift_left", "shift_right_logical", "shift_right_arithmetic"]
UNARY = ["neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "log", "sin", "tanh",
         "logistic", "sqrt", "abs", "bitwise_not", "population_count", "clz", "imag", "real",
         "conj", "erf", "lgamma", "digamma", "cbrt", "square", "exp2", "tan", "acosh",
         "erf_inv"]


def _elementwise_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    cases: dict[str, Callable[[], Any]] = {}
    i3, b3 = jnp.ones(3, jnp.int32), jnp.ones(3, bool)
    for name in BINARY:
        fn = getattr(lax, name)
        ints = name.startswith(("bitwise", "shift"))
        dtype = jnp.int32 if ints else jnp.float32
        a3, a4, a23 = (jnp.ones(s, dtype) for s in ((3,), (4,), (2, 3)))
        other = a3.astype(jnp.float16) if ints else i3
        cases[f"{name}-shape"] = lambda fn=fn, a=a3, b=a4: fn(a, b)
        cases[f"{name}-rank"] = lambda fn=fn, a=a3, b=a23: fn(a, b)
        cases[f"{name}-rank3"] = lambda fn=fn, b=a23, d=dtype: fn(b, jnp.ones((1, 1, 3), d))
        cases[f"{name}-size1"] = lambda fn=fn, b=a23, d=dtype: fn(b, jnp.ones((1, 3), d))
        cases[f"{name}-0d"] = lambda fn=fn, b=a23, d=dtype: fn(jnp.ones((), d), b)
        cases[f"{name}-dtype"] = lambda fn=fn, a=a3, o=other: fn(a, o)
    for name in UNARY:
        fn = getattr(lax, name)
        cases[f"{name}-int"] = lambda fn=fn: fn(i3)
        cases[f"{name}-bool"] = lambda fn=fn: fn(b3)
        cases[f"{name}-complex"] = lambda fn=fn: fn(jnp.ones(3, jnp.complex64))
    return cases


def _structural_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    f3, f4 = jnp.ones(3, jnp.float32), jnp.ones(4, jnp.float32)
    f23, f32 = jnp.ones((2, 3), jnp.float32), jnp.ones((3, 2), jnp.float32)
    i3, b3 = jnp.ones(3, jnp.int32), jnp.ones(3, bool)
    x = np.ones((3, 4), np.float32)
    return {
        "select-shape": lambda: lax.select(b3, f3, f4),
        "select-pred": lambda: lax.select(jnp.ones(4, bool), f3, f3),
        "select-pred-dtype": lambda: lax.select(i3, f3, f3),
        "select-dtype": lambda: lax.select(b3, f3, i3),
        "select-int-pred": lambda: lax.select_n(f3, f3, f3),
        "select-3-bool": lambda: lax.select_n(b3, f3, f3, f3),
        "select_n-int-pred-range": lambda: lax.select_n(jnp.array([0, 1, 2], jnp.int32), f3, f3),
        "clamp-shape": lambda: lax.clamp(f4, f3, f3),
        "clamp-dtype": lambda: lax.clamp(i3, f3, f3),
        "clamp-max": lambda: lax.clamp(0., f3, f4),
        "clamp-operand-0d": lambda: lax.clamp(f3, jnp.float32(1), f3),
        "concatenate-shape": lambda: lax.concatenate([f23, f32], 0),
        "concatenate-rank": lambda: lax.concatenate([f3, f23], 0),
        "concatenate-dim": lambda: lax.concatenate([f3, f3], 1),
        "concatenate-dtype": lambda: lax.concatenate([f3, i3], 0),
        "concatenate-empty": lambda: lax.concatenate([], 0),
        "transpose-perm": lambda: lax.transpose(f23, (0, 0)),
        "transpose-short": lambda: lax.transpose(f23, (0,)),
        "transpose-range": lambda: lax.transpose(f23, (0, 2)),
        "reshape-neg": lambda: lax.reshape(f23, (-1, 6)),
        "reshape-dims": lambda: lax.reshape(f23, (6,), (0,)),
        "reshape-dims-bad": lambda: lax.reshape(x, (12,), (0, 0)),
        "broadcast_in_dim-shape": lambda: lax.broadcast_in_dim(f3, (4,), (0,)),
        "broadcast_in_dim-dims": lambda: lax.broadcast_in_dim(f3, (2, 3), (0, 1)),
        "broadcast_in_dim-range": lambda: lax.broadcast_in_dim(f3, (2, 3), (2,)),
        "broadcast_in_dim-rank": lambda: lax.broadcast_in_dim(f23, (3,), (0,)),
        "broadcast_in_dim-len": lambda: lax.broadcast_in_dim(x, (3, 4), (0,)),
        "broadcast_in_dim-dup": lambda: lax.broadcast_in_dim(x, (3, 4, 5), (0, 0)),
        "broadcast-neg": lambda: lax.broadcast(f3, (-1,)),
        "squeeze-notone": lambda: lax.squeeze(f23, (0,)),
        "squeeze-range": lambda: lax.squeeze(f23, (2,)),
        "expand_dims-range": lambda: lax.expand_dims(f3, (3,)),
        "expand_dims-dup": lambda: lax.expand_dims(x, (0, 0)),
        "rev-range": lambda: lax.rev(f3, (1,)),
        "rev-dup": lambda: lax.rev(f23, (0, 0)),
        "slice-bounds": lambda: lax.slice(f3, (0,), (4,)),
        "slice-order": lambda: lax.slice(f3, (2,), (1,)),
        "slice_in_dim-axis": lambda: lax.slice_in_dim(f3, 0, 1, axis=2),
        "index_in_dim-range": lambda: lax.index_in_dim(f3, 5),
        "pad-config": lambda: lax.pad(f3, 0., [(0, 0, 0), (0, 0, 0)]),
        "pad-interior": lambda: lax.pad(f3, 0., [(0, 0, -1)]),
        "pad-neg": lambda: lax.pad(f3, 0., [(-4, 0, 0)]),
        "pad-value-shape": lambda: lax.pad(f3, f3, [(0, 0, 0)]),
        "iota-dtype": lambda: lax.iota(bool, 3),
        "iota-neg": lambda: lax.iota(jnp.int32, -1),
        "broadcasted_iota-dim": lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 2),
        "full-shape": lambda: lax.full((2,), f3),
        "full-neg": lambda: lax.full((-1,), 0.),
        "full_like-shape": lambda: lax.full_like(x, np.ones(2)),
        "convert-bad": lambda: lax.convert_element_type(f3, "foo"),
        "convert-complex-int": lambda: lax.convert_element_type(jnp.ones(2, jnp.complex64),
                                                                jnp.int32),
        "bitcast-size": lambda: lax.bitcast_convert_type(f3, jnp.float16),
        "bitcast-wide": lambda: lax.bitcast_convert_type(jnp.ones(3, jnp.float16), jnp.float32),
        "integer_pow-int-neg": lambda: lax.integer_pow(i3, -1),
        "collapse-range": lambda: lax.collapse(f23, 1, 3),
        "split-sizes": lambda: lax.split(x, (1, 1), 0),
        "split-axis": lambda: lax.split(x, (3,), 5),
        "tile-len": lambda: lax.tile(x, (2,)),
        "stack-shapes": lambda: lax.stack([x, x[:1]]),
    }


def _reduction_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    f3, f23 = jnp.ones(3, jnp.float32), jnp.ones((2, 3), jnp.float32)
    b3 = jnp.ones(3, bool)
    return {
        "reduce_sum-axis": lambda: lax.reduce_sum(f3, (1,)),
        "reduce_max-axis": lambda: lax.reduce_max(f3, (1,)),
        "reduce_sum-dup": lambda: lax.reduce_sum(f23, (0, 0)),
        "reduce_and-float": lambda: lax.reduce_and(f3, (0,)),
        "reduce_xor-complex": lambda: lax.reduce_xor(jnp.ones(3, jnp.complex64), (0,)),
        "argmax-axis": lambda: lax.argmax(f3, 1, jnp.int32),
        "argmax-dtype": lambda: lax.argmax(f3, 0, jnp.float32),
        "argmin-empty": lambda: lax.argmin(jnp.ones(0), 0, jnp.int32),
        "cumsum-axis": lambda: lax.cumsum(f3, 1),
        "cumsum-bool": lambda: lax.cumsum(b3, 0),
        "cummax-axis": lambda: lax.cummax(f3, -2),
        "sort-dim": lambda: lax.sort(f3, 1),
        "sort-shapes": lambda: lax.sort((f3, jnp.ones(4))),
        "sort-keys": lambda: lax.sort((f3, f3), num_keys=3),
        "sort_key_val-shape": lambda: lax.sort_key_val(f3, jnp.ones(4)),
        "top_k-k": lambda: lax.top_k(f3, 4),
        "reduce_window-dims": lambda: lax.reduce_window(f3, 0., lax.add, (2, 2), (1,), "VALID"),
        "reduce_window-zero": lambda: lax.reduce_window(f3, 0., lax.add, (0,), (1,), "VALID"),
        "reduce_window-strides": lambda: lax.reduce_window(f3, 0., lax.add, (2,), (1, 1),
                                                           "VALID"),
        "reduce_window-stride0": lambda: lax.reduce_window(f3, 0., lax.add, (2,), (0,),
                                                           "VALID"),
        "reduce_window-dilation": lambda: lax.reduce_window(f3, 0., lax.add, (2,), (1,),
                                                            "VALID", base_dilation=(0,)),
        "reduce_window-max-dims": lambda: lax.reduce_window(f3, -np.inf, lax.max, (2, 2),
                                                            (1,), "VALID"),
    }


def _dot_and_conv_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    f23, f32 = jnp.ones((2, 3), jnp.float32), jnp.ones((3, 2), jnp.float32)
    lhs, rhs = jnp.ones((1, 1, 4)), jnp.ones((1, 1, 2))
    return {
        "dot-shape": lambda: lax.dot(f23, f23),
        "dot-dtype": lambda: lax.dot(f23, f32.astype(jnp.int32)),
        "dot-bool-float": lambda: lax.dot(f23.astype(bool), f32),
        "dot-precision": lambda: lax.dot(f23, f32, precision="foo"),
        "dot_general-contract": lambda: lax.dot_general(f23, f32, (((0,), (0,)), ((), ()))),
        "dot_general-batch": lambda: lax.dot_general(f23, f23, (((1,), (1,)), ((0,), (1,)))),
        "dot_general-range": lambda: lax.dot_general(f23, f32, (((2,), (0,)), ((), ()))),
        "conv-rank": lambda: lax.conv(lhs, jnp.ones((1, 1, 2, 2)), (1,), "VALID"),
        "conv-channels": lambda: lax.conv(jnp.ones((1, 2, 4)), jnp.ones((1, 3, 2)), (1,),
                                          "VALID"),
        "conv-padding": lambda: lax.conv(lhs, rhs, (1,), "FOO"),
        "conv-strides": lambda: lax.conv(lhs, rhs, (1, 1), "VALID"),
        "conv-dtype": lambda: lax.conv(lhs, rhs.astype(jnp.int32), (1,), "VALID"),
        "conv-groups": lambda: lax.conv_general_dilated(lhs, rhs, (1,), "VALID",
                                                        feature_group_count=2),
        "padtype_to_pads-bad": lambda: lax.padtype_to_pads((4,), (2,), (1,), "FULL"),
    }


def _indexing_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    f3, f4 = jnp.ones(3, jnp.float32), jnp.ones(4, jnp.float32)
    f23, i3 = jnp.ones((2, 3), jnp.float32), jnp.ones(3, jnp.int32)
    x = np.ones((3, 4), np.float32)
    i1, i2 = np.zeros((2, 1), np.int32), np.zeros((2, 2), np.int32)
    G, S = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
    u24 = np.ones((2, 4), np.float32)
    return {
        "dynamic_slice-rank": lambda: lax.dynamic_slice(f23, (0,), (1,)),
        "dynamic_slice-size": lambda: lax.dynamic_slice(f3, (0,), (4,)),
        "dynamic_slice-idx-dtype": lambda: lax.dynamic_slice(f3, (0.5,), (1,)),
        "dynamic_slice-idx-array": lambda: lax.dynamic_slice(x, (np.zeros(2, np.int32), 0),
                                                             (1, 1)),
        "dynamic_update_slice-rank": lambda: lax.dynamic_update_slice(f23, f3, (0,)),
        "dynamic_update_slice-big": lambda: lax.dynamic_update_slice(f3, f4, (0,)),
        "dynamic_update_slice-dtype": lambda: lax.dynamic_update_slice(f3, i3, (0,)),
        "dynamic_update_slice-bool-idx": lambda: lax.dynamic_update_slice(f3, f3[:1], (True,)),
        "gather-index-dtype": lambda: lax.gather(x, i1.astype(np.float32), G((1,), (0,), (0,)),
                                                 (1, 4)),
        "gather-offset-range": lambda: lax.gather(x, i1, G((5,), (0,), (0,)), (1, 4)),
        "gather-offset-unsorted": lambda: lax.gather(x, i2, G((2, 1), (), (0, 1)), (1, 4)),
        "gather-collapsed-range": lambda: lax.gather(x, i1, G((1,), (5,), (0,)), (1, 4)),
        "gather-collapsed-size": lambda: lax.gather(x, i1, G((1,), (0,), (0,)), (2, 4)),
        "gather-collapsed-dup": lambda: lax.gather(x, i1, G((1,), (0, 0), (0,)), (1, 4)),
        "gather-map-range": lambda: lax.gather(x, i1, G((1,), (0,), (5,)), (1, 4)),
        "gather-map-len": lambda: lax.gather(x, i1, G((1,), (0,), (0, 1)), (1, 4)),
        "gather-map-dup": lambda: lax.gather(x, i2, G((1,), (0,), (0, 0)), (1, 4)),
        "gather-slice-len": lambda: lax.gather(x, i1, G((1,), (0,), (0,)), (1,)),
        "gather-slice-big": lambda: lax.gather(x, i1, G((1,), (0,), (0,)), (1, 5)),
        "gather-slice-neg": lambda: lax.gather(x, i1, G((1,), (0,), (0,)), (1, -1)),
        "gather-offset-count": lambda: lax.gather(x, i1, G((1, 2), (0,), (0,)), (1, 4)),
        "scatter-dtype": lambda: lax.scatter_add(x, i1, u24.astype(np.int32),
                                                 S((1,), (0,), (0,))),
        "scatter-updates-rank": lambda: lax.scatter_add(x, i1, np.ones(2, np.float32),
                                                        S((1,), (0,), (0,))),
        "scatter-window-range": lambda: lax.scatter_add(x, i1, u24, S((5,), (0,), (0,))),
        "scatter-window-unsorted": lambda: lax.scatter_add(
            x, i2, np.ones((2, 3, 4), np.float32), S((2, 1), (), (0, 1))),
        "scatter-inserted-range": lambda: lax.scatter_add(x, i1, u24, S((1,), (5,), (0,))),
        "scatter-map-range": lambda: lax.scatter_add(x, i1, u24, S((1,), (0,), (5,))),
        "scatter-map-len": lambda: lax.scatter_add(x, i1, u24, S((1,), (0,), (0, 1))),
        "scatter-updates-big": lambda: lax.scatter_add(x, i1, np.ones((2, 5), np.float32),
                                                       S((1,), (0,), (0,))),
        "scatter-updates-count": lambda: lax.scatter_add(x, i1, np.ones((3, 4), np.float32),
                                                         S((1,), (0,), (0,))),
        "scatter-index-dtype": lambda: lax.scatter_add(x, i1.astype(np.float32), u24,
                                                       S((1,), (0,), (0,))),
    }


def _control_flow_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    f3, f4 = jnp.ones(3, jnp.float32), jnp.ones(4, jnp.float32)
    return {
        "cond-pred": lambda: lax.cond(jnp.ones(2, bool), lambda: 1., lambda: 2.),
        "cond-types": lambda: lax.cond(True, lambda: 1., lambda: 2),
        "while-type": lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 0.5, 0),
        "scan-length": lambda: lax.scan(lambda c, x: (c, x), 0., f3, length=4),
        "fori-types": lambda: lax.fori_loop(0, 3, lambda i, c: (c, c), 0.),
        "switch-index": lambda: lax.switch(0.5, [lambda: 1., lambda: 2.]),
        "map-size": lambda: lax.map(lambda x: x, (f3, f4)),
    }


def error_cases(lax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    """Every case by name: a call taking no arguments."""
    cases = {}
    for group in (_elementwise_cases, _structural_cases, _reduction_cases,
                  _dot_and_conv_cases, _indexing_cases, _control_flow_cases):
        cases.update(group(lax, jnp))
    return cases


def outcome(call: Callable[[], Any]) -> tuple[str, str]:
    """('ok', shape) or (exception type name, first line of the message)."""
    try:
        result = call()
    except Exception as e:  # noqa: BLE001 - recording whatever is raised
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", str(tuple(np.shape(result)))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "jaxlite":
        import jaxlite.numpy as np_module
        from jaxlite import lax as lax_module
    else:
        import jax.numpy as np_module  # the oracle (never imported by jaxlite)
        from jax import lax as lax_module
    for case_name, case in error_cases(lax_module, np_module).items():
        kind, text = outcome(case)
        print(f"{case_name}\t{kind}\t{text}")
