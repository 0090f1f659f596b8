"""Shared test set-up: hypothesis profiles and the test folders on sys.path."""
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent / "lax"))
sys.path.insert(0, str(Path(__file__).parent / "xla"))
sys.path.insert(0, str(Path(__file__).parent / "numpy"))
sys.path.insert(0, str(Path(__file__).parent / "scipy"))

# Tests that run scripts in a fresh interpreter must import this checkout's jaxlite, even
# where the installed (editable) jaxlite points at another clone.
ROOT = str(Path(__file__).resolve().parents[1])
os.environ["PYTHONPATH"] = os.pathsep.join(
    [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

# The persistent compilation cache is on by default in a per-user folder: the tests (and the
# interpreters they start) use a folder of their own, removed at the end, never the user's.
# One folder for the whole run: pytest-xdist's workers inherit the one the controller made,
# so a program one worker compiled the other loads instead of compiling it again (entries
# are renamed into place whole, so workers writing at once never read half of one).
_OWNER = "JAXLITE_TEST_CACHE_OWNER"
if "PYTEST_XDIST_WORKER" in os.environ and os.environ.get(_OWNER):
    _CACHE = os.environ["JAXLITE_COMPILATION_CACHE_DIR"]  # the controller removes it
else:
    _CACHE = tempfile.mkdtemp(prefix="jaxlite-test-cache-")
    os.environ["JAXLITE_COMPILATION_CACHE_DIR"] = _CACHE
    os.environ[_OWNER] = str(os.getpid())
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

settings.register_profile(
    "ci", max_examples=12, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
