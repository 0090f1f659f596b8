"""Record JAX 0.10.2's sharding pictures for views.py (needs JAX and `rich`):

    python tests/sharding/record_views.py   (with JAX's python; writes data/views_N.txt)
"""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SCRIPT = "import jax, views; views.draw(jax)"

for n in (1, 2, 4, 8):
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
               PYTHONPATH=str(HERE), COLUMNS="80")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, check=True).stdout
    (HERE / "data" / f"views_{n}.txt").write_text(out)
