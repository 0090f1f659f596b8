"""shard_map / smap programs on one-device meshes, shared by the JAX recorder
(record_jax_shard_map.py, run with plain /tmp/jaxvenv/bin/python: one CPU device) and
test_shard_map.py.

`programs(jax)` takes the module (JAX or jaxlite); each program returns a pytree of arrays.
"""
from __future__ import annotations

from typing import Any, Callable


def programs(jax: Any) -> dict[str, Callable[[], Any]]:
    lax, jnp = jax.lax, jax.numpy
    P = jax.sharding.PartitionSpec
    NamedSharding = jax.sharding.NamedSharding
    Auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((1,), ("i",), axis_types=(Auto,))
    mesh2 = jax.make_mesh((1, 1), ("x", "y"), axis_types=(Auto, Auto))
    explicit = jax.make_mesh((1,), ("e",))   # make_mesh's default: Explicit axes
    v = jnp.arange(4.0) / 3 - 0.25
    m = jnp.arange(12.0).reshape(3, 4) / 5 - 1.0
    smap_ = lambda f, **kw: jax.shard_map(f, mesh=mesh, **kw)  # noqa: E731

    def collectives(x):
        return (lax.psum(x, "i"), lax.pmean(x * 2, "i"), lax.pmax(x, "i"), lax.pmin(x, "i"),
                lax.all_gather(x, "i"), lax.all_gather(x, "i", axis=0, tiled=True),
                lax.ppermute(x, "i", [(0, 0)]), lax.axis_index("i") + 0 * x.astype("int32"),
                lax.psum_scatter(x[None], "i"), lax.all_to_all(x, "i", 0, 0, tiled=True),
                x * lax.axis_size("i"))

    def two_axes(x):
        return (lax.psum(x, ("x", "y")), lax.axis_index(("x", "y")),
                lax.all_gather(x, "y"), lax.pmean(x, "x") * lax.axis_index("y"))

    def eca_like(state, keys, scalar):
        # blackjax.eca's pattern: per-device chains under vmap, a psum over "chains" of
        # summary statistics, a scan over steps.
        def step(carry, key):
            s, adapt = carry
            noise = jax.vmap(lambda k: jax.random.normal(k, ()))(jax.random.split(key, 4))
            s = s * adapt + noise
            mean = lax.psum(jnp.sum(s, axis=0), axis_name="chains") / 4
            return (s, adapt * 0.9 + 0.1 * mean), mean
        (s, adapt), means = lax.scan(step, (state, scalar), keys)
        return s, adapt, means

    pc, ps = P("chains"), P()
    keys = jax.random.split(jax.random.key(3), 5)
    raw_keys = jax.random.split(jax.random.PRNGKey(4), 5)

    def run_eca_like(keys):
        # The mesh is made when the program runs: a test that restarts the backends
        # (jax.extend.backend.clear_backends) may run in between, replacing the devices.
        chains = jax.make_mesh((1,), ("chains",), axis_types=(Auto,))
        f = jax.shard_map(eca_like, mesh=chains, in_specs=(pc, ps, ps),
                          out_specs=(pc, ps, ps))
        state = jax.device_put(jnp.arange(4.0), NamedSharding(chains, pc))
        return f(state, keys, jnp.float32(1.0))

    return {
        "collectives": lambda: smap_(collectives, in_specs=P("i"),
                                     out_specs=(P("i"),) + (P(),) * 10, check_vma=False)(v),
        "collectives_jit": lambda: jax.jit(smap_(
            collectives, in_specs=P("i"), out_specs=(P("i"),) + (P(),) * 10,
            check_vma=False))(v),
        "two_axes": lambda: jax.shard_map(two_axes, mesh=mesh2, in_specs=P("x", "y"),
                                          out_specs=P(), check_vma=False)(m),
        "pytree_specs": lambda: smap_(lambda d, t: {"a": d["a"] * t[0], "b": lax.psum(t[1], "i")},
                                      in_specs=({"a": P("i")}, P()),
                                      out_specs={"a": P("i"), "b": P()})(
            {"a": v}, (m[0], m[1])),
        "static_arg": lambda: smap_(lambda a, n: a * n, in_specs=(P("i"), None),
                                    out_specs=P("i"))(v, 3),
        "grad": lambda: jax.grad(lambda u: smap_(
            lambda a: lax.psum(jnp.sin(a) * a, "i").sum(), in_specs=P("i"), out_specs=P())(u))(v),
        "grad_inside": lambda: smap_(jax.grad(lambda a: lax.pmean(a * a, "i").sum()),
                                     in_specs=P("i"), out_specs=P("i"))(v),
        "vmap_outside": lambda: jax.vmap(smap_(lambda a: lax.psum(a, "i") * 2.0,
                                               in_specs=P("i"), out_specs=P("i")))(m),
        "vmap_named_inside": lambda: smap_(jax.vmap(
            lambda a: lax.psum(a, "j") + lax.psum(a, "i"), axis_name="j"),
            in_specs=P("i"), out_specs=P("i"), check_vma=False)(m),
        "cond_inside": lambda: smap_(lambda a: lax.cond(
            lax.axis_index("i") == 0, lambda b: lax.psum(b, "i"), lambda b: -b, a),
            in_specs=P("i"), out_specs=P("i"), check_vma=False)(v),
        "scan_inside_jit": lambda: jax.jit(smap_(lambda a: lax.scan(
            lambda c, y: (c + lax.psum(y, "i"), c), jnp.float32(0.0), a), in_specs=P("i"),
            out_specs=(P(), P("i"))))(v),
        "decorator": lambda: jax.shard_map(mesh=mesh, in_specs=P(), out_specs=P())(
            lambda a: lax.pmax(a, "i") + 1.0)(v),
        "set_mesh": lambda: _with_mesh(jax, mesh, lambda: jax.shard_map(
            lambda a: lax.psum(a, "i"), in_specs=P("i"), out_specs=P("i"))(v)),
        "smap": lambda: _with_mesh(jax, mesh, lambda: jax.smap(
            lambda a, b: a * b + lax.axis_index("i"), in_axes=(1, None), out_axes=1,
            axis_name="i")(m, v)),
        "partial_manual": lambda: jax.shard_map(lambda a: lax.psum(a, "x") * 2.0, mesh=mesh2,
                                                in_specs=P("x"), out_specs=P("x"),
                                                axis_names={"x"})(m),
        "explicit_infer": lambda: jax.shard_map(lambda a: lax.psum(a, "e") + 1.0,
                                                mesh=explicit, out_specs=P())(v),
        "eca_typed_keys": lambda: run_eca_like(keys),
        "eca_raw_keys": lambda: run_eca_like(raw_keys),
        "keys_out": lambda: jax.random.key_data(smap_(
            lambda k: jax.random.split(k, 2), in_specs=P(), out_specs=P())(keys[0])),
        "scalar_out": lambda: smap_(lambda a: (1.0, a.sum()), in_specs=P("i"),
                                    out_specs=(P(), P()), check_vma=False)(v),
    }


def _with_mesh(jax: Any, mesh: Any, fun: Callable[[], Any]) -> Any:
    with jax.set_mesh(mesh):
        return fun()
