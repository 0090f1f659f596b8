"""jax.scipy.optimize cases for the JAX agreement harness (see jax_cases.py): BFGS and
L-BFGS on standard problems, compared iterate counts, evaluations, results and status."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def rosenbrock(J):
    jnp = J.numpy
    return lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(J):
    jnp = J.numpy
    q = normal("Q", (4, 4))
    a = q @ q.T + np.eye(4)
    b = normal("b", (4,))
    return lambda x: 0.5 * jnp.dot(x, jnp.dot(a, x)) - jnp.dot(b, x)


def himmelblau(J):
    return lambda x: (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def shifted_sphere(J):
    jnp = J.numpy
    return lambda x, c, scale: scale * jnp.sum((x - c) ** 2) + jnp.sum(jnp.cos(x))


def _o(name, call, **kw):
    if "rtol" in kw:
        kw.setdefault("atol", ATOL)
    return JaxCase("optimize." + name, call, **kw)


def _min(J, fun, x0, method="BFGS", **kw):
    return J.scipy.optimize.minimize(fun, J.numpy.asarray(x0), method=method, **kw)


# Results are compared to JAX's at 1e-4 (32-bit) and 1e-9 (64-bit) relative to the
# output's size, gradients at the minimum (rounding noise) absolutely. In 64 bits every
# output is compared, counts of iterations and evaluations exactly. In 32 bits only x and
# fun: near a minimum the line search works at the limit of float32, so rounding
# differences change how many evaluations it takes (as between JAX versions).
TOL = {"x32": 1e-4, "x64": 1e-9}
ATOL = {"x32": 1e-5, "x64": 1e-12}


def _x_and_fun(leaves):
    return [leaves[0], leaves[3]]
def _both(name, call, jit=False):
    """The case in 64 bits (every output) and in 32 bits (x and fun)."""
    return [_o(name, call, rtol=TOL, modes=("x64",), jit=jit),
            _o(name + "/x32", call, rtol=TOL, modes=("x32",), gauge=_x_and_fun)]


X0 = np.array([-1.2, 1.0, 0.5, -0.3])
CASES = [
    *_both("bfgs/rosenbrock", lambda J: _min(J, rosenbrock(J), X0), jit=True),
    *_both("bfgs/rosenbrock_2d", lambda J: _min(J, rosenbrock(J), np.array([-1.2, 1.0]))),
    *_both("bfgs/quadratic", lambda J: _min(J, quadratic(J), np.zeros(4)), jit=True),
    *_both("bfgs/himmelblau", lambda J: _min(J, himmelblau(J), np.array([0.5, -1.0]))),
    *_both("bfgs/args", lambda J: _min(J, shifted_sphere(J), np.zeros(3),
                                       args=(np.array([1.0, 2.0, 3.0]), 2.0))),
    *_both("bfgs/maxiter", lambda J: _min(J, rosenbrock(J), X0, options=dict(maxiter=3))),
    *_both("bfgs/gtol_norm2", lambda J: _min(J, quadratic(J), np.ones(4),
                                             options=dict(gtol=1e-3, norm=2))),
    _o("bfgs/converged_at_start", lambda J: _min(J, quadratic(J), np.linalg.solve(
        (lambda q: q @ q.T + np.eye(4))(normal("Q", (4, 4))), normal("b", (4,)))),
       rtol=TOL, modes=("x64",)),
    *_both("lbfgs/rosenbrock", lambda J: _min(J, rosenbrock(J), X0, method=LBFGS), jit=True),
    *_both("lbfgs/quadratic", lambda J: _min(J, quadratic(J), np.zeros(4), method=LBFGS)),
    *_both("lbfgs/maxcor", lambda J: _min(J, rosenbrock(J), X0, method="L-BFGS-experimental-"
                                          "do-not-rely-on-this", options=dict(maxcor=3))),
    _o("bad_method", lambda J: _min(J, quadratic(J), np.zeros(4), method="Nelder-Mead")),
    _o("args_not_tuple", lambda J: _min(J, shifted_sphere(J), np.zeros(3), args=[1, 2])),
]
