"""`jax._src.checkify` under the hook. Needed by flax.nnx, whose `nnx.checkify` imports it as
`checkify_lib` and uses `checkify`, `Error`, `JaxException`, `user_checks` and `Out`; the
other exception kinds and the `check` primitive are here for libraries that catch or
match them."""
from jaxlite.experimental.checkify import (Error, ErrorCategory, JaxRuntimeError, all_checks,
                                           automatic_checks, check, check_error, checkify,
                                           debug_check, div_checks, float_checks,
                                           index_checks, init_error, nan_checks, user_checks)
from jaxlite.experimental.checkify._api import Out
from jaxlite.experimental.checkify._error_value import assert_func, check_p, update_error
from jaxlite.experimental.checkify._errors import (BatchedError, DivisionByZeroError,
                                                   ErrorEffect, FailedCheckError,
                                                   JaxException, NaNError, OOBError)

__all__ = ["BatchedError", "DivisionByZeroError", "Error", "ErrorCategory", "ErrorEffect",
           "FailedCheckError", "JaxException", "JaxRuntimeError", "NaNError", "OOBError", "Out",
           "all_checks", "assert_func", "automatic_checks", "check", "check_error", "check_p",
           "checkify", "debug_check", "div_checks", "float_checks", "index_checks",
           "init_error", "nan_checks", "update_error", "user_checks"]
