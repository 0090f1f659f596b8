"""`jax.ad_checkpoint`: rematerialization (`checkpoint` with policies, `checkpoint_name`)
and inspecting what reverse mode saves (`print_saved_residuals`). Implemented in
`jaxlite.lax.remat`, `jaxlite.lax.checkpoint_policies` and
`jaxlite.transforms.saved_residuals`."""
from jaxlite.lax.checkpoint_policies import checkpoint_policies
from jaxlite.lax.remat import Offloadable, Recompute, Saveable, checkpoint_name
from jaxlite.transforms.saved_residuals import print_saved_residuals, saved_residuals
from jaxlite.transforms.tracing import checkpoint, remat

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name",
           "checkpoint_policies", "print_saved_residuals", "remat", "saved_residuals"]
