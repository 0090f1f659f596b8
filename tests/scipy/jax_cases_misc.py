"""jax.scipy.integrate, interpolate, ndimage, cluster.vq and spatial.transform cases for
the JAX agreement harness (see jax_cases.py)."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal

IMAGE = normal("image", (5, 6))
INT_IMAGE = np.arange(30, dtype=np.int32).reshape(5, 6)
COORDS = [np.array([0.5, 1.2, -0.7, 4.6, 2.0, 5.5]), np.array([0.0, 2.7, 1.1, 5.9, -1.2, 3.3])]
GRID_X = np.array([0.0, 1.0, 2.5, 4.0])
GRID_Y = np.array([-1.0, 0.0, 1.0])
GRID_VALUES = normal("grid", (4, 3))
QUERY = np.array([[0.5, 0.2], [3.9, -0.9], [2.5, 1.0], [4.5, 0.0], [1.0, 0.5]])
QUATS = normal("quats", (4, 4))
EULER = normal("euler", (3, 3))
ROTVECS = normal("rotvecs", (3, 3))
VECTORS = normal("vectors", (3, 3))


def _c(name, call, **kw):
    return JaxCase(name, call, **kw)


def _rot(J):
    return J.scipy.spatial.transform.Rotation


def _interp(J, **kw):
    return J.scipy.interpolate.RegularGridInterpolator((GRID_X, GRID_Y), GRID_VALUES, **kw)


CASES = [
    _c("integrate.trapezoid", lambda J: J.scipy.integrate.trapezoid(IMAGE)),
    _c("integrate.trapezoid/x_axis0", lambda J: J.scipy.integrate.trapezoid(
        IMAGE, x=np.array([0.0, 0.5, 1.5, 2.0, 4.0]), axis=0)),
    _c("integrate.trapezoid/dx_int", lambda J: J.scipy.integrate.trapezoid(
        np.arange(5), dx=0.5)),
    _c("cluster.vq", lambda J: J.scipy.cluster.vq.vq(normal("obs", (6, 3)),
                                                     normal("book", (4, 3))), jit=True),
    _c("cluster.vq/1d", lambda J: J.scipy.cluster.vq.vq(np.array([1.0, 5.0, 2.2]),
                                                        np.array([0.0, 2.0, 6.0]))),
    _c("cluster.vq/rank_mismatch", lambda J: J.scipy.cluster.vq.vq(np.ones((3, 2)),
                                                                   np.ones(2))),
    _c("ndimage.map_coordinates/linear", lambda J: J.scipy.ndimage.map_coordinates(
        IMAGE, COORDS, order=1), jit=True),
    *[_c(f"ndimage.map_coordinates/{mode}_{order}",
         lambda J, mode=mode, order=order: J.scipy.ndimage.map_coordinates(
             IMAGE, COORDS, order=order, mode=mode, cval=-2.0))
      for mode in ("constant", "nearest", "wrap", "mirror", "reflect") for order in (0, 1)],
    _c("ndimage.map_coordinates/int", lambda J: J.scipy.ndimage.map_coordinates(
        INT_IMAGE, COORDS, order=1, mode="nearest")),
    _c("ndimage.map_coordinates/order3", lambda J: J.scipy.ndimage.map_coordinates(
        IMAGE, COORDS, order=3)),
    _c("ndimage.map_coordinates/grid_wrap", lambda J: J.scipy.ndimage.map_coordinates(
        IMAGE, COORDS, order=1, mode="grid-wrap")),
    _c("ndimage.map_coordinates/wrong_len", lambda J: J.scipy.ndimage.map_coordinates(
        IMAGE, COORDS[:1], order=1)),
    _c("interpolate.linear", lambda J: _interp(J)(QUERY), jit=True),
    _c("interpolate.nearest", lambda J: _interp(J, method="nearest")(QUERY)),
    _c("interpolate.nearest_call", lambda J: _interp(J)(QUERY, method="nearest")),
    _c("interpolate.no_fill", lambda J: _interp(J, fill_value=None)(QUERY)),
    _c("interpolate.fill_zero", lambda J: _interp(J, fill_value=0.0)(QUERY)),
    _c("interpolate.tuple_points", lambda J: _interp(J)((QUERY[:, 0], QUERY[:, 1]))),
    _c("interpolate.trailing", lambda J: J.scipy.interpolate.RegularGridInterpolator(
        (GRID_X,), normal("trailing", (4, 2)))(np.array([0.3, 3.0]))),
    _c("interpolate.bounds_error", lambda J: J.scipy.interpolate.RegularGridInterpolator(
        (GRID_X, GRID_Y), GRID_VALUES, bounds_error=True)),
    _c("interpolate.bad_method", lambda J: _interp(J, method="cubic")),
    _c("spatial.from_quat/as_matrix", lambda J: _rot(J).from_quat(QUATS).as_matrix(),
       jit=True),
    _c("spatial.from_matrix", lambda J: _rot(J).from_matrix(
        _rot(J).from_quat(QUATS).as_matrix()).as_quat(canonical=True)),
    _c("spatial.rotvec", lambda J: _rot(J).from_rotvec(ROTVECS).as_rotvec()),
    _c("spatial.rotvec_degrees_small", lambda J: _rot(J).from_rotvec(
        np.array([1e-4, 0.0, 2e-4]), degrees=True).as_rotvec(degrees=True)),
    _c("spatial.mrp", lambda J: _rot(J).from_mrp(0.3 * ROTVECS).as_mrp()),
    *[_c(f"spatial.euler/{seq}", lambda J, seq=seq: _rot(J).from_euler(seq, EULER)
         .as_euler(seq)) for seq in ("xyz", "ZYX", "zxz", "XYX")],
    _c("spatial.euler/degrees_cross", lambda J: _rot(J).from_euler(
        "xy", np.array([30.0, 45.0]), degrees=True).as_euler("zyx", degrees=True)),
    _c("spatial.euler/gimbal", lambda J: _rot(J).from_euler(
        "xyz", np.array([0.3, np.pi / 2, 0.2])).as_euler("xyz")),
    _c("spatial.euler/bad_seq", lambda J: _rot(J).from_euler("xyy", np.zeros(3))),
    _c("spatial.euler/mixed_case", lambda J: _rot(J).from_euler("xY", np.zeros(2))),
    _c("spatial.apply", lambda J: _rot(J).from_quat(QUATS[:3]).apply(VECTORS)),
    _c("spatial.apply_inverse", lambda J: _rot(J).from_quat(QUATS[0]).apply(
        VECTORS, inverse=True)),
    _c("spatial.compose_inv", lambda J: (_rot(J).from_quat(QUATS) * _rot(J).from_quat(
        QUATS[::-1]).inv()).as_quat(scalar_first=True)),
    _c("spatial.magnitude", lambda J: _rot(J).from_quat(QUATS).magnitude()),
    _c("spatial.mean", lambda J: _rot(J).from_quat(QUATS).mean(
        np.array([1.0, 2.0, 0.5, 1.0])).as_quat(canonical=True)),
    _c("spatial.concatenate_getitem", lambda J: _rot(J).concatenate(
        [_rot(J).from_quat(QUATS[:2]), _rot(J).from_quat(QUATS[2:])])[1:3].quat),
    _c("spatial.identity", lambda J: _rot(J).identity().as_matrix()),
    _c("spatial.single_len", lambda J: len(_rot(J).from_quat(QUATS[0]))),
    _c("spatial.slerp", lambda J: J.scipy.spatial.transform.Slerp.init(
        np.array([0.0, 1.0, 3.0, 4.0]), _rot(J).from_quat(QUATS))(
        np.array([0.0, 0.5, 2.0, 3.9])).as_quat(canonical=True), jit=True),
    _c("spatial.slerp_scalar", lambda J: J.scipy.spatial.transform.Slerp.init(
        np.array([0.0, 2.0]), _rot(J).from_quat(QUATS[:2]))(1.5).as_rotvec()),
    _c("spatial.slerp_single", lambda J: J.scipy.spatial.transform.Slerp.init(
        np.array([0.0]), _rot(J).from_quat(QUATS[0]))),
]
