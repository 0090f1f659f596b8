"""diffrax: an adaptive Tsit5 solve of a damped oscillator and its gradient."""
import json

import diffrax
import jax
import jax.numpy as jnp


def vector_field(t, y, args):
    k, c = args
    return jnp.array([y[1], -k * y[0] - c * y[1]])


def solve(args):
    sol = diffrax.diffeqsolve(diffrax.ODETerm(vector_field), diffrax.Tsit5(), t0=0.0, t1=5.0,
                              dt0=0.1, y0=jnp.array([1.0, 0.0]), args=args,
                              saveat=diffrax.SaveAt(ts=jnp.linspace(0, 5, 6)),
                              stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-7))
    return sol


sol = jax.jit(solve)((2.0, 0.3))
grad = jax.grad(lambda a: solve(a).ys[-1, 0])((2.0, 0.3))
print(json.dumps({"ys": sol.ys[:, 0].tolist(), "steps": int(sol.stats["num_steps"]),
                  "grad": [float(g) for g in grad]}))
