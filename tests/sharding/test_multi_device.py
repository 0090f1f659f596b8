"""Runs the multi-device cases (placement_cases.py, shard_map_cases.py,
sharding_types_cases.py) on 1, 2, 4 and 8 CPU devices.

The device count is fixed when the backend starts, so each count gets a pytest of its own
in a fresh interpreter with JAXLITE_NUM_CPU_DEVICES set; its report is shown on failure.
The cases compute their expected values with numpy for whatever count they run under.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CASES = ["placement_cases.py", "shard_map_cases.py", "sharding_types_cases.py", "spmd_cases.py",
         "spmd_xla_cases.py"]


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_cases_on_devices(count):
    env = dict(os.environ, JAXLITE_NUM_CPU_DEVICES=str(count))
    env.pop("XLA_FLAGS", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
         *[str(HERE / name) for name in CASES]],
        env=env, capture_output=True, text=True, timeout=300, cwd=HERE)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout


def test_xla_flags_device_count():
    # JAX users' scripts fake devices with XLA_FLAGS; jaxlite reads the same flag.
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=3")
    env.pop("JAXLITE_NUM_CPU_DEVICES", None)
    env.pop("JAX_NUM_CPU_DEVICES", None)
    script = "import jaxlite as jax; print(jax.devices(), jax.device_count())"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.strip() == "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2)] 3"
