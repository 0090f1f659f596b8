"""`python -m jaxlite.run script.py [args]`: run a program written for JAX on jaxlite.

Installs the import hook (`jaxlite.install_as_jax`) and runs the script as `__main__` with
`sys.argv` set to `[script.py, args...]`; `python -m jaxlite.run -m module [args]` runs a
module instead (for example `-m pytest tests/` to run a library's test suite on jaxlite),
and `-c "code"` a string of code, as `python` does.
"""
from __future__ import annotations

import os.path
import runpy
import sys

from jaxlite.compat import install_as_jax

USAGE = "usage: python -m jaxlite.run (script.py | -m module | -c code) [args ...]"


def main(argv: list[str]) -> None:
    """Run `argv` (a script path or `-m module`, then its arguments) under the hook."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        raise SystemExit(0 if argv else 2)
    if argv[0] in ("-m", "-c") and len(argv) < 2:
        print(f"{USAGE}\nArgument expected for the {argv[0]} option", file=sys.stderr)
        raise SystemExit(2)
    if argv[0] not in ("-m", "-c") and not os.path.isfile(argv[0]):
        print(f"python -m jaxlite.run: can't open file {argv[0]!r}: no such file",
              file=sys.stderr)
        raise SystemExit(2)
    install_as_jax()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        sys.path.insert(0, "")
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = list(argv)
        sys.path.insert(0, _script_dir(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


def _script_dir(path: str) -> str:
    # As `python script.py` does, the script's folder comes first on sys.path.
    return os.path.dirname(os.path.abspath(path))


if __name__ == "__main__":
    main(sys.argv[1:])
