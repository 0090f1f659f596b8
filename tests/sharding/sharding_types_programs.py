"""Programs on arrays split over a 2x2 mesh of Explicit axes ("sharding in types", and
shard_map's varying manual axes), written once for JAX and for jaxlite: `run_all(jax)`
gives, per program, the result's type, spec and value, or the error's type and message. record_sharding_types.py records JAX 0.10.2's
answers (forced host devices); sharding_types_cases.py checks jaxlite's against them."""
import numpy as np


def programs(jax):
    """name -> a function of the arrays dict `a` (see `arrays`)."""
    jnp = jax.numpy
    P = jax.sharding.PartitionSpec
    reshard = jax.sharding.reshard
    return {
        "typeof x": lambda a: a["x"],
        "tanh(x) @ x.T": lambda a: jnp.tanh(a["x"]) @ a["x"].T,
        "jit tanh(x) @ x.T": lambda a: jax.jit(lambda v: jnp.tanh(v) @ v.T)(a["x"]),
        "x + xr": lambda a: a["x"] + a["xr"],
        "xr + xc": lambda a: a["xr"] + a["xc"],
        "xr + xy": lambda a: a["xr"] + a["xy"],
        "x + unplaced": lambda a: a["x"] + jnp.ones((4, 4)),
        "x * 2": lambda a: a["x"] * 2,
        "x @ x": lambda a: a["x"] @ a["x"],
        "xr @ xc": lambda a: a["xr"] @ a["xc"],
        "xr @ xr": lambda a: a["xr"] @ a["xr"],
        "xc @ xr": lambda a: a["xc"] @ a["xr"],
        "xr @ xy.T": lambda a: a["xr"] @ a["xy"].T,
        "xc @ unplaced": lambda a: a["xc"] @ jnp.ones((4, 4)),
        "batched matmul": lambda a: jnp.einsum("bij,bjk->bik", a["b3"], a["b3n"]),
        "batch dims split differently": lambda a: jnp.einsum("bij,bjk->bik", a["b3"],
                                                             a["b3y"]),
        "sum": lambda a: jnp.sum(a["x"]),
        "sum axis 0": lambda a: jnp.sum(a["x"], axis=0),
        "mean axis 0": lambda a: jnp.mean(a["x"], axis=0),
        "max axis 1": lambda a: jnp.max(a["x"], axis=1),
        "argmax axis 1": lambda a: jnp.argmax(a["x"], axis=1),
        "std axis 0 of xr": lambda a: jnp.std(a["xr"], axis=0),
        "softmax of xr": lambda a: jax.nn.softmax(a["xr"], axis=-1),
        "transpose": lambda a: a["x"].T,
        "transpose 3d": lambda a: jnp.transpose(a["b3"], (2, 0, 1)),
        "reshape merge": lambda a: a["x"].reshape(16),
        "reshape split 0": lambda a: a["x"].reshape(2, 2, 4),
        "reshape split 1": lambda a: a["x"].reshape(4, 2, 2),
        "reshape refused": lambda a: a["x"].reshape(8, 2),
        "reshape refused xr": lambda a: a["xr"].reshape(2, 8),
        "broadcast_to": lambda a: jnp.broadcast_to(a["xr"], (3, 4, 4)),
        "expand_dims": lambda a: a["xr"][None],
        "stack": lambda a: jnp.stack([a["xr"], a["xr"]]),
        "concatenate 0": lambda a: jnp.concatenate([a["xr"], a["xr"]], 0),
        "concatenate 1": lambda a: jnp.concatenate([a["xr"], a["xr"]], 1),
        "concatenate mixed": lambda a: jnp.concatenate([a["xr"], a["xc"]], 0),
        "x[0]": lambda a: a["x"][0],
        "x[1:3]": lambda a: a["x"][1:3],
        "xr[:, 0]": lambda a: a["xr"][:, 0],
        "xr[:, :2]": lambda a: a["xr"][:, :2],
        "xc[1]": lambda a: a["xc"][1],
        "x[array]": lambda a: a["x"][jnp.array([0, 2])],
        "where": lambda a: jnp.where(a["x"] > 3, a["x"], 0.0),
        "astype": lambda a: a["x"].astype(jnp.int32),
        "cumsum over a split axis": lambda a: jnp.cumsum(a["x"], axis=0),
        "sort over a split axis": lambda a: jnp.sort(a["x"], axis=0),
        "squeeze": lambda a: a["col"].squeeze(),
        "pad": lambda a: jnp.pad(a["xr"], 1),
        "lax.slice of a split axis": lambda a: jax.lax.slice(a["x"], (1, 0), (3, 4)),
        "vmap": lambda a: jax.vmap(lambda r: r * 2)(a["xr"]),
        "jit typeof": lambda a: jax.jit(lambda v: v.sum(0) * 2)(a["xr"]),
        "reshard": lambda a: reshard(a["x"], jax.sharding.NamedSharding(a["mesh"],
                                                                        P(None, "x"))),
        "reshard a bare spec outside a mesh": lambda a: reshard(a["x"], P("y", "x")),
        "jit reshard": lambda a: jax.jit(lambda v: reshard(
            v, jax.sharding.NamedSharding(a["mesh"], P("y", None))) * 2)(a["x"]),
        "data-parallel training": lambda a: _trained(jax, a),
        "tensor-parallel hidden": lambda a: _tensor_parallel(jax, a)[3],
        "tensor-parallel h @ w2": lambda a: (lambda t: t[3] @ t[2])(_tensor_parallel(jax, a)),
        "dot_general with out_sharding": lambda a: (lambda t: jax.lax.dot_general(
            t[3], t[2], (((1,), (0,)), ((), ())), out_sharding=t[4](P(None, "y"))))(
                _tensor_parallel(jax, a)),
        "matmul with a bare out_sharding spec outside a mesh": lambda a: (
            lambda t: jnp.matmul(t[3], t[2], out_sharding=P()))(_tensor_parallel(jax, a)),
        "jit matmul with out_sharding": lambda a: (lambda t: jax.jit(
            lambda u, v: jnp.matmul(u, v, out_sharding=t[4](P("x"))))(t[3], t[2]))(
                _tensor_parallel(jax, a)),
        "einsum with out_sharding in a mesh": lambda a: (lambda t: _in_mesh(
            jax, a, lambda: jnp.einsum("bh,ho->bo", t[3], t[2], out_sharding=P("y", None))))(
                _tensor_parallel(jax, a)),
        "reshape with out_sharding": lambda a: jax.lax.reshape(
            a["x"], (8, 2), out_sharding=jax.sharding.NamedSharding(a["mesh"], P("x", None))),
        "tensor-parallel grad": lambda a: _tensor_parallel_grad(jax, a),
        "zeros_like": lambda a: jnp.zeros_like(a["x"]),
        "full_like of xr": lambda a: jnp.full_like(a["xr"], 3.0),
        "zeros with out_sharding in a mesh": lambda a: _in_mesh(
            jax, a, lambda: jnp.zeros((4, 4), out_sharding=P("x"))),
        "device_put in jit": lambda a: jax.jit(lambda v: jax.device_put(
            v, jax.sharding.NamedSharding(a["mesh"], P(None, "y"))) * 2)(a["xr"]),
    }


