"""`jaxlite.experimental.checkify` (mirrors `jax.experimental.checkify`): run-time checks as
functional error values.

`check(pred, msg, ...)` records a failure; `checkify(f, errors=...)` turns the checks in `f`
(and the automatic NaN, division and index checks chosen by `errors`) into an `Error`
returned beside `f`'s output, threaded through the program as arrays, so that it works
under `jit`, `vmap`, `grad` and control flow.

Modules: `_errors` (the exception kinds), `_error_value` (`Error` and the `check`
primitive), `_interpreter` (the transformation), `_automatic` (NaN, division and index
checks), `_control_flow` (rules for primitives that carry jaxprs), `_api`.
"""
from jaxlite.experimental.checkify import _automatic, _control_flow  # noqa: F401  (rules)
from jaxlite.experimental.checkify._api import check, check_error, checkify, debug_check
from jaxlite.experimental.checkify._error_value import Error, init_error
from jaxlite.experimental.checkify._errors import (ErrorCategory, JaxRuntimeError, all_checks,
                                                   automatic_checks, div_checks, float_checks,
                                                   index_checks, nan_checks, user_checks)

__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
           "index_checks", "init_error", "nan_checks", "user_checks"]
