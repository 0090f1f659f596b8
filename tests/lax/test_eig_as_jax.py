"""lax.linalg.eig gives LAPACK geev's eigenvectors, as JAX's CPU kernel does: unit norm,
largest component real, and a real matrix's vectors with geev's own signs and phases. The
values were recorded from JAX 0.10.2 (x64) for a real matrix with a complex pair; jaxlite
used to make the largest component real *and positive*, which flipped columns."""
import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax

A = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0], [-0.5, 1.5, 2.0]])
JAX = {
    "w": [[0.6619535534950813, 2.7407753324992323], [0.6619535534950813, -2.7407753324992323],
          [1.9260928930098355, 0.0]],
    "vl": [[-0.7106552060382505, 0.0], [-0.7106552060382505, -0.0], [0.4196302669285983, 0.0],
           [0.12302944677135144, 0.641128659152076], [0.12302944677135144, -0.641128659152076],
           [0.27377604989373, 0.0], [0.2577077464452034, -0.04872056233114108],
           [0.2577077464452034, 0.04872056233114108], [0.865423083573589, 0.0]],
    "vr": [[0.02004351859504884, 0.5746064771880651], [0.02004351859504884, -0.5746064771880651],
           [0.3508848862838758, 0.0], [0.7306097660178883, 0.0], [0.7306097660178883, -0.0],
           [0.07095561463475959, 0.0], [-0.24084673354413122, -0.27861779282066734],
           [-0.24084673354413122, 0.27861779282066734], [0.9337264574431609, 0.0]],
}


def _complex(pairs, shape):
    return np.array([complex(re, im) for re, im in pairs]).reshape(shape)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_eig_vectors_as_jax(mode):
    with jax.enable_x64(True):
        run = lax.linalg.eig if mode == "eager" else jax.jit(lambda a: lax.linalg.eig(a))
        w, vl, vr = run(A)
        np.testing.assert_allclose(np.asarray(w), _complex(JAX["w"], (3,)), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(vl), _complex(JAX["vl"], (3, 3)), atol=1e-13)
        np.testing.assert_allclose(np.asarray(vr), _complex(JAX["vr"], (3, 3)), atol=1e-13)
