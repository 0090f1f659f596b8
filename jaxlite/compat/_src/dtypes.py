"""`jax._src.dtypes` under the hook. Needed by equinox (`TypePromotionError`) and
flax.linen's fp8 ops (extended dtypes, `finfo`, `supports_inf`)."""
import numpy as np

from jaxlite.core.dtypes import (ExtendedDType, TypePromotionError, extended, finfo, iinfo,
                                 issubdtype)

DType = np.dtype


def supports_inf(dtype: object) -> bool:
    """Whether a floating dtype has infinities (float8_e4m3fn, for one, has none)."""
    if not issubdtype(dtype, np.inexact):
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(dtype)))


__all__ = ["DType", "ExtendedDType", "TypePromotionError", "extended", "finfo", "iinfo",
           "issubdtype", "supports_inf"]
