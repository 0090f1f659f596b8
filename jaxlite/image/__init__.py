"""`jaxlite.image`: image resampling (mirrors `jax.image`)."""
from jaxlite.image.scale import ResizeMethod, resize, scale_and_translate  # noqa: F401

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
