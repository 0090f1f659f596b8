"""Regenerate tests/random/data/expected.json: the values real JAX 0.10.2 gives for the
cases below.

Run with a Python that has JAX (not part of the test suite, which never imports jax):

    /tmp/jaxvenv/bin/python tools/gen_random_expected.py   # x64 off, then x64 on (subprocess)

Each case names a function of `jax.random` (or `jax.nn.initializers.<name>(**factory)`, or
`rbg.<op>` for the key data of "rbg" keys), the seed of its key, and its arguments; the tests
call the jaxlite function the same way. Arrays are written as {"array": values, "dtype":
name}; the expected values in full.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent / "tests" / "random" / "data"
NAN = float("nan")
A = lambda values, dtype="float32": {"array": values, "dtype": dtype}  # noqa: E731

CASES_X32 = [
    # keys and key derivation
    ("split", 0, [], {}), ("split", 42, [3], {}), ("split", 7, [[2, 2]], {}),
    ("fold_in", 0, [7], {}), ("fold_in", 42, [2**31 + 5], {}),
    ("bits", 0, [[8]], {}), ("bits", 42, [[2, 3]], {"dtype": "uint8"}),
    ("bits", 42, [[5]], {"dtype": "uint16"}), ("bits", 3, [[3, 1, 2]], {}),
    # continuous
    ("uniform", 0, [[8]], {}), ("uniform", 42, [[2, 4]], {"minval": -3.0, "maxval": 5.0}),
    ("uniform", 1, [[6]], {"dtype": "float16"}), ("uniform", 1, [[6]], {"dtype": "bfloat16"}),
    ("uniform", 5, [[3, 2]], {"minval": A([0.0, 10.0]), "maxval": A([1.0, 20.0])}),
    ("normal", 0, [[8]], {}), ("normal", 42, [[2, 3]], {}),
    ("normal", 9, [[4]], {"dtype": "complex64"}), ("normal", 9, [[5]], {"dtype": "float16"}),
    ("truncated_normal", 0, [-1.5, 2.0, [8]], {}),
    ("truncated_normal", 4, [A([-1.0, 0.0, 1.0]), 3.0], {}),
    ("exponential", 0, [[8]], {}), ("laplace", 1, [[8]], {}), ("logistic", 2, [[8]], {}),
    ("cauchy", 3, [[8]], {}), ("gumbel", 4, [[8]], {}),
    ("gumbel", 4, [[8]], {"mode": "high"}),
    # discrete
    ("bernoulli", 0, [0.3, [12]], {}), ("bernoulli", 1, [A([0.1, 0.5, 0.9])], {}),
    ("bernoulli", 2, [0.3, [8]], {"mode": "high"}),
    ("randint", 0, [[8], -5, 17], {}), ("randint", 1, [[8], 0, 256], {"dtype": "uint8"}),
    ("randint", 2, [[8], -128, 127], {"dtype": "int8"}),
    ("randint", 3, [[6], -2**31, 2**31 - 1], {}), ("randint", 4, [[4], 10, 3], {}),
    ("randint", 5, [[3, 2], A([0, 100], "int32"), A([10, 1000], "int32")], {}),
    ("categorical", 0, [A([0.1, 2.0, -1.0, 0.5, 0.0])], {"shape": [10]}),
    ("categorical", 1, [A([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])], {}),
    ("categorical", 2, [A([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]])],
     {"axis": 0, "shape": [4, 2]}),
    ("categorical", 3, [A([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])], {"shape": [4], "replace": False}),
    ("permutation", 0, [10], {}), ("permutation", 1, [A([[0, 1, 2, 3], [4, 5, 6, 7],
                                                         [8, 9, 10, 11]], "int32")], {}),
    ("permutation", 2, [A([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], "int32")],
     {"axis": 1, "independent": True}),
    ("permutation", 3, [A(list(range(6)), "float32")], {}),
    ("choice", 0, [10, [5]], {}), ("choice", 1, [10, [5]], {"replace": False}),
    ("choice", 2, [5, [8]], {"p": A([0.1, 0.2, 0.3, 0.0, 0.4])}),
    ("choice", 3, [5, [3]], {"p": A([0.1, 0.2, 0.3, 0.0, 0.4]), "replace": False}),
    ("choice", 4, [A([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), [4]], {"axis": 1}),
    # gamma family and poisson
    ("gamma", 0, [A([0.3, 1.0, 2.5, 10.0])], {}), ("gamma", 1, [0.5, [6]], {}),
    ("gamma", 2, [3.0, [2, 3]], {}), ("loggamma", 3, [A([0.01, 0.5, 4.0])], {}),
    ("beta", 0, [2.0, 3.0, [6]], {}), ("beta", 1, [A([0.5, 5.0]), 0.7], {}),
    ("dirichlet", 0, [A([1.0, 2.0, 3.0])], {"shape": [2]}),
    ("dirichlet", 1, [A([0.1, 0.1])], {}),
    ("t", 0, [3.0, [6]], {}), ("t", 1, [A([1.0, 10.0, 30.0])], {}),
    ("poisson", 0, [3.0, [8]], {}), ("poisson", 1, [25.0, [8]], {}),
    ("poisson", 2, [A([0.0, 0.5, 9.0, 11.0, 200.0])], {}),
    ("multivariate_normal", 0, [A([1.0, -1.0, 0.0]),
                                A([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]]), [4]],
     {}),
    ("orthogonal", 0, [3], {}), ("orthogonal", 1, [2], {"m": 4}),
    # initializers: ("initializers.<factory>", seed, [shape], {factory kwargs})
    ("initializers.glorot_normal", 0, [[3, 4]], {}),
    ("initializers.glorot_uniform", 1, [[3, 4]], {}),
    ("initializers.he_normal", 2, [[2, 3, 4]], {}),
    ("initializers.he_uniform", 3, [[4, 2]], {}),
    ("initializers.lecun_normal", 4, [[3, 3]], {}),
    ("initializers.lecun_uniform", 5, [[5, 2]], {}),
    ("initializers.normal", 6, [[2, 3]], {"stddev": 0.5}),
    ("initializers.uniform", 7, [[2, 3]], {"scale": 2.0}),
    ("initializers.variance_scaling", 8, [[2, 3, 4]],
     {"scale": 0.5, "mode": "fan_geo_avg", "distribution": "normal", "in_axis": 0,
      "out_axis": [1, 2]}),
    ("initializers.orthogonal", 9, [[4, 3]], {"scale": 2.0}),
    ("initializers.orthogonal", 10, [[2, 5]], {}),
    # the distributions of issue 10
    ("pareto", 0, [2.0, [8]], {}), ("pareto", 1, [A([1.0, 3.0])], {}),
    ("rademacher", 0, [[10]], {}), ("rademacher", 1, [[2, 3]], {"dtype": "float32"}),
    ("rademacher", 2, [[6]], {"dtype": "int8"}),
    ("maxwell", 0, [[8]], {}), ("maxwell", 1, [[2, 2]], {"dtype": "float16"}),
    ("double_sided_maxwell", 0, [0.0, 1.0, [6]], {}),
    ("double_sided_maxwell", 1, [A([1.0, -1.0]), 2.0], {}),
    ("weibull_min", 0, [1.0, 2.0, [8]], {}), ("weibull_min", 1, [A([1.0, 2.0]), 0.5, [3, 2]], {}),
    ("generalized_normal", 0, [1.5, [8]], {}), ("generalized_normal", 1, [0.5, [4]], {}),
    ("ball", 0, [3], {}), ("ball", 1, [2, 1.0, [4]], {}),
    ("rayleigh", 0, [1.0, [8]], {}), ("rayleigh", 1, [A([0.5, 2.0])], {}),
    ("wald", 0, [1.0, [8]], {}), ("wald", 1, [A([0.5, 3.0])], {}),
    ("geometric", 0, [0.3, [10]], {}), ("geometric", 1, [A([0.1, 0.9])], {}),
    ("geometric", 2, [0.05, [6]], {"dtype": "int16"}),
    ("triangular", 0, [0.0, 0.3, 1.0, [8]], {}),
    ("triangular", 1, [A([-1.0, 0.0]), 0.5, A([2.0, 1.0])], {}),
    ("lognormal", 0, [0.5, [8]], {}), ("lognormal", 1, [], {"shape": [4]}),
    ("lognormal", 2, [1.0, [3]], {"dtype": "complex64"}),
    ("binomial", 0, [10, 0.3, [8]], {}), ("binomial", 1, [100.0, 0.4, [6]], {}),
    ("binomial", 2, [A([5.0, 50.0, 500.0, 7.5]), A([0.9, 0.5, 0.01, 0.7])], {}),
    ("binomial", 3, [A([-1.0, NAN, 4.0, 3.0]), A([0.5, 0.5, NAN, -0.1])], {}),
    ("binomial", 4, [A([1000.0, 20.0]), A([0.97, 0.8])], {}),
    ("multinomial", 0, [10, A([0.2, 0.3, 0.5])], {}),
    ("multinomial", 1, [A([10.0, 20.0]), A([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])], {}),
    ("multinomial", 2, [100, A([0.25, 0.25, 0.25, 0.25])], {"shape": [3, 4]}),
    ("chisquare", 0, [3.0, [6]], {}), ("chisquare", 1, [A([0.5, 10.0])], {}),
    ("f", 0, [3.0, 4.0, [6]], {}), ("f", 1, [A([1.0, 20.0]), 5.0], {}),
    # keys of the "rbg" implementation: their data (seed, split, fold_in run threefry)
    ("rbg.seed", 0, [], {}), ("rbg.seed", 2**40 + 5, [], {}),
    ("rbg.split", 1, [3], {}), ("rbg.split", 2, [[2, 2]], {}), ("rbg.fold_in", 3, [17], {}),
]

CASES_X64 = [
    ("bits", 0, [[6]], {}), ("bits", 1, [[4]], {"dtype": "uint32"}),
    ("uniform", 0, [[6]], {}), ("normal", 0, [[6]], {}),
    ("randint", 0, [[6], -2**40, 2**40], {}), ("gamma", 0, [A([0.3, 2.5], "float64")], {}),
    ("exponential", 1, [[4]], {}), ("poisson", 1, [A([2.0, 30.0], "float64")], {}),
    ("pareto", 0, [2.0, [4]], {}), ("rayleigh", 0, [1.5, [4]], {}), ("wald", 0, [1.0, [4]], {}),
    ("weibull_min", 0, [1.0, 2.0, [4]], {}), ("triangular", 0, [0.0, 0.3, 1.0, [4]], {}),
    ("lognormal", 0, [0.5, [4]], {}), ("maxwell", 0, [[4]], {}),
    ("geometric", 0, [0.3, [6]], {}), ("rademacher", 0, [[6]], {}),
    ("binomial", 0, [A([5.0, 50.0], "float64"), 0.3], {}),
    ("chisquare", 0, [3.0, [4]], {}), ("generalized_normal", 0, [1.5, [4]], {}),
]

# Large samples, recorded as digests of their bytes (and their first values): 1e5 samples
# from four keys each, and lax's erf_inv, erf, log and log1p on 1e5 points of a grid.
BULK_SEEDS = [0, 1, 42, 2**31 - 1]
BULK = [(fn, seed, args, kwargs) for seed in BULK_SEEDS for fn, args, kwargs in (
    ("normal", [[25000]], {}),
    ("truncated_normal", [-1.5, 2.0, [25000]], {}),
    ("truncated_normal", [A([-3.0, 0.25, 1.0, -0.5, -10.0]), 3.0, [5000, 5]], {}),
    ("uniform", [[25000]], {"minval": 0.1, "maxval": 0.7}),
    ("initializers.glorot_normal", [[100, 250]], {}),
    ("exponential", [[25000]], {}), ("gumbel", [[25000]], {}),
    ("gumbel", [[25000]], {"mode": "high"}), ("logistic", [[25000]], {}),
    ("laplace", [[25000]], {}), ("rayleigh", [2.0, [25000]], {}),
    ("wald", [1.5, [25000]], {}), ("triangular", [-1.0, 0.5, 2.0, [25000]], {}),
)] + [("lax.erf_inv", 0, ["linspace", -1.0, 1.0, 100001], {}),
      ("lax.erf", 0, ["linspace", -5.0, 5.0, 100001], {}),
      ("lax.log", 0, ["linspace", 0.0, 20.0, 100001], {}),
      ("lax.log1p", 0, ["linspace", -1.0, 3.0, 100001], {})]

# Gradients of sum(w * sampler(key, *args)) (w = 1, 2, 3, ...) with respect to args[argnum]:
# the reparameterized gradients JAX gives (gamma's implicit one and the transformations').
GRADS = [
    ("gamma", 0, [A([0.3, 1.0, 2.5, 10.0])], {}, 0),
    ("loggamma", 1, [A([0.3, 1.0, 2.5, 10.0])], {}, 0),
    ("beta", 2, [A([0.3, 1.0, 2.5]), 2.0], {}, 0), ("beta", 3, [0.5, A([0.3, 4.0])], {}, 1),
    ("dirichlet", 4, [A([0.5, 1.0, 2.0])], {}, 0),
    ("chisquare", 5, [3.0, [3]], {}, 0), ("f", 6, [3.0, 4.0, [3]], {}, 1),
    ("t", 7, [3.0, [3]], {}, 0), ("generalized_normal", 8, [1.5, [3]], {}, 0),
    ("truncated_normal", 9, [-1.0, 2.0, [5]], {}, 0),
    ("truncated_normal", 9, [-1.0, 2.0, [5]], {}, 1),
    ("pareto", 10, [2.0, [5]], {}, 0), ("weibull_min", 11, [1.0, 2.0, [5]], {}, 1),
    ("rayleigh", 12, [1.5, [5]], {}, 0), ("wald", 13, [1.5, [5]], {}, 0),
    ("lognormal", 14, [0.5, [5]], {}, 0), ("triangular", 15, [0.0, 0.3, 1.0, [5]], {}, 1),
    ("double_sided_maxwell", 16, [0.5, 2.0, [5]], {}, 1),
]

SEEDS_X32 = [0, 1, -1, 42, 2**31, 2**32 + 7, 2**40 + 5, 2**63 - 1, -2**40]


def _decode(value):
    import jax.numpy as jnp
    if isinstance(value, dict) and "array" in value:
        return jnp.asarray(np.asarray(value["array"], value["dtype"]))
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return value


def _encode(out):
    out = np.asarray(out)
    if out.dtype.kind == "c":
        values = [[float(v.real), float(v.imag)] for v in out.reshape(-1)]
    elif out.dtype.kind in "iub":
        values = [int(v) for v in out.reshape(-1)]
    else:
        values = [float(v) for v in out.astype(np.float64).reshape(-1)]
    return {"dtype": out.dtype.name, "shape": list(out.shape), "values": values}


def _call_jax(fn, seed, args, kwargs):
    """Real JAX's value of a case."""
    import jax
    import jax.random as jr
    key = jr.PRNGKey(seed)
    call_args = [_decode(a) for a in args]
    call_kwargs = {k: _decode(v) for k, v in kwargs.items()}
    if fn.startswith("initializers."):
        factory = getattr(jax.nn.initializers, fn.split(".")[1])
        return factory(**call_kwargs)(key, *call_args)
    if fn.startswith("rbg."):
        rbg_key = jr.key(seed, impl="rbg")
        op = fn.split(".")[1]
        return jr.key_data(rbg_key if op == "seed" else getattr(jr, op)(rbg_key, *call_args))
    if fn.startswith("lax."):
        return jax.jit(getattr(jax.lax, fn.split(".")[1]))(bulk_input(args))
    return getattr(jr, fn)(key, *call_args, **call_kwargs)


