"""Results of called computations on the cpu backend: a while body, a conditional's branches
and a call hand back every element of their result tuple in its own slot, whatever the
buffers the values were computed in: one value returned in two slots (optimistix's
`terminate` flag, carried twice in its loop state, once stayed at its initial value and its
minimisers ran to max_steps), state elements that trade places (a swap, a rotation), a
parameter or a constant returned. Checked against numpy and the interpreter backend, then
on random loops and conditionals of that kind.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from cpu_testing import assert_same, module, run_cpu, run_interpreter
from jaxlite import lax
from jaxlite.backends.cpu.codegen.control_flow import while_plans
from jaxlite.config import config
from jaxlite.xla.opcodes import Opcode


@pytest.fixture(autouse=True)
def both_backends():
    with config.override("jax_platforms", "interpreter,cpu"):
        yield


def _check(m, args, expected):
    """The cpu backend gives `expected` (numpy), as the interpreter does."""
    actual, judged = run_cpu(m, args), run_interpreter(m, args)
    assert len(actual) == len(judged) == len(expected)
    for k, (a, j, e) in enumerate(zip(actual, judged, expected)):
        e = np.asarray(e)
        assert_same(j, e, f"interpreter, result {k}")
        assert_same(a, e, f"cpu, result {k}")


_LESS_THAN_ONE = """
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%once (c: (s32[], pred[], pred[], f32[2])) -> pred[] {
  %c = (s32[], pred[], pred[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %one = s32[] constant(1)
  ROOT %lt = pred[] compare(%i, %one), direction=LT
}
"""


def test_while_body_returning_one_flag_in_two_slots():
    # optimistix's minimisers carry `terminate`'s flag twice in their loop state; the copy
    # in the second slot kept its initial False and the solver never stopped.
    body = """
    %step (s: (s32[], pred[], pred[], f32[2])) -> (s32[], pred[], pred[], f32[2]) {
      %s = (s32[], pred[], pred[], f32[2]) parameter(0)
      %i = s32[] get-tuple-element(%s), index=0
      %x = f32[2] get-tuple-element(%s), index=3
      %one = s32[] constant(1)
      %next = s32[] add(%i, %one)
      %zero = f32[] constant(0)
      %total = f32[] reduce(%x, %zero), dimensions={0}, to_apply=%add
      %done = pred[] compare(%total, %zero), direction=GT
      ROOT %t = (s32[], pred[], pred[], f32[2]) tuple(%next, %done, %done, %x)
    }
    """
    m = module("""
      %x = f32[2] parameter(0)
      %zero = s32[] constant(0)
      %no = pred[] constant(false)
      %init = (s32[], pred[], pred[], f32[2]) tuple(%zero, %no, %no, %x)
      %w = (s32[], pred[], pred[], f32[2]) while(%init), condition=%once, body=%step
      %a = pred[] get-tuple-element(%w), index=1
      ROOT %b = pred[] get-tuple-element(%w), index=2
    """, _LESS_THAN_ONE + body)
    x = np.float32([1, 2])
    _check(m, [x], [np.sum(x) > 0])


@pytest.mark.parametrize("order", [(2, 1), (1, 1), (2, 2)])
def test_while_body_swapping_or_repeating_its_state(order):
    # Each new element is an old one: the body computes nothing and its results trade
    # places (a swap needs a temporary) or repeat a parameter.
    first, second = order
    m = module(f"""
      %a = f32[3] parameter(0)
      %b = f32[3] parameter(1)
      %zero = s32[] constant(0)
      %init = (s32[], f32[3], f32[3]) tuple(%zero, %a, %b)
      %w = (s32[], f32[3], f32[3]) while(%init), condition=%thrice, body=%step
      %u = f32[3] get-tuple-element(%w), index=1
      %v = f32[3] get-tuple-element(%w), index=2
      ROOT %r = (f32[3], f32[3]) tuple(%u, %v)
    """, f"""
    %thrice (c: (s32[], f32[3], f32[3])) -> pred[] {{
      %c = (s32[], f32[3], f32[3]) parameter(0)
      %i = s32[] get-tuple-element(%c), index=0
      %n = s32[] constant(3)
      ROOT %lt = pred[] compare(%i, %n), direction=LT
    }}

    %step (s: (s32[], f32[3], f32[3])) -> (s32[], f32[3], f32[3]) {{
      %s = (s32[], f32[3], f32[3]) parameter(0)
      %i = s32[] get-tuple-element(%s), index=0
      %one = s32[] constant(1)
      %next = s32[] add(%i, %one)
      %p = f32[3] get-tuple-element(%s), index={first}
      %q = f32[3] get-tuple-element(%s), index={second}
      ROOT %t = (s32[], f32[3], f32[3]) tuple(%next, %p, %q)
    }}
    """)
    a, b = np.float32([1, 2, 3]), np.float32([4, 5, 6])
    state = [a, b]
    for _ in range(3):
        state = [state[first - 1], state[second - 1]]
    _check(m, [a, b], state)


def test_conditional_branch_returning_one_value_twice():
    m = module("""
      %p = pred[] parameter(0)
      %x = f32[2] parameter(1)
      %o = (f32[2]) tuple(%x)
      ROOT %c = (f32[2], f32[2], f32[2]) conditional(%p, %o, %o), branch_computations={%two, %apart}
    """, """
    %two (o: (f32[2])) -> (f32[2], f32[2], f32[2]) {
      %o = (f32[2]) parameter(0)
      %x = f32[2] get-tuple-element(%o), index=0
      %y = f32[2] add(%x, %x)
      ROOT %t = (f32[2], f32[2], f32[2]) tuple(%y, %y, %x)
    }

    %apart (o: (f32[2])) -> (f32[2], f32[2], f32[2]) {
      %o = (f32[2]) parameter(0)
      %x = f32[2] get-tuple-element(%o), index=0
      %y = f32[2] negate(%x)
      ROOT %t = (f32[2], f32[2], f32[2]) tuple(%x, %x, %y)
    }
    """)
    x = np.float32([1.5, -2])
    _check(m, [np.bool_(True), x], [x + x, x + x, x])
    _check(m, [np.bool_(False), x], [x, x, -x])


# ------------------------------------------------------------------ through jit

def _same_as_interpreter(f, *args):
    actual = jax.tree_util.tree_leaves(jax.jit(f, backend="cpu")(*args))
    judged = jax.tree_util.tree_leaves(jax.jit(f, backend="interpreter")(*args))
    assert len(actual) == len(judged)
    for k, (a, j) in enumerate(zip(actual, judged)):
        assert_same(np.asarray(a), np.asarray(j), f"leaf {k}")


def test_a_solver_loop_stops_when_its_flag_is_carried_twice():
    # The shape of optimistix's minimise loop: the step's convergence test goes into the
    # state twice (the solver's `terminate` result and the loop's own copy).
    def minimise(y0):
        def body(c):
            step, y, _, _ = c
            y_new = y - 0.5 * (y - 3.0)
            done = jnp.max(jnp.abs(y_new - y)) < 1e-3
            return step + 1, y_new, done, done
        return lax.while_loop(lambda c: (~c[3]) & (c[0] < 100), body,
                              (0, y0, False, False))
    y0 = np.float32([0.0, 1.0])
    steps, y, done, stopped = jax.jit(minimise, backend="cpu")(y0)
    expected_steps, expected_y = 0, y0.copy()
    while True:
        new = expected_y - np.float32(0.5) * (expected_y - np.float32(3.0))
        expected_steps += 1
        finished = np.max(np.abs(new - expected_y)) < 1e-3
        expected_y = new
        if finished:
            break
    assert int(steps) == expected_steps < 100
    np.testing.assert_array_equal(np.asarray(y), expected_y)
    assert bool(done) and bool(stopped)
    _same_as_interpreter(minimise, y0)


def test_cond_returning_an_operand_and_a_result_twice():
    def f(p, x):
        return lax.cond(p, lambda: (x + 1, x + 1, x), lambda: (x, x, x * 2))
    x = np.float32([3.0, -1.0])
    for p in (True, False):
        _same_as_interpreter(f, np.bool_(p), x)


def test_flat_body_still_used_when_a_value_is_repeated_and_not_for_a_swap():
    # A repeated value costs a copy at the end of the body; a swap cannot be done in place
    # without a temporary, so the state goes through regions of its own.
    def loops(x):
        repeated = lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * 2, c[1] * 2),
                                  (0, x, x))
        swapped = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[2], c[1]),
                                 (0, x, x + 1))
        return repeated, swapped
    x = np.float32([1.0, 2.0])
    compiled = jax.jit(loops, backend="cpu").lower(x).compile()
    optimized = compiled.runtime_executable().hlo_module()
    flat = [while_plans(i)[2] for i in optimized.entry.instructions if i.opcode is Opcode.WHILE]
    assert sorted(flat) == [False, True]
    (_, a, b), (_, c, d) = compiled(x)
    np.testing.assert_array_equal(np.asarray(a), x * 4)
    np.testing.assert_array_equal(np.asarray(b), x * 4)
    np.testing.assert_array_equal(np.asarray(c), x + 1)
    np.testing.assert_array_equal(np.asarray(d), x)


# ------------------------------------------------------------------ random programs
# Loops and conditionals whose results are drawn, with repeats, from their state and
# parameters, from values computed from them (arithmetic, comparisons, reductions to bool,
# selects, conversions), from constants, and from nested conditionals and loops: the ways a
# value can end up in two result slots, or a slot can end up holding another's old value.
# A program is a plan of integers, read by `_build` the same way on every trace.

_TYPES = [(np.float32, ()), (np.float32, (2,)), (np.int32, ()), (np.int32, (2,)),
          (np.int8, (3,)), (np.bool_, ()), (np.bool_, (2,)), (np.uint8, ())]
_OPS = 10


@st.composite
def _programs(draw):
    plan = {
        "state": draw(st.lists(st.sampled_from(range(len(_TYPES))), min_size=1, max_size=5)),
        "trips": draw(st.integers(0, 3)),
        "ops": draw(st.lists(st.tuples(*[st.integers(0, 50)] * 4), max_size=7)),
        "results": draw(st.lists(st.integers(0, 50), min_size=5, max_size=5)),
        "repeat": draw(st.lists(st.integers(0, 50), max_size=2)),
        "seed": draw(st.integers(0, 2 ** 16)),
    }
    return plan


def _kind(t):
    return jnp.dtype(t[0]).kind


def _pick(pool, t, k):
    values = pool.setdefault(t, [])
    if not values:
        values.append(jnp.full(t[1], k % 3, t[0]))
    return values[k % len(values)]


def _types(pool, k, kinds="fiub"):
    present = sorted((t for t in pool if _kind(t) in kinds), key=lambda t: (_kind(t), t[1]))
    return present[k % len(present)] if present else None


def _flag(pool, k):
    """A bool scalar of the pool; one computed from a pool value when it has none (a
    constant predicate would let a conditional be decided while tracing)."""
    if not pool.get((np.bool_, ())):
        x = _pick(pool, _types(pool, k), k)
        pool[(np.bool_, ())] = [jnp.any(x if x.dtype == bool else x > 0)]
    return _pick(pool, (np.bool_, ()), k)


def _apply(pool, op):
    """Add the value(s) of one operation to the pool (type -> values)."""
    kind, a, b, c = op
    kind %= _OPS
    t = _types(pool, a)
    x, y = _pick(pool, t, b), _pick(pool, t, c)
    if kind == 0:  # binary
        if _kind(t) == "b":
            fn = [jnp.logical_and, jnp.logical_or, jnp.logical_xor][a % 3]
        else:
            fn = [jnp.add, jnp.subtract, jnp.maximum, jnp.minimum][a % 4]
        pool[t].append(fn(x, y))
    elif kind == 1:  # unary
        pool[t].append(~x if _kind(t) == "b" else x * 2 if _kind(t) == "u" else -x)
    elif kind == 2 and _kind(t) != "b":  # comparison
        pool.setdefault((np.bool_, t[1]), []).append([x > y, x == y, x <= y][a % 3])
    elif kind == 3:  # reduction to bool
        p = x if _kind(t) == "b" else x > y
        pool.setdefault((np.bool_, ()), []).append(jnp.all(p) if b % 2 else jnp.any(p))
    elif kind == 4:  # select
        p = _flag(pool, c) if a % 2 else pool.setdefault((np.bool_, t[1]), [x == y])[-1]
        pool[t].append(jnp.where(p, x, y))
    elif kind == 5:  # conversion
        to = _types(pool, b)
        if to[1] == t[1]:
            pool[to].append(x.astype(to[0]))
    elif kind in (6, 9):  # a conditional or switch returning picks (repeats allowed)
        outs = [_types(pool, a + k) for k in range(1 + a % 4)]
        picks = [[_pick(pool, o, seed + j * k) for k, o in enumerate(outs)]
                 for j, seed in enumerate((b, c, a + b))]
        branches = [lambda p=p: tuple(p) for p in picks]
        if kind == 6:
            got = lax.cond(_flag(pool, a), *branches[:2])
        else:
            got = lax.switch(_flag(pool, a).astype(np.int32) + b % 2, branches)
        for o, v in zip(outs, got):
            pool[o].append(v)
    elif kind == 7:  # a loop whose elements trade places, repeat, or change
        outs = [_types(pool, b + k) for k in range(2 + a % 2)]
        init = tuple(_pick(pool, o, c + k) for k, o in enumerate(outs))

        def body(i, carry):
            new = []
            for k, o in enumerate(outs):
                same = [v for v, u in zip(carry, outs) if u == o]
                v = same[(a + k * b) % len(same)]
                new.append(v if (b + k) % 3 else (~v if _kind(o) == "b" else v + v))
            return tuple(new)
        for o, v in zip(outs, lax.fori_loop(0, 1 + c % 3, body, init)):
            pool[o].append(v)
    elif kind == 8:  # a constant
        pool[t].append(jnp.full(t[1], b % 5, t[0]))


def _build(plan):
    types = [_TYPES[k] for k in plan["state"]]

    def ops(state):
        pool = {}
        for t, v in zip(types, state):
            pool.setdefault(t, []).append(v)
        for op in plan["ops"]:
            _apply(pool, op)
        return [_pick(pool, t, k) for t, k in zip(types, plan["results"])]

    def program(*state):
        # The loop, then the same operations once more outside it: results of the entry.
        _, *final = lax.while_loop(lambda c: c[0] < plan["trips"],
                                   lambda c: (c[0] + 1, *ops(c[1:])), (0, *state))
        after = ops(final)
        return (*final, *after, *(after[k % len(types)] for k in plan["repeat"]))

    rng = np.random.default_rng(plan["seed"])
    args = [rng.integers(-3, 4, t[1]).astype(t[0]) if t[0] is not np.bool_
            else rng.integers(0, 2, t[1]).astype(bool) for t in types]
    return program, args


@settings(max_examples=40)
@given(_programs())
def test_random_loops_and_conditionals_match_the_interpreter(plan):
    program, args = _build(plan)
    _same_as_interpreter(program, *args)
