"""Build the example FFI handlers with the machine's compiler.

`build_rms_norm(folder)` compiles rms_norm.cc (C++17, XLA's `xla/ffi/api/ffi.h`) and
`build_scale(folder)` compiles scale.c (plain C, no headers needed); each returns the
shared library's path, or raises `Unavailable` saying why it cannot (no compiler, no
headers).
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Unavailable(RuntimeError):
    """The machine cannot build an example (the reason is the message)."""


def include_dir() -> str:
    """XLA's FFI headers: jaxlite.ffi.include_dir() (jaxlib's), else a jaxlib found in a
    virtual environment under /tmp (where this repository's oracle JAX lives)."""
    try:
        import jaxlite.ffi
        return jaxlite.ffi.include_dir()
    except (ImportError, RuntimeError):
        pass
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for pattern in (f"/tmp/*/lib/{version}/site-packages/jaxlib/include",
                    "/tmp/*/lib/python3.*/site-packages/jaxlib/include"):
        for folder in sorted(glob.glob(pattern)):
            if os.path.isfile(os.path.join(folder, "xla", "ffi", "api", "ffi.h")):
                return folder
    raise Unavailable("no XLA FFI headers (install jaxlib: jaxlib/include/xla/ffi/api/ffi.h)")


def _compiler(names: tuple[str, ...]) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise Unavailable(f"no compiler found (looked for {', '.join(names)})")


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise Unavailable(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")


def build_rms_norm(folder: str | Path) -> Path:
    """librms_norm.so in `folder`, from rms_norm.cc."""
    compiler = _compiler(("g++", "c++", "clang++"))
    output = Path(folder) / "librms_norm.so"
    _run([compiler, "-std=c++17", "-O2", "-w", "-shared", "-fPIC", f"-I{include_dir()}",
          str(HERE / "rms_norm.cc"), "-o", str(output)])
    return output


def build_scale(folder: str | Path) -> Path:
    """libscale.so in `folder`, from scale.c."""
    compiler = _compiler(("cc", "gcc", "clang"))
    output = Path(folder) / "libscale.so"
    _run([compiler, "-O2", "-shared", "-fPIC", str(HERE / "scale.c"), "-o", str(output)])
    return output


if __name__ == "__main__":
    print(build_rms_norm(sys.argv[1] if len(sys.argv) > 1 else "."))