def run(cases):
    return [{"fn": fn, "seed": seed, "args": args, "kwargs": kwargs,
             "expected": _encode(_call_jax(fn, seed, args, kwargs))}
            for fn, seed, args, kwargs in cases]


def bulk_input(args):
    """The float32 grid of a `lax.*` bulk case."""
    _, lo, hi, n = args
    return np.linspace(lo, hi, n, dtype=np.float32)


def run_grads(cases):
    import jax
    import jax.numpy as jnp
    import jax.random as jr
    results = []
    for fn, seed, args, kwargs, argnum in cases:
        values = [_decode(a) for a in args]

        def objective(param):
            call = list(values)
            call[argnum] = param
            out = getattr(jr, fn)(jr.PRNGKey(seed), *call, **kwargs)
            weights = jnp.arange(1, out.size + 1, dtype=out.dtype).reshape(out.shape)
            return jnp.sum(out * weights)
        grad = jax.grad(objective)(jnp.asarray(values[argnum], jnp.float32))
        results.append({"fn": fn, "seed": seed, "args": args, "kwargs": kwargs,
                        "argnum": argnum, "expected": _encode(grad)})
    return results


def run_extend():
    """jax.extend.random.threefry_2x32 of a few keypairs and counts."""
    import jax.numpy as jnp
    from jax.extend import random as xr
    results = []
    for key, count in (([1, 2], list(range(5))), ([3, 4], [[0, 1, 2], [3, 4, 5]]),
                       ([2**32 - 1, 7], [2**31, 2**32 - 1])):
        out = xr.threefry_2x32(jnp.asarray(key, jnp.uint32), jnp.asarray(count, jnp.uint32))
        results.append({"keypair": key, "count": count, "expected": _encode(out)})
    return results


