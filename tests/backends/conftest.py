"""Fixtures of the backend tests: a third-party plugin installed into a temporary folder.

`install_plugin(entry_points)` writes a real installed distribution, `jaxlite_testplugin`
(the package in plugin_pkg/, copied) with a `.dist-info` whose entry_points.txt lists the
given `jaxlite.backends` entry points, and puts the folder on `sys.path`, so that
`importlib.metadata` finds it as it finds anything pip installed.
"""
from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

from jaxlite.config import config

PLUGIN_SOURCE = Path(__file__).parent / "plugin_pkg" / "jaxlite_testplugin"


def write_distribution(folder: Path, entry_points: dict[str, str]) -> Path:
    """An installed `jaxlite-testplugin` distribution in `folder`; returns `folder`."""
    shutil.copytree(PLUGIN_SOURCE, folder / "jaxlite_testplugin", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    info = folder / "jaxlite_testplugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: jaxlite-testplugin\nVersion: 0.1\n")
    lines = ["[jaxlite.backends]"] + [f"{name} = {target}" for name, target in
                                      entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture
def plugin_distribution():
    """`write_distribution`, for tests that install the plugin in another process."""
    return write_distribution


@pytest.fixture
def install_plugin(tmp_path, monkeypatch):
    def install(entry_points: dict[str, str]) -> Path:
        folder = write_distribution(tmp_path, entry_points)
        monkeypatch.syspath_prepend(str(folder))
        importlib.invalidate_caches()
        return folder
    return install


@pytest.fixture
def platforms_by_priority():
    """jax_platforms cleared for a test that chooses platforms itself, whatever
    JAXLITE_PLATFORMS asks of the run (benchmarks/gpu_check.sh asks for the GPU): the
    default is then the registry's by priority (a GPU first where one starts). Updated,
    not overridden, since such tests update it themselves."""
    previous = config.read("jax_platforms")
    config.update("jax_platforms", "")
    try:
        yield
    finally:
        config.update("jax_platforms", previous)
