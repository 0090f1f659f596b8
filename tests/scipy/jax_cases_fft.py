"""jax.scipy.fft cases for the JAX agreement harness (see jax_cases.py)."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal

X7 = normal("x7", (7,))
X34 = normal("x34", (3, 4))
X345 = normal("x345", (3, 4, 5))
C6 = normal("c6", (2, 6), np.complex128)
INTS = np.arange(6)


def _f(J):
    return J.scipy.fft


def _c(name, call, **kw):
    return JaxCase("fft." + name, call, **kw)


CASES = [
    _c("dct", lambda J: _f(J).dct(X7), jit=True),
    _c("dct/ortho_axis0", lambda J: _f(J).dct(X34, axis=0, norm="ortho")),
    _c("dct/n_pad", lambda J: _f(J).dct(X7, n=10)),
    _c("dct/n_crop", lambda J: _f(J).dct(X34, n=2, norm="backward")),
    _c("dct/complex", lambda J: _f(J).dct(C6)),
    _c("dct/int", lambda J: _f(J).dct(INTS)),
    _c("dct/type3", lambda J: _f(J).dct(X7, type=3)),
    _c("dct/forward_norm", lambda J: _f(J).dct(X7, norm="forward")),
    _c("dctn/2d", lambda J: _f(J).dctn(X34)),
    _c("dctn/3d_ortho", lambda J: _f(J).dctn(X345, norm="ortho")),
    _c("dctn/s", lambda J: _f(J).dctn(X345, s=(3, 6))),
    _c("dctn/axes", lambda J: _f(J).dctn(X345, axes=(0, 2))),
    _c("dctn/one_axis", lambda J: _f(J).dctn(X345, axes=[1], s=[2])),
    _c("dctn/complex", lambda J: _f(J).dctn(C6, norm="ortho")),
    _c("dctn/s_too_long", lambda J: _f(J).dctn(X7, s=(2, 3))),
    _c("idct", lambda J: _f(J).idct(X7), jit=True),
    _c("idct/ortho", lambda J: _f(J).idct(X34, norm="ortho", axis=0)),
    _c("idct/n", lambda J: _f(J).idct(X7, n=9)),
    _c("idct/int", lambda J: _f(J).idct(INTS)),
    _c("idct/complex", lambda J: _f(J).idct(C6)),
    _c("idctn", lambda J: _f(J).idctn(X345)),
    _c("idctn/ortho_s", lambda J: _f(J).idctn(X345, s=(4, 4), norm="ortho")),
    _c("idctn/bad_norm", lambda J: _f(J).idctn(X34, norm="ortho2")),
]