def run_bulk(cases):
    import hashlib
    results = []
    for fn, seed, args, kwargs in cases:
        out = np.ascontiguousarray(np.asarray(_call_jax(fn, seed, args, kwargs)))
        results.append({"fn": fn, "seed": seed, "args": args, "kwargs": kwargs,
                        "dtype": out.dtype.name, "shape": list(out.shape),
                        "sha256": hashlib.sha256(out.tobytes()).hexdigest(),
                        "first": [float(v) for v in out.reshape(-1)[:8]]})
    return results


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--x64":
        print(json.dumps(run(CASES_X64)))
        return
    import jax.random as jr
    data = {"jax_version": __import__("jax").__version__,
            "seeds_x32": [[s, [int(v) for v in np.asarray(jr.PRNGKey(s))]]
                          for s in SEEDS_X32],
            "x32": run(CASES_X32), "grads": run_grads(GRADS),
            "threefry_2x32": run_extend()}
    env = dict(os.environ, JAX_ENABLE_X64="1")
    x64 = subprocess.run([sys.executable, __file__, "--x64"], env=env, check=True,
                         capture_output=True, text=True).stdout
    data["x64"] = json.loads(x64)
    env_seeds = subprocess.run(
        [sys.executable, "-c", "import json, numpy as np, jax.random as jr; print(json.dumps("
         f"[[s, [int(v) for v in np.asarray(jr.PRNGKey(s))]] for s in {SEEDS_X32}]))"],
        env=env, check=True, capture_output=True, text=True).stdout
    data["seeds_x64"] = json.loads(env_seeds)
    (HERE / "expected.json").write_text(_dump(data))
    bulk = {"jax_version": data["jax_version"], "bulk": run_bulk(BULK)}
    (HERE / "bulk_digests.json").write_text(_dump(bulk))


def _dump(data):
    """JSON with one case per line, so that a change shows as a small diff."""
    lines = ["{"]
    items = list(data.items())
    for i, (name, value) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = [json.dumps(v, separators=(",", ":")) for v in value]
            lines.append(f'"{name}":[\n' + ",\n".join(rows) + f"\n]{end}")
        else:
            lines.append(f'"{name}":{json.dumps(value, separators=(",", ":"))}{end}')
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
