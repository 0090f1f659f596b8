"""The host LLVM target: compiling, freeing and compiling again is safe."""
from __future__ import annotations

import ctypes
import gc

from jaxlite.backends.cpu.llvm_target import compile_ir, has_avx512, host_cpu

ADD = """
define double @add(double %a, double %b) {
  %c = fadd double %a, %b
  ret double %c
}
"""


def test_compiled_modules_can_be_freed_and_compiled_again():
    # Regression: engines took ownership of one shared target machine, so freeing a compiled
    # module freed the machine and the next compilation crashed.
    for _ in range(20):
        module = compile_ir(ADD)
        add = module.function("add", ctypes.c_double, ctypes.c_double, ctypes.c_double)
        assert add(1.5, 2.0) == 3.5
        del module, add
        gc.collect()


def test_host_description_and_assembly():
    name, features = host_cpu()
    assert name and isinstance(features, str)
    assert has_avx512() == ("+avx512f" in features)
    assert "add:" in compile_ir(ADD).assembly()
