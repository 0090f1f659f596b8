"""jaxlite.image against JAX 0.10.2: data/image/image_script.py resizes one image with
every method (nearest, linear, cubic, lanczos3/5, cubic-pytorch, area), growing and
shrinking, with and without antialiasing, in float32, bfloat16 and int32, plus
scale_and_translate, a gradient and jit; data/image/image_jax.json summarizes JAX's
results (shape, dtype, sum, sum of squares, first values). The tolerance is float32
rounding of the sums and contractions."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxlite import image
import jaxlite.numpy as jnp

DATA = Path(__file__).parent / "data" / "image"


def test_image_matches_jax(tmp_path):
    out = tmp_path / "jaxlite.json"
    result = subprocess.run([sys.executable, str(DATA / "image_script.py"), "jaxlite",
                             str(out)], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    expected = json.loads((DATA / "image_jax.json").read_text())
    actual = json.loads(out.read_text())
    assert sorted(actual) == sorted(expected)
    for key, e in expected.items():
        a = actual[key]
        assert (a["shape"], a["dtype"]) == (e["shape"], e["dtype"]), key
        rtol = 1e-2 if e["dtype"] == "bfloat16" or key == "bf16" else 2e-5
        np.testing.assert_allclose(a["first"], e["first"], rtol=rtol, atol=1e-5, err_msg=key)
        np.testing.assert_allclose(a["sumsq"], e["sumsq"], rtol=rtol, atol=1e-4, err_msg=key)
        np.testing.assert_allclose(a["sum"], e["sum"], rtol=rtol, atol=1e-3, err_msg=key)
    assert result.stdout.splitlines() == [
        "ValueError shape must have length equal to the number of dimensions of x;  (2, 3) "
        "vs (2, 7, 9, 3)", 'ValueError Unknown resize method "foo"',
        "ValueError Nearest neighbor resampling is not currently supported for "
        "scale_and_translate.", "ok"]


def test_resize_method_names():
    assert [(m.name, m.value) for m in image.ResizeMethod] == [
        ("NEAREST", 0), ("LINEAR", 1), ("LANCZOS3", 2), ("LANCZOS5", 3), ("CUBIC", 4),
        ("CUBIC_PYTORCH", 5), ("AREA", 6)]
    assert image.ResizeMethod.from_string("trilinear") is image.ResizeMethod.LINEAR
    with pytest.raises(ValueError, match='Unknown resize method "box"'):
        image.ResizeMethod.from_string("box")
    # Linear resize of a ramp keeps it a ramp where the samples are inside.
    ramp = jnp.arange(4.0)
    np.testing.assert_allclose(image.resize(ramp, (8,), "linear"),
                               [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3], rtol=1e-6)
