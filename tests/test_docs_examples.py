"""The examples in docs/getting_started.md, sharp_bits.md and extending.md run and print what the pages say.

Every fenced ```python block of those pages is executed in a fresh namespace, in page order,
with its printed output captured (those of extending.md in a fresh interpreter). When the next fence is a ```text block, the captured output
must equal it (trailing spaces aside). Blocks meant to be read but not run (a script that
needs the import hook, a shell command) use the fence ```py or ```sh, which are not run.
"""
from __future__ import annotations

import contextlib
import io
import pathlib
import re
import subprocess
import sys
import warnings

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
# Each page, with the least number of examples whose output it states.
PAGES = {"getting_started.md": 5, "sharp_bits.md": 10, "extending.md": 1}
# Pages whose examples change process-wide state that cannot be undone (extending.md
# registers a backend): they run in a fresh interpreter.
IN_SUBPROCESS = {"extending.md"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def examples(page: str) -> list[tuple[str, str, str | None]]:
    """The page's python blocks as (id, code, expected output or None)."""
    blocks = [(m.group(1), m.group(2), m.start()) for m in FENCE.finditer(
        (DOCS / page).read_text())]
    text = (DOCS / page).read_text()
    found = []
    for index, (language, body, start) in enumerate(blocks):
        if language != "python":
            continue
        expected = None
        if index + 1 < len(blocks) and blocks[index + 1][0] == "text":
            expected = blocks[index + 1][1]
        line = text.count("\n", 0, start) + 1
        found.append((f"{page}:{line}", body, expected))
    return found


def _normalize(output: str) -> str:
    return "\n".join(line.rstrip() for line in output.strip().splitlines())


CASES = [case for page in PAGES for case in examples(page)]


def test_pages_have_examples():
    # A renamed fence or page must not leave this test with nothing to check.
    for page, least in PAGES.items():
        checked = [case for case in examples(page) if case[2] is not None]
        assert len(checked) >= least, page


@pytest.fixture(autouse=True)
def restore_config():
    # An example may set an option; later tests must see the values from before it.
    from jaxlite.config import config
    before = config.values
    yield
    for name, value in before.items():
        if config.read(name) != value:
            config.update(name, value)


@pytest.mark.parametrize("name, code, expected", CASES, ids=[c[0] for c in CASES])
def test_example(name, code, expected):
    if name.split(":")[0] in IN_SUBPROCESS:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=DOCS.parent)
        assert done.returncode == 0, done.stderr
        if expected is not None:
            assert _normalize(done.stdout) == _normalize(expected), name
        return
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, name, "exec"), {"__name__": "__docs_example__"})
    if expected is not None:
        assert _normalize(printed.getvalue()) == _normalize(expected), name
