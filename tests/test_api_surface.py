"""Every public module and name of JAX 0.10.2 exists in jaxlite, at the same path.

The lists in `tests/data/api/public/` were written by `tools/gen_public_api.py` with real JAX
(one file per module: name, kind, signature), so the project stands alone. `jax.X.Y` is
looked up as `jaxlite.X.Y`, as the import hook (`jaxlite.install_as_jax`) resolves it. A
missing name fails here unless `DEFERRED` gives it to another open issue.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from jaxlite.compat.hook import _target_of

DATA = Path(__file__).parent / "data" / "api" / "public"

# "jax.module.name" or "jax.module" (the whole module) -> the open issue that provides it.
DEFERRED: dict[str, str] = {}


def read_list(path: Path) -> list[tuple[str, str]]:
    """(name, kind) for each line of one list file."""
    rows = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, kind = line.split("\t")[:2]
            rows.append((name, kind))
    return rows


def jaxlite_path(module: str) -> str:
    return "jaxlite" if module == "jax" else _target_of(module)


MODULE_FILES = sorted(DATA.glob("*.txt"))


def test_lists_are_present():
    assert len(MODULE_FILES) > 100, "tests/data/api/public lost its lists"


@pytest.mark.parametrize("path", MODULE_FILES, ids=lambda p: p.stem)
def test_module_has_every_name(path):
    module_name = path.stem
    if module_name in DEFERRED:
        return
    module = importlib.import_module(jaxlite_path(module_name))
    missing = [name for name, _ in read_list(path)
               if not hasattr(module, name) and f"{module_name}.{name}" not in DEFERRED]
    assert not missing, (f"{jaxlite_path(module_name)} lacks {len(missing)} of JAX's names: "
                         f"{missing}")


@pytest.mark.parametrize("path", MODULE_FILES, ids=lambda p: p.stem)
def test_classes_are_classes_and_functions_callable(path):
    module_name = path.stem
    if module_name in DEFERRED:
        return
    module = importlib.import_module(jaxlite_path(module_name))
    wrong = []
    for name, kind in read_list(path):
        if not hasattr(module, name):
            continue
        value = getattr(module, name)
        if kind == "class" and not isinstance(value, type):
            wrong.append(f"{name} should be a class")
        elif kind == "function" and not callable(value):
            wrong.append(f"{name} should be callable")
        elif kind == "module" and not hasattr(value, "__name__"):
            wrong.append(f"{name} should be a module")
    assert not wrong, f"{jaxlite_path(module_name)}: {wrong}"


def test_deferred_entries_name_real_names():
    known = {path.stem for path in MODULE_FILES}
    known |= {f"{path.stem}.{name}" for path in MODULE_FILES for name, _ in read_list(path)}
    unknown = [entry for entry in DEFERRED if entry not in known]
    assert not unknown, f"DEFERRED lists names JAX does not have: {unknown}"
