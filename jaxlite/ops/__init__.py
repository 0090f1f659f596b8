"""`jaxlite.ops`: segment reductions (mirrors `jax.ops`)."""
from jaxlite.ops.segments import (segment_max, segment_min, segment_prod,  # noqa: F401
                                  segment_sum)

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
