"""docs/configuration.md is what tools/gen_config_doc.py writes from jaxlite.config."""
from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _generated_page() -> str:
    # The script clears JAX_* / JAXLITE_* variables itself (they change option defaults).
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_config_doc.py"),
                           "--stdout"], capture_output=True, text=True, check=True)
    return done.stdout


def test_configuration_page_is_up_to_date():
    committed = (ROOT / "docs" / "configuration.md").read_text()
    assert committed == _generated_page(), (
        "docs/configuration.md is out of date: run `python tools/gen_config_doc.py`")


def test_page_lists_every_option():
    from jaxlite.config import config
    committed = (ROOT / "docs" / "configuration.md").read_text()
    options = [name for name in config.values if not name.startswith("jaxlite_user_context_")]
    missing = [name for name in options if f"`{name}`" not in committed]
    assert not missing
    assert "| `jax_enable_x64` | `False` | `JAX_ENABLE_X64` |" in committed
