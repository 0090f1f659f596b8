"""The sharding pictures compared with JAX's: `draw(jax, numpy)` prints
`visualize_array_sharding` of arrays placed over every device (the program adapts to the
device count: 1, 2, 4 or 8). record_views.py runs it under JAX 0.10.2 (with `rich`)."""
from typing import Any

import numpy as np


def _meshes(jax: Any) -> list:
    devices = np.array(jax.devices())
    n = devices.size
    Mesh = jax.sharding.Mesh
    meshes = [Mesh(devices, ("x",)), Mesh(devices[::-1], ("x",))]
    if n >= 4:
        meshes.append(Mesh(devices.reshape(2, n // 2), ("x", "y")))
        meshes.append(Mesh(devices[::-1].reshape(n // 2, 2), ("x", "y")))
    return meshes


def draw(jax: Any) -> None:
    jnp = jax.numpy
    NamedSharding, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
    n = jax.device_count()
    for mesh in _meshes(jax):
        two_axes = len(mesh.axis_names) == 2
        specs = [P("x"), P(None, "x"), P()]
        if two_axes:
            specs += [P("x", "y"), P("y", "x"), P(("x", "y")), P(None, ("y", "x")), P("y")]
        for shape in [(8, 8), (8, 64), (64, 8), (2, 80), (4 * n,)]:
            for spec in specs:
                if len(spec) > len(shape):
                    continue
                print("---", mesh.device_ids.tolist(), shape, spec)
                try:
                    x = jax.device_put(jnp.zeros(shape), NamedSharding(mesh, spec))
                except ValueError as error:  # a dimension that does not split evenly
                    print(type(error).__name__, error)
                    continue
                jax.debug.visualize_array_sharding(x)
    mesh = _meshes(jax)[-1]
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, tuple(mesh.axis_names))))
    for options in [dict(scale=0.5), dict(min_width=14), dict(min_width=20, max_width=100),
                    dict(scale=3.0), dict(max_width=200)]:
        print("---", options)
        jax.debug.visualize_array_sharding(x, **options)
    print("--- one device")
    jax.debug.visualize_array_sharding(jax.device_put(jnp.zeros((8, 8)), jax.devices()[-1]))
