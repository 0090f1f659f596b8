"""Cost and memory analyses of a compiled module, in the form the runtime reports them
(mirrors `jax.stages.Compiled.cost_analysis` and `.memory_analysis`).

The counting itself is `jaxlite.xla.analysis.module_cost` (flops, transcendentals, bytes
accessed, as XLA's `HloCostAnalysis` counts them), shared with the passes' cost model; this
module names the results as JAX does and adds the memory sizes every backend reports the
same way: arguments, results, and results that may live in donated arguments. The peak
temporary size comes from the backend (its buffer assignment).
"""
from __future__ import annotations

from typing import Sequence

from jaxlite.backends.base import MemoryAnalysis, entry_result_shapes
from jaxlite.xla.analysis import module_cost
from jaxlite.xla.ir import HloModule


def cost_analysis(module: HloModule) -> dict[str, float]:
    """Estimated work of one run of `module`: 'flops', 'transcendentals', 'bytes accessed'.

    Also 'bytes accessed{i}{}' for the bytes of entry parameter i and 'bytes accessedout{}'
    for the result's, as XLA names them.
    """
    cost = module_cost(module)
    result = {"flops": float(cost.flops), "transcendentals": float(cost.transcendentals),
              "bytes accessed": float(cost.bytes_accessed)}
    for i, param in enumerate(module.entry.parameters):
        result[f"bytes accessed{i}{{}}"] = float(param.shape.nbytes)
    result["bytes accessedout{}"] = float(module.entry.root.shape.nbytes)
    return result


def aliased_bytes(module: HloModule, donated: Sequence[int]) -> int:
    """Bytes of results that can be written into donated parameters.

    Each donated parameter can hold one result of the same element type and dimensions;
    results are matched greedily in order, as input/output aliasing for `donate_argnums`
    pairs them.
    """
    params = module.entry.parameters
    free = [params[i].shape for i in sorted(set(donated)) if 0 <= i < len(params)]
    total = 0
    for shape in entry_result_shapes(module):
        for j, candidate in enumerate(free):
            if candidate.same_array(shape):
                total += shape.nbytes
                del free[j]
                break
    return total


def memory_analysis(module: HloModule, donated: Sequence[int],
                    temp_size_in_bytes: int = 0,
                    generated_code_size_in_bytes: int = 0) -> MemoryAnalysis:
    """Argument, output and alias sizes of `module`'s entry; temporaries as given."""
    arguments = sum(p.shape.nbytes for p in module.entry.parameters)
    outputs = sum(s.nbytes for s in entry_result_shapes(module))
    return MemoryAnalysis(argument_size_in_bytes=int(arguments),
                          output_size_in_bytes=int(outputs),
                          alias_size_in_bytes=aliased_bytes(module, donated),
                          temp_size_in_bytes=int(temp_size_in_bytes),
                          generated_code_size_in_bytes=int(generated_code_size_in_bytes))
