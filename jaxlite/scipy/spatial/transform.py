"""`jaxlite.scipy.spatial.transform`: rotations in 3 dimensions (mirrors
`jax.scipy.spatial.transform`): Rotation and Slerp.

A Rotation holds unit quaternions (x, y, z, w), scalar last as in scipy, one (shape (4,),
a single rotation) or a stack (N, 4). Both classes are NamedTuples, hence pytrees, as in
JAX. The conversions are the standard ones: rotation vectors through the half angle (with
Taylor series below 1e-3 rad), matrices through the largest of the diagonal and the trace
(Shepperd's method), modified Rodrigues parameters, Euler angles of any axis sequence by
Bernardes and Viollet's quaternion formula (PLoS ONE 17(11), 2022), the mean by the
eigenvector of the largest eigenvalue of sum w q q^T (Markley et al., 2007).
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple, Sequence

import numpy as np

import jaxlite.numpy as jnp

__all__ = ["Rotation", "Slerp"]


def _gufunc(signature: str) -> Any:
    return lambda fun: jnp.vectorize(fun, signature=signature)


@_gufunc("(n)->()")
def _norm(vector: Any) -> Any:
    return jnp.sqrt(jnp.dot(vector, vector))


@_gufunc("(n)->(n)")
def _normalize(quat: Any) -> Any:
    return quat / _norm(quat)


@_gufunc("(n),(n)->(n)")
def _compose(p: Any, q: Any) -> Any:
    """The quaternion product p q (rotate by q, then by p)."""
    cross = jnp.cross(p[:3], q[:3])
    return jnp.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                      p[3] * q[1] + q[3] * p[1] + cross[1],
                      p[3] * q[2] + q[3] * p[2] + cross[2],
                      p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@_gufunc("(m)->(n,n)")
def _as_matrix(quat: Any) -> Any:
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return jnp.array([[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                      [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
                      [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]])


@_gufunc("(m,m)->(n)")
def _from_matrix(matrix: Any) -> Any:
    trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    candidates = jnp.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], trace],
                           dtype=matrix.dtype)
    choice = jnp.argmax(candidates)
    i = choice
    j, k = (i + 1) % 3, (i + 2) % 3
    from_diagonal = jnp.empty(4, dtype=matrix.dtype)
    from_diagonal = from_diagonal.at[i].set(1 - candidates[3] + 2 * matrix[i, i])
    from_diagonal = from_diagonal.at[j].set(matrix[j, i] + matrix[i, j])
    from_diagonal = from_diagonal.at[k].set(matrix[k, i] + matrix[i, k])
    from_diagonal = from_diagonal.at[3].set(matrix[k, j] - matrix[j, k])
    from_trace = jnp.array([matrix[2, 1] - matrix[1, 2], matrix[0, 2] - matrix[2, 0],
                            matrix[1, 0] - matrix[0, 1], 1 + candidates[3]],
                           dtype=matrix.dtype)
    return _normalize(jnp.where(choice != 3, from_diagonal, from_trace))


@_gufunc("(m),()->(n)")
def _from_rotvec(rotvec: Any, degrees: Any) -> Any:
    rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    scale = jnp.where(angle <= 1e-3, small, jnp.sin(angle / 2) / angle)
    return jnp.hstack([scale * rotvec, jnp.cos(angle / 2)])


@_gufunc("(m),()->(n)")
def _as_rotvec(quat: Any, degrees: Any) -> Any:
    quat = jnp.where(quat[3] < 0, -quat, quat)  # w >= 0: angle in [0, pi]
    angle = 2.0 * jnp.arctan2(_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    scale = jnp.where(angle <= 1e-3, small, angle / jnp.sin(angle / 2))
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale * jnp.array(quat[:3])


@_gufunc("(m)->(n)")
def _from_mrp(mrp: Any) -> Any:
    squared_plus_1 = jnp.dot(mrp, mrp) + 1
    return jnp.hstack([2 * mrp[:3], (2 - squared_plus_1)]) / squared_plus_1


@_gufunc("(m)->(n)")
def _as_mrp(quat: Any) -> Any:
    sign = jnp.where(quat[3] < 0, -1.0, 1.0)
    return sign * quat[:3] / (1.0 + sign * quat[3])


@_gufunc("(n)->(n)")
def _inverse(quat: Any) -> Any:
    return quat * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)


@_gufunc("(n)->()")
def _magnitude(quat: Any) -> Any:
    return 2.0 * jnp.arctan2(_norm(quat[:3]), jnp.abs(quat[3]))


@_gufunc("(n)->(n)")
def _canonical(quat: Any) -> Any:
    """The sign of quat with w > 0, or, where w = 0, the first nonzero component > 0."""
    negative, zero = quat < 0, quat == 0
    flip = (negative[3] | (zero[3] & negative[0]) | (zero[3] & zero[0] & negative[1])
            | (zero[3] & zero[0] & zero[1] & negative[2]))
    return jnp.where(flip, -quat, quat)


@_gufunc("(m,m),(m),()->(m)")
def _apply(matrix: Any, vector: Any, inverse: Any) -> Any:
    return jnp.where(inverse, matrix.T, matrix) @ vector


@_gufunc("(),()->(n)")
def _elementary_quat(axis: Any, angle: Any) -> Any:
    quat = jnp.zeros(4, dtype=angle.dtype).at[3].set(jnp.cos(angle / 2.0))
    return quat.at[axis].set(jnp.sin(angle / 2.0))


@_gufunc("(m),(m),(),()->(n)")
def _from_euler(angles: Any, axes: Any, intrinsic: Any, degrees: Any) -> Any:
    angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
    result = _elementary_quat(axes[0], angles[0])
    for index in range(1, len(axes)):
        quat = _elementary_quat(axes[index], angles[index])
        result = jnp.where(intrinsic, _compose(result, quat), _compose(quat, result))
    return result


@_gufunc("(m),(l),(),()->(n)")
def _as_euler(quat: Any, axes: Any, extrinsic: Any, degrees: Any) -> Any:
    """Bernardes and Viollet's formula: the middle angle from the rotated quaternion's
    components, the outer ones from half sums and differences; at gimbal lock (middle
    angle 0 or pi) the third angle is 0."""
    first, third = jnp.where(extrinsic, 0, 2), jnp.where(extrinsic, 2, 0)
    axes = jnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = jnp.where(symmetric, 3 - i - j, k)
    sign = jnp.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    a = jnp.where(symmetric, quat[3], quat[3] - quat[j])
    b = jnp.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = jnp.where(symmetric, quat[j], quat[j] + quat[3])
    d = jnp.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = jnp.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b)))
    eps = 1e-7
    case = jnp.where(jnp.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(angles[1]) <= eps, 1, case)
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    angles = angles.at[0].set(jnp.where(case == 1, 2 * half_sum,
                                        2 * half_diff * jnp.where(extrinsic, -1, 1)))
    angles = angles.at[first].set(jnp.where(case == 0, half_sum - half_diff, angles[first]))
    angles = angles.at[third].set(jnp.where(case == 0, half_sum + half_diff, angles[third]))
    angles = angles.at[third].set(jnp.where(symmetric, angles[third], angles[third] * sign))
    angles = angles.at[1].set(jnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(angles), angles)


def _axis_index(axis: str) -> int:
    if axis not in "xyz" or len(axis) != 1:
        raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}")
    return "xyz".index(axis)


def _check_sequence(seq: str) -> tuple[bool, bool]:
    """(intrinsic, extrinsic) for an axis sequence like 'XYZ' or 'zyx'."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', "
                         f"'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic, extrinsic


