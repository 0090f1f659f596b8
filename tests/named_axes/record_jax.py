"""Record JAX 0.10.2's results for collective_cases.py (run with real JAX, not jaxlite):

    XLA_FLAGS=--xla_force_host_platform_device_count=6 /tmp/jaxvenv/bin/python \
        tests/named_axes/record_jax.py

Each case runs under `jax.shard_map` on a CPU mesh of the case's shape (one device per
member: the semantics collectives have on devices) and, where JAX can batch it, under
nested `jax.vmap` with the same axis names. Both are stored in jax_records.npz:
`<case>/shard_map` and `<case>/vmap`, with the input as `<case>/x`. The outputs of
`programs` (whole programs with named axes) are stored as `program/<name>/<leaf index>`.
"""
from __future__ import annotations

import sys
import zlib
from pathlib import Path

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

sys.path.insert(0, str(Path(__file__).parent))
from collective_cases import cases, member_values, programs  # noqa: E402


def by_shard_map(case, x):
    names = tuple(name for name, _ in case.mesh)
    sizes = tuple(size for _, size in case.mesh)
    mesh = Mesh(np.array(jax.devices()[:int(np.prod(sizes))]).reshape(sizes), names)
    lead = len(names)

    def per_member(block):
        out = case.fun(block.reshape(block.shape[lead:]))
        return out.reshape((1,) * lead + out.shape)
    f = jax.shard_map(per_member, mesh=mesh, in_specs=P(*names), out_specs=P(*names),
                      check_vma=False)
    return np.asarray(jax.jit(f)(x))


def by_vmap(case, x):
    f = case.fun
    for name, _ in reversed(case.mesh):
        f = jax.vmap(f, axis_name=name)
    return np.asarray(f(x))


def main() -> None:
    assert jax.__version__ == "0.10.2", jax.__version__
    records = {}
    for name, case in cases(lax).items():
        x = member_values(zlib.crc32(name.encode()), case, np)
        records[f"{name}/x"] = x
        records[f"{name}/shard_map"] = by_shard_map(case, x)
        try:
            records[f"{name}/vmap"] = by_vmap(case, x)
        except Exception as error:  # JAX cannot batch some multi-axis collectives
            print(f"{name}: vmap fails in JAX: {type(error).__name__}: {error}")
    for name, program in programs(jax).items():
        leaves, tree = jax.tree_util.tree_flatten(program())
        records[f"program/{name}/tree"] = np.array(str(tree))
        for k, leaf in enumerate(leaves):
            records[f"program/{name}/{k}"] = np.asarray(leaf)
    out = Path(__file__).parent / "jax_records.npz"
    np.savez_compressed(out, **records)
    print(f"wrote {len(records)} arrays to {out}")


if __name__ == "__main__":
    main()
