"""Imports follow the direction recorded in docs/architecture.md.

Each module of jaxlite belongs to a layer; a module may import only from the layers listed
for its own. Function-local imports (a way to hide cycles) are not allowed either.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "jaxlite"

LEAF = {"jaxlite.config", "jaxlite._jax_options", "jaxlite.errors", "jaxlite.tree_util",
        "jaxlite.version", "jaxlite.monitoring",
        "jaxlite.pytree", "jaxlite.pytree.treedef", "jaxlite.pytree.registry",
        "jaxlite.pytree.paths"}
LIBRARIES = ("numpy", "random", "nn", "scipy", "ops", "image", "example_libraries")
PACKAGES = ("core", "interpreters", "lax", "xla", "backends", "runtime", "transforms")
# Public faces of JAX modules that live inside a package but sit at the top: they gather
# names from every layer (`jax.interpreters.mlir` reaches the backends, for example).
PUBLIC_FACES = {"jaxlite.interpreters.mlir", "jaxlite.interpreters.partial_eval",
                "jaxlite.interpreters.pxla", "jaxlite.interpreters.xla"}
# Top-layer packages that are not faces of JAX modules: developer tools over all of jaxlite.
TOP_PACKAGES = ("tools",)

# layer -> layers it may import from (itself included)
ALLOWED = {
    "leaf": {"leaf"},
    "core": {"leaf", "core"},
    "interpreters": {"leaf", "core", "interpreters", "xla"},
    "lax": {"leaf", "core", "interpreters", "lax", "xla"},
    "xla": {"leaf", "core.dtypes", "xla"},
    "backends": {"leaf", "core.dtypes", "xla", "backends"},
    "runtime": {"leaf", "core", "interpreters", "lax", "xla", "backends", "runtime"},
    "transforms": {"leaf", "core", "interpreters", "lax", "xla", "backends", "runtime",
                   "transforms"},
    "library": {"leaf", "core", "lax", "library", "runtime", "transforms"},
    "top": {"leaf", "core", "interpreters", "lax", "library", "xla", "backends", "runtime",
            "transforms", "top"},
}


def layer_of(module: str) -> str:
    if module in LEAF:
        return "leaf"
    if module in PUBLIC_FACES:
        return "top"
    parts = module.split(".")
    if len(parts) < 2:
        return "top"
    package = parts[1]
    if module == "jaxlite.core.dtypes":
        return "core.dtypes"
    if package in PACKAGES:
        return package
    if package in LIBRARIES:
        return "library"
    if package in TOP_PACKAGES:
        return "top"
    return "top"


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from jaxlite.core import dtypes` imports the module jaxlite.core.dtypes.
            submodules = [f"{node.module}.{alias.name}" for alias in node.names
                          if _is_module(f"{node.module}.{alias.name}")]
            found.extend((m, node.lineno) for m in submodules)
            if not submodules or len(submodules) < len(node.names):
                found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return [(m, line) for m, line in found if m == "jaxlite" or m.startswith("jaxlite.")]


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


MODULES = sorted(ROOT.rglob("*.py"))


def _allowed(source_layer: str, target: str) -> bool:
    target_layer = layer_of(target)
    allowed = ALLOWED["core" if source_layer == "core.dtypes" else source_layer]
    if target_layer == "core.dtypes":
        return "core" in allowed or "core.dtypes" in allowed
    return target_layer in allowed or target == "jaxlite"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_imports_follow_layers(path):
    source = module_name(path)
    source_layer = layer_of(source)
    tree = ast.parse(path.read_text())
    bad = [(m, line) for m, line in imports_of(tree)
           if m != "jaxlite" and not _allowed(source_layer, m)]
    assert not bad, f"{source} ({source_layer}) imports against the layering: {bad}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_no_function_local_imports(path):
    tree = ast.parse(path.read_text())
    local = [node.lineno for fn in ast.walk(tree)
             if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
             for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not local, f"{path.name}: function-local imports at lines {local}"


def test_layers_cover_known_packages():
    assert layer_of("jaxlite.lax.arithmetic") == "lax"
    assert layer_of("jaxlite.numpy._ufuncs") == "library"
    assert layer_of("jaxlite.tree_util") == "leaf"
    assert _allowed("xla", "jaxlite.core.dtypes")
    assert not _allowed("xla", "jaxlite.core.trace")
    assert not _allowed("core", "jaxlite.lax")
    assert not _allowed("lax", "jaxlite.runtime.dispatch")
    assert not _allowed("transforms", "jaxlite.numpy")
    assert _allowed("library", "jaxlite.transforms.autodiff")
    assert _allowed("top", "jaxlite.lax")
    assert layer_of("jaxlite.tools.fuzz.engine") == "top"
    assert not _allowed("library", "jaxlite.tools.fuzz")
