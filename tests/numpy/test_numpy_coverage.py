"""Coverage of JAX 0.10.2's numpy namespaces by jaxlite.numpy.

The lists in `tests/data/api/` are copies of the names `jax.numpy`, `jax.numpy.linalg` and
`jax.numpy.fft` export (measured with `dir()`), so the project stands alone. A name missing
from jaxlite fails here unless `OUT_OF_SCOPE` lists it with the reason; every tier-1, linalg
and fft function must also be exercised by a differential case or a named test file.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import jaxlite.numpy as jnp

import np_cases

DATA = Path(__file__).parent.parent / "data" / "api"

# name -> why jaxlite does not provide it (each is a conscious decision, not a gap).
OUT_OF_SCOPE: dict[str, str] = {}


def read_names(file_name: str) -> list[str]:
    """Names in one list file: the first word of each line, after a `class`/`const` tag."""
    names = []
    for line in (DATA / file_name).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split("\t")[0].split()
        names.append(words[-1])
    return names


def _namespace(module_path: str):
    return importlib.import_module(module_path)


@pytest.mark.parametrize("file_name,module_path", [
    ("api_jax_numpy.txt", "jaxlite.numpy"),
    ("api_jax_numpy_linalg.txt", "jaxlite.numpy.linalg"),
    ("api_jax_numpy_fft.txt", "jaxlite.numpy.fft"),
])
def test_every_exported_name_exists(file_name, module_path):
    namespace = _namespace(module_path)
    missing = [name for name in read_names(file_name)
               if not hasattr(namespace, name) and name not in OUT_OF_SCOPE]
    assert not missing, f"{module_path} lacks {len(missing)} names of JAX's: {missing}"


def test_tier1_names_are_all_present():
    missing = [name for name in read_names("api_jax_numpy_tier1.txt") if not hasattr(jnp, name)]
    assert not missing, f"tier-1 names missing: {missing}"


def test_out_of_scope_names_are_real_and_explained():
    every = set(read_names("api_jax_numpy.txt"))
    for name, reason in OUT_OF_SCOPE.items():
        assert name in every, f"{name} is not one of JAX's names"
        assert len(reason) > 20, f"{name}: give the reason it is out of scope"


def _tested_names() -> set[str]:
    """Names with a differential case, plus names a test file calls as `jnp.<name>(`."""
    names = {case.name for case in np_cases.load_cases()[0]}
    for path in Path(__file__).parent.glob("test_*.py"):
        text = path.read_text()
        names.update(name for name in read_names("api_jax_numpy.txt")
                     if f"jnp.{name}(" in text or f"jnp.{name}[" in text)
    return names


def test_tier1_functions_are_tested():
    tested = _tested_names()
    untested = [name for name in read_names("api_jax_numpy_tier1.txt")
                if callable(getattr(jnp, name, None)) and name not in tested
                and not isinstance(getattr(jnp, name), type)]
    assert not untested, f"tier-1 functions without a test: {untested}"
