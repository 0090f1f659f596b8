"""Shared test set-up: hypothesis profiles and the test folders on sys.path."""
import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent / "lax"))
sys.path.insert(0, str(Path(__file__).parent / "xla"))
sys.path.insert(0, str(Path(__file__).parent / "numpy"))
sys.path.insert(0, str(Path(__file__).parent / "scipy"))

settings.register_profile(
    "ci", max_examples=12, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
