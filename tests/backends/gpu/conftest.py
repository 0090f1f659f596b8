"""The gpu backend tests' folder on sys.path, for their shared helpers (gpu_testing), and
the "gpu-interpreter" backend (the gpu compiler with kernels run by the numpy kernel
interpreter) registered in the default registry, so that `jit(f, backend=...)` runs end
to end without a GPU."""
import sys
from pathlib import Path

from jaxlite.backends import gpu, registry

sys.path.insert(0, str(Path(__file__).parent))
gpu.register_interpreter(registry.default_registry())