def _trained(jax, a):
    """A data-parallel MLP (batch split over x, weights replicated) trained 3 steps under
    jit: the gradients of the weights contract the split batch."""
    jnp = jax.numpy
    rng = np.random.RandomState(0)
    put = lambda v, spec: jax.device_put(  # noqa: E731
        v.astype(np.float32), jax.sharding.NamedSharding(a["mesh"], spec))
    P = jax.sharding.PartitionSpec
    x, y = put(rng.randn(8, 3), P("x")), put(rng.randn(8, 2), P("x"))
    params = [put(rng.randn(3, 4) * 0.3, P()), put(rng.randn(4, 2) * 0.3, P())]

    def loss(ws, x, y):
        return jnp.mean((jnp.tanh(x @ ws[0]) @ ws[1] - y) ** 2)

    @jax.jit
    def step(ws, x, y):
        value, grads = jax.value_and_grad(loss)(ws, x, y)
        return [w - 0.1 * g for w, g in zip(ws, grads)], value
    for _ in range(3):
        params, value = step(params, x, y)
    return params[0] * value


def _tensor_parallel(jax, a):
    """Megatron's MLP pieces: x replicated, w1 split by columns, w2 by rows (h @ w2
    contracts a split dimension on both sides, so it names its result's sharding)."""
    jnp = jax.numpy
    rng = np.random.RandomState(0)
    named = lambda spec: jax.sharding.NamedSharding(a["mesh"], spec)  # noqa: E731
    P = jax.sharding.PartitionSpec
    x = jax.device_put(rng.randn(8, 3).astype(np.float32), named(P()))
    w1 = jax.device_put(rng.randn(3, 4).astype(np.float32), named(P(None, "x")))
    w2 = jax.device_put(rng.randn(4, 2).astype(np.float32), named(P("x", None)))
    return x, w1, w2, jnp.tanh(x @ w1), named


