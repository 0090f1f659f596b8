"""Every public module and name of JAX 0.10.2 exists in jaxlite, at the same path, and every
function takes JAX's parameters.

The lists in `tests/data/api/public/` were written by `tools/gen_public_api.py` with real JAX
(one file per module: name, kind, signature, parameters), so the project stands alone.
`jax.X.Y` is looked up as `jaxlite.X.Y`, as the import hook (`jaxlite.install_as_jax`)
resolves it. A missing name fails here unless `DEFERRED` gives it to another open issue.
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from jaxlite.compat.hook import _target_of

DATA = Path(__file__).parent / "data" / "api" / "public"

# "jax.module.name" or "jax.module" (the whole module) -> the open issue that provides it.
DEFERRED: dict[str, str] = {
    "jax.export": "issue 15 (portable programs): jax.export serializes jaxlite programs",
    "jax.ffi": "issue 15 (portable programs): foreign function calls from compiled code",
}


def read_list(path: Path) -> list[tuple[str, str]]:
    """(name, kind) for each line of one list file."""
    return [(row[0], row[1]) for row in _rows(path)]


def _rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()
            if line and not line.startswith("#")]


_KIND = {"POSITIONAL_ONLY": "po", "POSITIONAL_OR_KEYWORD": "pk", "VAR_POSITIONAL": "vp",
         "KEYWORD_ONLY": "ko", "VAR_KEYWORD": "vk"}


def _jax_parameters(row: list[str]) -> list[tuple[str, str, bool]] | None:
    """(name, kind, has default) per parameter of a function row; None if unreadable."""
    if len(row) < 3 or not row[2]:
        return None
    items = row[3].split(",") if len(row) > 3 and row[3] else []
    return [(i.split(":")[0], i.split(":")[1].rstrip("="), i.endswith("=")) for i in items]


def _our_parameters(fn) -> list[tuple[str, str, bool]] | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return [(p.name, _KIND[p.kind.name], p.default is not inspect.Parameter.empty)
            for p in params]


def signature_problems(jax_params, our_params) -> list[str]:
    """Ways in which a call written for JAX's signature could fail on ours: a parameter
    missing, taken in another position or only by keyword, or required where JAX's has a
    default; or a parameter of ours that JAX's callers never pass and that has no default."""
    if [kind for _, kind, _ in jax_params] == ["vp", "vk"]:
        return []  # JAX's is a forwarding wrapper: nothing to compare
    ours = {name: (kind, default) for name, kind, default in our_params}
    our_kinds = {kind for _, kind, _ in our_params}
    problems = []
    jax_positional = [(n, k) for n, k, _ in jax_params if k in ("po", "pk")]
    our_positional = [n for n, k, _ in our_params if k in ("po", "pk")]
    # Positional-only parameters are matched by position; their names are free.
    renamed = {}
    for i, (name, kind) in enumerate(jax_positional):
        if kind == "po" and i < len(our_positional):
            renamed[name] = our_positional[i]
    wanted = [renamed.get(n, n) for n, _ in jax_positional]
    if our_positional[:len(wanted)] != wanted:
        problems.append(f"positional parameters {our_positional}, JAX's "
                        f"{[n for n, _ in jax_positional]}")
    jax_params = [(renamed.get(n, n), k, d) for n, k, d in jax_params]
    for name, kind, default in jax_params:
        if kind in ("vp", "vk"):
            if kind not in our_kinds:
                problems.append("no *args" if kind == "vp" else "no **kwargs")
        elif name not in ours:
            if not (kind == "ko" and "vk" in our_kinds):
                problems.append(f"no parameter {name!r}")
        else:
            our_kind, our_default = ours[name]
            if (kind == "pk" and our_kind != "pk" or kind == "ko" and our_kind not in ("ko", "pk")
                    or kind == "po" and our_kind not in ("po", "pk")):
                problems.append(f"{name!r} is {our_kind}, JAX's is {kind}")
            if default and not our_default:
                problems.append(f"{name!r} needs a default, as JAX's has")
    jax_names = {name for name, _, _ in jax_params}
    problems += [f"extra required parameter {name!r}" for name, kind, default in our_params
                 if name not in jax_names and kind not in ("vp", "vk") and not default]
    return problems


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


@pytest.mark.parametrize("path", MODULE_FILES, ids=lambda p: p.stem)
def test_functions_take_jax_parameters(path):
    module_name = path.stem
    if module_name in DEFERRED:
        return
    module = importlib.import_module(jaxlite_path(module_name))
    wrong = []
    for row in _rows(path):
        jax_params = _jax_parameters(row) if row[1] == "function" else None
        if jax_params is None or not hasattr(module, row[0]):
            continue
        ours = _our_parameters(getattr(module, row[0]))
        problems = [] if ours is None else signature_problems(jax_params, ours)
        if problems:
            wrong.append(f"{row[0]}: {'; '.join(problems)}")
    assert not wrong, f"{jaxlite_path(module_name)}: " + "\n".join(wrong)


def test_deferred_entries_name_real_names():
    known = {path.stem for path in MODULE_FILES}
    known |= {f"{path.stem}.{name}" for path in MODULE_FILES for name, _ in read_list(path)}
    unknown = [entry for entry in DEFERRED if entry not in known]
    assert not unknown, f"DEFERRED lists names JAX does not have: {unknown}"
