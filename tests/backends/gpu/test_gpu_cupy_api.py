"""jaxlite's calls into CuPy, and the test stand-in fake_cupy, checked against the real
CuPy's signatures (CuPy imports without a GPU; only its calls need one). A call the
fake accepts and CuPy refuses would pass every test here and fail on the first GPU:
- every call the gpu backend writes as `xp.f(...)`, `self.xp.f(...)` or `cupy.f(...)`
  binds to CuPy's `f` (its positional count and keyword names), and so do the calls
  made through names (`cupyx.scipy.linalg`'s, `cupy.fft`'s);
- fake_cupy's own functions and classes take CuPy's parameters, by name and kind.
Skipped with the reason where CuPy does not import."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import fake_cupy
import pytest

import jaxlite.backends.gpu as gpu_package
import jaxlite.runtime as runtime_package

try:
    cupy = importlib.import_module("cupy")
except ImportError as error:  # (CuPy is optional: the `cuda` extra)
    cupy, WHY = None, f"CuPy does not import here ({error}): no real signatures to compare"
pytestmark = pytest.mark.skipif(cupy is None, reason=WHY if cupy is None else "")

# the names the gpu backend gives CuPy and its parts -> where they are in CuPy
_ROOTS = {"xp": [], "cupy": [], "nvrtc": ["cuda", "nvrtc"]}


def _parameter(text: str) -> str:
    """'str code=None' (Cython's docstring form) -> 'code=None'."""
    text = text.strip()
    typed = re.match(r"[A-Za-z_][\w.\[\]]*\s+(\**[A-Za-z_]\w*.*)\Z", text, re.S)
    return typed.group(1) if typed and not text.startswith("*") else text


def _split(params: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, char in enumerate(params):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(params[start:k])
            start = k + 1
    return parts + [params[start:]]


def signature(obj) -> inspect.Signature:
    """`inspect.signature`, else the one the first docstring line of a Cython function
    or class spells ("RawModule(str code=None, *, str path=None, ...)"), `self` left out."""
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        pass
    line = (obj.__doc__ or "").strip().splitlines()[0]
    params = line[line.index("(") + 1:line.rindex(")")]
    names = [p for p in (_parameter(p) for p in _split(params)) if p and p != "self"]
    tree = ast.parse(f"def f({', '.join(names)}): pass")
    namespace: dict = {}
    exec(compile(ast.Module([_without_defaults(tree.body[0])], []), "<sig>", "exec"),
         namespace)
    return inspect.signature(namespace["f"])


def _without_defaults(function: ast.FunctionDef) -> ast.FunctionDef:
    """Defaults as None: only which parameters have one matters here."""
    arguments = function.args
    arguments.defaults = [ast.Constant(None) for _ in arguments.defaults]
    arguments.kw_defaults = [None if d is None else ast.Constant(None)
                             for d in arguments.kw_defaults]
    ast.fix_missing_locations(function)
    return function


def _dotted(node: ast.expr) -> list[str] | None:
    """`xp.linalg.svd` -> ["xp", "linalg", "svd"]; `self.xp.f` -> ["xp", "f"]."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    else:
        return None
    parts.reverse()
    # `self.xp.f`, `launcher.xp.f`, `value.launcher.xp.f` -> ["xp", "f"]
    return parts[parts.index("xp"):] if "xp" in parts else parts


# The gpu backend's modules, and the runtime's that run eager work and DLPack on `xp`.
_CALLING_CUPY = sorted(Path(gpu_package.__file__).parent.glob("*.py")) + sorted(
    Path(runtime_package.__file__).parent.glob("device_*.py"))


def backend_calls() -> list[tuple[str, str, int, list[str]]]:
    """(where, cupy name, positional count, keywords) of each call on CuPy that the
    gpu backend writes out (calls with *args or **kwargs left out)."""
    calls = []
    for path in _CALLING_CUPY:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            parts = _dotted(node.func)
            if not parts or parts[0] not in _ROOTS or len(parts) < 2:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or \
                    any(k.arg is None for k in node.keywords):
                continue
            calls.append((f"{path.name}:{node.lineno}",
                          ".".join(_ROOTS[parts[0]] + parts[1:]),
                          len(node.args), [k.arg for k in node.keywords]))
    return calls


def _real(name: str):
    obj = cupy
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _binds(sig: inspect.Signature, positional: int, keywords: list[str]) -> str:
    try:
        sig.bind(*[None] * positional, **dict.fromkeys(keywords))
    except TypeError as error:
        return str(error)
    return ""


def test_the_backend_calls_cupy_as_cupy_defines_its_functions():
    calls = backend_calls()
    names = {name for _, name, _, _ in calls}
    # the calls the brief of this check names are among those found
    assert {"argsort", "RawModule", "cuda.Stream", "asnumpy", "linalg.svd", "linalg.eigh",
            "linalg.qr", "cuda.nvrtc.compileProgram"} <= names, names
    wrong = []
    for where, name, positional, keywords in calls:
        try:
            target = _real(name)
        except AttributeError:
            wrong.append(f"{where}: cupy has no {name}")
            continue
        if not callable(target):
            continue
        if type(target).__name__ == "ufunc":
            continue  # (CuPy's ufuncs take numpy's ufunc arguments)
        problem = _binds(signature(target), positional, keywords)
        if problem:
            wrong.append(f"{where}: cupy.{name}{(positional, keywords)}: {problem}")
    assert not wrong, "\n".join(wrong)


def _source_signature(module: str, function: str) -> inspect.Signature:
    """A function's signature read from its module's source, for modules that need a
    GPU library to import (cupyx.scipy.linalg loads cuBLAS)."""
    try:
        return inspect.signature(getattr(importlib.import_module(module), function))
    except ImportError:
        pass
    root = Path(importlib.util.find_spec(module.split(".")[0]).origin).parent
    for path in root.joinpath(*module.split(".")[1:]).rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name == function:
                namespace: dict = {}
                node.decorator_list, node.body = [], [ast.Pass()]
                exec(compile(ast.Module([_without_defaults(node)], []), "<sig>", "exec"),
                     namespace)
                return inspect.signature(namespace[function])
    raise LookupError(f"{module}.{function} not found in CuPy's sources")


def test_the_calls_made_through_names_exist_in_cupy():
    solve = _source_signature("cupyx.scipy.linalg", "solve_triangular")
    assert not _binds(solve, 2, ["trans", "lower", "unit_diagonal"])
    assert not _binds(_source_signature("cupyx.scipy.linalg", "lu_factor"), 1, [])
    library_calls = importlib.import_module("jaxlite.backends.gpu.library_calls")
    for name in library_calls._TRANSFORMS.values():  # getattr(xp.fft, name)(x, s=, axes=)
        assert not _binds(signature(getattr(cupy.fft, name)), 1, ["s", "axes"]), name
    # argsort's kind="stable": CuPy's sort is always stable, and takes the keyword
    assert "kind" in signature(cupy.argsort).parameters


def _refused_by_cupy(fake: inspect.Signature, real: inspect.Signature) -> list[str]:
    """How calls the fake accepts could fail on CuPy: a parameter CuPy lacks or takes
    in another way (positionally, by keyword, in another place), one CuPy requires and
    the fake does not, or a default CuPy has not. Fewer optional parameters is fine: a
    test then fails loudly instead of passing."""
    real_params = {p.name: p for p in real.parameters.values() if p.name != "self"}
    fake_params = [p for p in fake.parameters.values() if p.name != "self"]
    problems = []
    real_order = list(real_params)
    for k, p in enumerate(fake_params):
        q = real_params.get(p.name)
        if q is None:
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                problems.append(f"{p.name}: not a parameter of CuPy's")
            elif not any(r.kind == p.kind for r in real_params.values()):
                problems.append(f"{p.name}: CuPy takes no {p.kind.description}")
            continue
        if p.kind != q.kind:
            problems.append(f"{p.name}: {p.kind.description}, CuPy's is "
                            f"{q.kind.description}")
        if p.kind != p.KEYWORD_ONLY and real_order.index(p.name) != k:
            problems.append(f"{p.name}: position {k}, CuPy's {real_order.index(p.name)}")
        if q.default is q.empty and p.default is not p.empty:
            problems.append(f"{p.name}: has a default, CuPy requires it")
    fake_names = {p.name for p in fake_params}
    problems += [f"{name}: required by CuPy, not taken" for name, q in real_params.items()
                 if q.default is q.empty and q.kind in (q.POSITIONAL_OR_KEYWORD,
                                                        q.POSITIONAL_ONLY, q.KEYWORD_ONLY)
                 and name not in fake_names]
    return problems


FAKE_AND_REAL = {
    "asarray": (fake_cupy.asarray, "asarray"),
    "asnumpy": (fake_cupy.asnumpy, "asnumpy"),
    "RawModule": (fake_cupy.RawModule, "RawModule"),
    "RawModule.get_function": (fake_cupy.RawModule.get_function, "RawModule.get_function"),
    "RawKernel.__call__": (fake_cupy._Function.__call__, "RawKernel.__call__"),
    "cuda.Stream": (fake_cupy.cuda.Stream, "cuda.Stream"),
    "cuda.Stream.record": (fake_cupy.cuda.Stream.record, "cuda.Stream.record"),
    "cuda.Stream.synchronize": (fake_cupy.cuda.Stream.synchronize,
                                "cuda.Stream.synchronize"),
    "cuda.Event.synchronize": (fake_cupy._Event.synchronize, "cuda.Event.synchronize"),
    "cuda.Device": (fake_cupy.cuda.Device, "cuda.Device"),
    **{f"cuda.nvrtc.{n}": (getattr(fake_cupy.cuda.nvrtc, n), f"cuda.nvrtc.{n}")
       for n in ("createProgram", "compileProgram", "getCUBIN", "destroyProgram",
                 "getVersion")},
}


@pytest.mark.parametrize("name", sorted(FAKE_AND_REAL))
def test_the_fake_takes_cupys_parameters(name):
    fake, real_name = FAKE_AND_REAL[name]
    real = signature(_real(real_name))
    fake_signature = signature(fake.__init__ if inspect.isclass(fake) else fake)
    problems = _refused_by_cupy(fake_signature, real)
    assert not problems, (fake_signature, real, problems)
