"""`jax.extend.source_info_util`: name stacks and source locations (JAX's API, implemented
in `jaxlite.core.source_info`)."""
from jaxlite.core.source_info import (NameStack, SourceInfo, current, current_name_stack,
                                      extend_name_stack, new_name_stack, new_source_info,
                                      register_exclusion, reset_name_stack, set_name_stack,
                                      summarize, transform_name_stack, user_context)

__all__ = ["NameStack", "SourceInfo", "current", "current_name_stack", "extend_name_stack",
           "new_name_stack", "new_source_info", "register_exclusion", "reset_name_stack",
           "set_name_stack", "summarize", "transform_name_stack", "user_context"]