class Rotation(NamedTuple):
    """Rotations in 3 dimensions as unit quaternions (mirrors
    `jax.scipy.spatial.transform.Rotation`); build them with the from_* class methods."""
    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence["Rotation"]) -> "Rotation":
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> "Rotation":
        """From 1 to 3 angles about the axes of seq ('XYZ' intrinsic, 'xyz' extrinsic)."""
        if len(seq) < 1 or len(seq) > 3:
            raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 "
                             f"characters, got {seq}")
        intrinsic, _ = _check_sequence(seq)
        axes = jnp.array([_axis_index(a) for a in seq.lower()])
        return cls(_from_euler(jnp.atleast_1d(angles), axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> "Rotation":
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> "Rotation":
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any) -> "Rotation":
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> "Rotation":
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> "Rotation":
        if num is not None:
            raise AssertionError("Rotation.identity: num must be None (as in JAX)")
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> "Rotation":
        raise NotImplementedError("Rotation.random is not implemented (nor is it in JAX).")

    def __getitem__(self, indexer: Any) -> "Rotation":
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: "Rotation") -> "Rotation":
        """The composition: self after other."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        _, extrinsic = _check_sequence(seq)
        axes = jnp.array([_axis_index(a) for a in seq.lower()])
        return _as_euler(self.quat, axes, extrinsic, degrees)

    def as_matrix(self) -> Any:
        return _as_matrix(self.quat)

    def as_mrp(self) -> Any:
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        quat = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self) -> "Rotation":
        return Rotation(_inverse(self.quat))

    def magnitude(self) -> Any:
        return _magnitude(self.quat)

    def mean(self, weights: Any = None) -> "Rotation":
        """The weighted mean rotation (the quaternion maximizing sum w (q . q_i)^2)."""
        w = (jnp.ones(self.quat.shape[0], dtype=self.quat.dtype) if weights is None
             else jnp.asarray(weights, dtype=self.quat.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(f"Expected `weights` to have number of values equal to number of "
                             f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        k = jnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, v = jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation between rotations at increasing times (mirrors
    `jax.scipy.spatial.transform.Slerp`); build it with `Slerp.init(times, rotations)`."""
    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> "Slerp":
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts = Rotation(rotations.as_quat()[:-1])
        steps = (starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotations at `times` (a scalar gives a single rotation)."""
        at = jnp.asarray(times, dtype=self.times.dtype)
        if at.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = at.ndim == 0
        at = jnp.atleast_1d(at)
        index = jnp.maximum(jnp.searchsorted(self.times, at) - 1, 0)
        fraction = (at - self.times[index]) / self.timedelta[index]
        result = self.rotations[index] * Rotation.from_rotvec(
            self.rotvecs[index] * fraction[:, None])
        return result[0] if single else result
