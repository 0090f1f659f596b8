"""The oracle worker: a script run in another interpreter (the one with real JAX).

It imports nothing from jaxlite. It loads `interp.py` from its own folder by file path, imports
the namespace named on its command line (`--namespace NAME` gives `NAME.numpy` and `NAME.lax`,
chosen at run time so that jaxlite's sources hold no import of JAX), and then answers
requests, one JSON object per line on stdin, with one JSON line on stdout:

    request:  {"programs": [program, ...]}
    response: {"results": [{"eager": outcome, "jit": outcome}, ...]}
    outcome:  {"ok": true, "dtype": ..., "shape": ..., "hex": ...}
              or {"ok": false, "type": ..., "base": ..., "message": ...}

Each program runs op by op (the namespace's eager mode) and under the namespace's `jit`,
with the program's x64 setting: the two can differ (a concrete exponent of `power` keeps the
base's dtype eagerly, a traced one promotes), so each jaxlite mode meets its counterpart.
"""
import argparse
import importlib
import importlib.util
import json
import os
import sys
import types

CLEAR_EVERY = 100  # programs between clearing the namespace's compilation caches


def load_interp():
    """interp.py from this folder, loaded by path under a private module name."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interp.py")
    spec = importlib.util.spec_from_file_location("_fuzz_interp_worker", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_namespace(name):
    """The root module, its numpy and its lax, imported by name."""
    root = importlib.import_module(name)
    return types.SimpleNamespace(root=root, jnp=importlib.import_module(name + ".numpy"),
                                 lax=importlib.import_module(name + ".lax"))


def run_one(interp, ns, program):
    """One program's outcomes, eager and under jit, in the protocol's form."""
    f = interp.as_function(program, ns)
    return {"eager": run_as(interp, ns, program, f),
            "jit": run_as(interp, ns, program, ns.root.jit(f))}


def run_as(interp, ns, program, f):
    """The outcome of `f` on the program's inputs."""
    try:
        ns.root.config.update("jax_enable_x64", bool(program.get("x64", False)))
        inputs = [ns.jnp.asarray(interp.decode_input(s)) for s in program["inputs"]]
        out = f(*inputs)
        result = interp.encode_array(out)
        result["ok"] = True
        return result
    except Exception as e:  # every failure is an answer: the fuzzer compares them
        return interp.encode_exception(e)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args(argv)
    interp = load_interp()
    ns = load_namespace(args.namespace)
    done = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        results = [run_one(interp, ns, p) for p in request["programs"]]
        done += len(results)
        if done >= CLEAR_EVERY and hasattr(ns.root, "clear_caches"):
            # every program compiles new shapes: without this JAX's caches grow by GBs
            ns.root.clear_caches()
            done = 0
        sys.stdout.write(json.dumps({"results": results}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
