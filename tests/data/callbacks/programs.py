"""Programs with host callbacks whose printed output is compared with JAX 0.10.2's.

Each program takes the `jax` module (jaxlite or JAX) and prints. `record.py` (next to this
file) runs them with real JAX and writes what they print to `<name>.txt` here;
tests/test_debug.py runs them with jaxlite and compares.
Programs avoid what JAX leaves unspecified: the relative order of unordered callbacks that
no data dependence orders under `jit` (jaxlite keeps program order; XLA may not).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

PROGRAMS: dict[str, Callable[[Any], None]] = {}


def program(fn: Callable[[Any], None]) -> Callable[[Any], None]:
    PROGRAMS[fn.__name__] = fn
    return fn


@program
def print_formats(jax: Any) -> None:
    jnp, P = jax.numpy, jax.debug.print
    P("{} {}", 1.0, 2)
    P("{x} and {y:.3f}", x=jnp.arange(3), y=jnp.float32(1.23456))
    jax.jit(lambda x: P("{x} and {y:.3f}", x=x, y=x[1]))(jnp.arange(3.0))
    P("no placeholders")
    P("no placeholders", 1, jnp.arange(2), skip_format_check=True)
    P("{}", jnp.ones((2, 3), jnp.bfloat16))
    P("{}", jnp.array([1e-8, 1e8]))
    P("{}", jnp.array([True, False]))
    P("{}", jnp.arange(2000))
    P("{}", {"a": jnp.float32(1), "b": [jnp.int32(2)]})
    P("{}", (1, 2))
    P("{:>10}", jnp.float32(1.5))
    P("{0} {0}", jnp.float32(1.5))
    P("{x[0]} {x.shape}", x=jnp.arange(3))
    P("{}", jnp.complex64(1 + 2j))
    P("{} {} {} {} {}", jnp.int8(-3), jnp.uint32(7), jnp.float16(1.5), jnp.bfloat16(2.5),
      jnp.bool_(True))
    P("{}", jnp.zeros((2, 0)))
    P("{}", jnp.array(1e10))
    P("{x:.2e} {y!r}", x=jnp.float32(1234.5), y=jnp.arange(2))
    P("{}", jax.random.PRNGKey(0))
    P(ordered=True)("two-call {a}", a=1)
    for n in (1, 2):
        jax.jit(lambda x: P("shape {}", x.shape))(jnp.zeros(n))


@program
def print_options(jax: Any) -> None:
    jnp, P = jax.numpy, jax.debug.print
    with np.printoptions(precision=2):
        traced = jax.jit(lambda x: P("traced {}", x))
        traced(jnp.array([1.23456, 2.0]))
    traced(jnp.array([1.23456, 2.0]))  # the options of the trace stay
    P("eager {}", jnp.array([1.23456, 2.0]))
    with np.printoptions(precision=3):
        P("eager {}", jnp.array([1.23456, 2.0]))


def _control_flow(jax: Any) -> Callable[[Any], Any]:
    P = jax.debug.print

    def f(x: Any) -> Any:
        P("start {}", x, ordered=True)
        y = jax.lax.fori_loop(0, 2, lambda i, c: (P("loop {} {}", i, c, ordered=True),
                                                  c * 2)[1], x)
        P("mid {}", y, ordered=True)
        z = jax.lax.cond(y > 3, lambda v: (P("big {}", v, ordered=True), v + 1)[1],
                         lambda v: (P("small {}", v, ordered=True), v - 1)[1], y)
        P("end {}", z, ordered=True)
        return z
    return f


@program
def control_flow(jax: Any) -> None:
    f = _control_flow(jax)
    for wrap in (lambda g: g, jax.jit):
        print(wrap(f)(1.0))
        print(wrap(f)(0.5))
    _, ys = jax.lax.scan(lambda c, x: (jax.debug.print("s {} {}", c, x) or c + x, c), 0.0,
                         jax.numpy.arange(3.0))
    print(ys)
    print(jax.jit(lambda x: jax.lax.while_loop(
        lambda c: c < 10, lambda c: (jax.debug.print("w {}", c), c * 3)[1], x))(1))


@program
def transformations(jax: Any) -> None:
    jnp, P = jax.numpy, jax.debug.print
    f = _control_flow(jax)
    print(jax.grad(f)(1.0))
    print(jax.jit(jax.grad(f))(0.5))

    def square(x: Any) -> Any:
        P("f {}", x)
        return x ** 2
    print(jax.grad(square)(3.0))
    print(jax.jit(jax.grad(square))(3.0))
    print(jax.jvp(square, (3.0,), (1.0,))[1])
    print(jax.grad(jax.checkpoint(square))(3.0))
    print(jax.jacfwd(lambda x: (P("jf {}", x), x ** 2)[1])(jnp.arange(2.0)))
    print(jax.hessian(square)(2.0))
    inner = jax.jit(lambda x: (P("inner {}", x), x + 1)[1])
    print(jax.jit(lambda x: inner(inner(x)))(1.0))
    print(jax.lax.scan(lambda c, x: (inner(c), x), 0.0, jnp.arange(2))[0])
    print(jax.grad(lambda x: jax.lax.scan(lambda c, x: (P("gs {}", c) or c * x, None), x,
                                          jnp.arange(1.0, 3.0))[0])(2.0))


@program
def vmapped(jax: Any) -> None:
    jnp, P = jax.numpy, jax.debug.print
    jax.vmap(lambda x: P("v {}", x))(jnp.arange(3))
    jax.vmap(lambda x, y: P("v {} {}", x, y), in_axes=(0, None))(jnp.arange(3), 7)
    jax.jit(jax.vmap(lambda x: P("jv {}", x)))(jnp.arange(2.0))
    jax.vmap(jax.vmap(lambda x: P("vv {}", x)))(jnp.arange(4).reshape(2, 2))
    jax.vmap(lambda x: P("axis1 {}", x), in_axes=1)(jnp.arange(4).reshape(2, 2))
    print(jax.vmap(lambda x: jax.lax.while_loop(
        lambda c: c < 3, lambda c: (P("w {}", c), c + 1)[1], x))(jnp.array([0, 2])))
    jax.vmap(lambda p: jax.lax.cond(p, lambda: P("T"), lambda: P("F")))(
        jnp.array([True, False]))
    f = _control_flow(jax)
    print(jax.vmap(f)(jnp.array([1.0, 0.5])))


@program
def custom_rules(jax: Any) -> None:
    jnp, P = jax.numpy, jax.debug.print

    @jax.custom_vjp
    def g(x: Any) -> Any:
        return x * 3

    def g_fwd(x: Any) -> Any:
        P("fwd {}", x)
        return g(x), x

    def g_bwd(res: Any, ct: Any) -> Any:
        P("bwd res={} ct={}", res, ct)
        return (ct * 3,)
    g.defvjp(g_fwd, g_bwd)
    print(jax.grad(lambda x: g(x) ** 2)(2.0))
    print(jax.jit(jax.grad(lambda x: g(x) ** 2))(2.0))
    print(jax.vmap(jax.grad(lambda x: g(x) ** 2))(jnp.array([1.0, 2.0])))

    @jax.custom_jvp
    def h(x: Any) -> Any:
        return x * 5

    @h.defjvp
    def h_jvp(primals: Any, tangents: Any) -> Any:
        P("h primal {} tangent {}", primals[0], tangents[0])
        return h(primals[0]), tangents[0] * 5
    print(jax.jvp(h, (1.0,), (2.0,)))
    print(jax.grad(h)(1.0))


@program
def debug_callbacks(jax: Any) -> None:
    jnp = jax.numpy
    show = lambda a, s, k=None: print("cb", repr(a), s, repr(k))  # noqa: E731
    jax.debug.callback(show, jnp.arange(2), "static", k=3.5)
    jax.debug.callback(ordered=True)(show, jnp.arange(2), "static", k=3.5)
    jax.jit(lambda x: jax.debug.callback(show, x, "static", k=3.5))(jnp.arange(2))
    jax.debug.callback(lambda x, y: print(repr(x), repr(y)), 1.0, jnp.float32(2))
    jax.jit(lambda: jax.debug.callback(lambda x: print(repr(x)), 1.0))()
    jax.debug.callback(lambda x, s, n: print(repr(x), repr(s), repr(n)), np.float64(3.0),
                       "str", None)
    jax.vmap(lambda x: jax.debug.callback(lambda v: print(repr(v)), x))(jnp.arange(2.0))
    keys = jax.random.split(jax.random.key(0), 2)  # typed keys: as they are eagerly,
    jax.debug.print("key {}", keys[0])  # their physical data in a compiled program
    jax.jit(lambda k: jax.debug.print("jit key {}", k))(keys[0])
    jax.vmap(lambda k: jax.debug.print("vmap key {}", k))(keys)
    jax.jit(lambda k: jax.debug.callback(lambda v: print(type(v).__name__, v.dtype, v.shape),
                                         k))(keys)


@program
def callback_calls(jax: Any) -> None:
    jnp = jax.numpy
    io_callback = jax.experimental.io_callback

    def logged(tag: str) -> Callable[[Any], Any]:
        def run(x: Any) -> Any:
            print(tag, type(x).__name__, repr(x))
            return np.asarray(x)
        return run
    x = jnp.arange(3.0)
    print(jax.pure_callback(logged("pure"), x, x))
    print(jax.jit(lambda v: jax.pure_callback(logged("pure jit"), v, v) * 2)(x))
    print(io_callback(logged("io"), x, x))
    print(jax.jit(lambda v: io_callback(logged("io jit"), v, v, ordered=True))(x))
    print(jax.vmap(lambda v: io_callback(logged("io vmap"), v, v))(x))
    print(jax.jit(lambda v: jax.lax.scan(lambda c, i: (
        c + io_callback(logged("io scan"), c, c, ordered=True), None), v, jnp.arange(3))[0])(
        jnp.float32(1)))
    print(jax.lax.cond(False, lambda v: io_callback(logged("t"), v, v),
                       lambda v: io_callback(logged("f"), v, v), jnp.float32(3)))
    print(jax.pure_callback(lambda a, b=None: {"s": np.asarray(a) + b, "t": (np.int32(1),)},
                            {"s": jax.ShapeDtypeStruct((3,), jnp.float32),
                             "t": (jax.ShapeDtypeStruct((), jnp.int32),)}, x, b=np.float32(2)))
    print(repr(jax.pure_callback(lambda v: 1.0, jax.ShapeDtypeStruct((), jnp.float32), x)))
    print(repr(jax.pure_callback(lambda v: np.zeros(3), jax.ShapeDtypeStruct((3,), jnp.float32),
                                 x)))
    print(jax.jit(lambda v: jax.pure_callback(lambda v: np.asarray(v) > 0,
                                              jax.ShapeDtypeStruct((3,), jnp.bool_), v))(x - 1))


@program
def pure_callback_vmap(jax: Any) -> None:
    jnp = jax.numpy

    def callback(x: Any, y: Any) -> Any:
        print("called with", np.shape(x), np.shape(y))
        return np.asarray(x) + np.asarray(y)

    def fun(x: Any, y: Any, method: str) -> Any:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return jax.pure_callback(callback, jax.ShapeDtypeStruct(shape, jnp.float32), x, y,
                                 vmap_method=method)
    x = jnp.arange(4.0)
    for method in ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                   "legacy_vectorized"):
        print(method)
        print(jax.vmap(lambda a, b: fun(a, b, method), in_axes=(0, None))(x, jnp.float32(1)))
        print(jax.jit(jax.vmap(lambda a, b: fun(a, b, method), in_axes=(None, 0)))(1.0, x))
    print(jax.vmap(lambda a, b: fun(a, b, "sequential"), in_axes=(1, None))(
        x.reshape(2, 2), jnp.float32(1)))
    print(jax.vmap(jax.vmap(lambda a, b: fun(a, b, "expand_dims"), in_axes=(0, None)),
                   in_axes=(None, 0))(x[:2], x[:3]))
    print(jax.vmap(jax.vmap(lambda a, b: fun(a, b, "sequential"), in_axes=(0, None)),
                   in_axes=(None, 0))(x[:2], x[:3]))


@program
def sharding_views(jax: Any) -> None:
    jnp = jax.numpy
    for shape, options in [((8,), {}), ((2, 4), {}), ((100, 3), {}),
                           ((4, 4), dict(scale=0.3, min_width=3)), ((4, 40), dict(max_width=30)),
                           ((4, 4), dict(scale=0)), ((3, 1000), {}), ((1000, 3), dict(scale=2.0)),
                           ((5,), dict(use_color=False, min_width=20)), ((2, 3), dict(scale=0.5))]:
        jax.debug.visualize_array_sharding(jnp.ones(shape), **options)
    for bad in [(), (2, 2, 2), (0,)]:
        try:
            jax.debug.visualize_array_sharding(jnp.ones(bad))
        except Exception as error:  # noqa: BLE001 (the type is what is compared)
            print(type(error).__name__, error)
    jax.debug.inspect_array_sharding({"a": jnp.ones(3), "b": [jnp.zeros(2)]}, callback=print)
    jax.vmap(lambda x: jax.debug.inspect_array_sharding(
        x, callback=lambda s: print("vmap", s)))(jnp.ones((2, 3)))