def _tensor_parallel_grad(jax, a):
    jnp = jax.numpy
    x, w1, w2, _, named = _tensor_parallel(jax, a)

    def loss(ws, x):
        out = jnp.matmul(jnp.tanh(x @ ws[0]), ws[1],
                         out_sharding=named(jax.sharding.PartitionSpec()))
        return jnp.sum(out ** 2)
    return jax.jit(jax.grad(loss))([w1, w2], x)[1]


def _in_mesh(jax, a, make):
    with jax.set_mesh(a["mesh"]):
        return make()


def vma_programs(jax):
    """shard_map with check_vma (JAX 0.10.2's default): name -> a function of `a`. Errors
    are raised under jit, where JAX names the user's function (eager JAX names an
    internal one)."""
    jnp = jax.numpy
    lax = jax.lax
    P = jax.sharding.PartitionSpec

    def smap(f, in_specs, out_specs, a, **kw):
        return jax.shard_map(f, mesh=a["mesh"], in_specs=in_specs, out_specs=out_specs, **kw)

    def types_inside(a):
        seen = []

        def body(b):
            c = jnp.ones((2,))
            for value in (b, lax.psum(b, "x"), c, lax.pcast(c, ("x", "y"), to="varying"),
                          lax.all_gather(b, "y", axis=1, tiled=True),
                          lax.all_gather(b, "y", axis=1, tiled=True, to="invarying"),
                          lax.axis_index("x"), b + c):
                seen.append(str(jax.typeof(value)))
            return b
        smap(body, P("x", "y"), P("x", "y"), a)(a["x"])
        return seen

    def gathered(b):
        return lax.all_gather(b, "y", axis=1, tiled=True)

    def gathered_invarying(b):
        return lax.all_gather(b, "y", axis=1, tiled=True, to="invarying")

    def identity(b):
        return b
    return {
        "vma: types inside the body": types_inside,
        "vma: all_gather to a spec replicated over x": lambda a: jax.jit(
            smap(gathered, P("x", "y"), P(None, "y"), a))(a["x"]),
        "vma: all_gather to a spec replicated over y": lambda a: jax.jit(
            smap(gathered, P("x", "y"), P("x", None), a))(a["x"]),
        "vma: invarying all_gather": lambda a: jax.jit(
            smap(gathered_invarying, P("x", "y"), P("x", None), a))(a["x"]),
        "vma: check_vma=False": lambda a: smap(gathered, P("x", "y"), P(None, "y"), a,
                                               check_vma=False)(a["x"]),
        "vma: a varying block to P()": lambda a: jax.jit(
            smap(identity, P("x", "y"), P(), a))(a["x"]),
        "vma: psum of an invariant value": lambda a: smap(
            lambda b: lax.psum(jnp.ones(()), "x"), P("x", "y"), P(), a)(a["x"]),
        "vma: psum over both axes": lambda a: smap(
            lambda b: lax.psum(b, ("x", "y")), P("x", "y"), P(), a)(a["x"]),
        "vma: pcast of a varying value": lambda a: smap(
            lambda b: lax.pcast(b, "x", to="varying"), P("x", "y"), P("x", "y"), a)(a["x"]),
        "vma: pcast of an invariant value": lambda a: smap(
            lambda b: lax.pcast(jnp.ones((2, 2)), "x", to="varying"), P("x", "y"),
            P("x", None), a)(a["x"]),
    }


def arrays(jax):
    """The mesh and the split arrays the programs use."""
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    P = jax.sharding.PartitionSpec

    def put(value, spec):
        return jax.device_put(value, jax.sharding.NamedSharding(mesh, spec))
    square = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    cube = np.arange(32.0, dtype=np.float32).reshape(2, 4, 4) / 8
    return {"mesh": mesh, "x": put(square, P("x", "y")), "xr": put(square, P("x", None)),
            "xc": put(square, P(None, "x")), "xy": put(square, P("y", None)),
            "b3": put(cube, P("x", None, "y")), "b3n": put(cube, P("x", None, None)),
            "b3y": put(cube, P("y")), "col": put(square[:, :1], P("x", None))}


def run_all(jax):
    """name -> the answer of each program (see the module docstring)."""
    a = arrays(jax)
    answers = {}
    for name, program in {**programs(jax), **vma_programs(jax)}.items():
        answers[name] = answer(jax, program, a)
    return answers


def answer(jax, program, a):
    """What `program` gives: its result's type, spec and value, the strings it returns, or
    its error."""
    try:
        y = program(a)
    except Exception as error:  # the answer is the error
        return {"error": type(error).__name__, "message": str(error)}
    if isinstance(y, list):
        return {"strings": y}
    return {"type": str(jax.typeof(y)), "spec": repr(y.sharding.spec),
            "value": np.asarray(y).tolist()}
