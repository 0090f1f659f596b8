"""The stages of ahead-of-time compilation (mirrors `jax.stages`): `jit(f).trace(...)` is a
`Traced`, `.lower()` a `Lowered`, `.compile()` a `Compiled`; `Wrapped` is the class of
jitted functions. Implemented in `jaxlite.transforms.stages`."""
from jaxlite.transforms.stages import (ArgInfo, Compiled, CompilerOptions, Lowered, Traced,
                                       Wrapped)

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
