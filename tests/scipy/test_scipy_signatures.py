"""The functions and classes of jaxlite.scipy's linalg, optimize, fft, signal, integrate,
interpolate, ndimage, cluster.vq, sparse.linalg and spatial.transform, and of
jaxlite.lax.linalg, take JAX 0.10.2's parameters: names, kinds (positional or keyword
only, *args) and defaults, read from the signatures in tests/data/api/public/ (annotations
are not compared)."""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

DATA = Path(__file__).parents[1] / "data" / "api" / "public"
MODULES = ["jax.scipy.linalg", "jax.scipy.optimize", "jax.scipy.fft", "jax.scipy.signal",
           "jax.scipy.integrate", "jax.scipy.interpolate", "jax.scipy.ndimage",
           "jax.scipy.cluster.vq", "jax.scipy.sparse.linalg", "jax.scipy.spatial.transform",
           "jax.lax.linalg"]
# Classes whose JAX signature is that of a NamedTuple's fields or of enum.Enum itself.
FIELD_SIGNATURES = {"OptimizeResults", "Rotation", "Slerp"}


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _default_of(part: str) -> str | None:
    """The default's text of one parameter ('name: annotation = default' or 'name=default')."""
    depth, quote = 0, None
    for i, ch in enumerate(part):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "=" and depth == 0:
            return part[i + 1:].strip()
    return None


def jax_parameters(signature: str) -> list[tuple[str, str, str | None]]:
    """(name, kind, default text) of each parameter of a signature string."""
    inner = signature.strip()
    inner = inner[1:inner.rindex(")")] if "->" in inner else inner[1:-1]
    result, kind = [], "POSITIONAL_OR_KEYWORD"
    for part in _split_top_level(inner):
        if part == "*":
            kind = "KEYWORD_ONLY"
            continue
        if part == "/":
            result = [(n, "POSITIONAL_ONLY", d) for n, _, d in result]
            continue
        name = part.split(":")[0].split("=")[0].strip()
        if name.startswith("**"):
            result.append((name[2:], "VAR_KEYWORD", None))
        elif name.startswith("*"):
            result.append((name[1:], "VAR_POSITIONAL", None))
            kind = "KEYWORD_ONLY"
        else:
            result.append((name, kind, _default_of(part)))
    return result


def our_parameters(obj: object) -> list[tuple[str, str, str | None]]:
    params = inspect.signature(obj).parameters.values()
    return [(p.name, p.kind.name,
              None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in params]


def _rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for module in MODULES:
        for line in (DATA / f"{module}.txt").read_text().splitlines():
            if line and not line.startswith("#"):
                name, kind, *rest = line.split("\t")
                if kind in ("function", "class") and rest:
                    rows.append((module, name, kind, rest[0]))
    return rows


ROWS = _rows()


@pytest.mark.parametrize("module,name,kind,signature", ROWS,
                         ids=[f"{m}.{n}" for m, n, _, _ in ROWS])
def test_parameters_are_jax_parameters(module, name, kind, signature):
    target = importlib.import_module(module.replace("jax", "jaxlite", 1))
    obj = getattr(target, name)
    if kind == "class" and (name in FIELD_SIGNATURES or signature.startswith("(value, ")):
        if name in FIELD_SIGNATURES:
            assert list(obj._fields) == [p[0] for p in jax_parameters(signature)]
        return
    expected = jax_parameters(signature)
    ours = our_parameters(obj)
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in expected]
    for (n, _, ours_default), (_, _, jax_default) in zip(ours, expected):
        assert ours_default == jax_default, f"{name}: default of {n}"
