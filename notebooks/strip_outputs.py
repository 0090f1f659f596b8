"""Remove outputs from the notebooks before committing them.

    python notebooks/strip_outputs.py            # strip every notebook in this folder
    python notebooks/strip_outputs.py a.ipynb    # strip the ones named

The notebooks live in git without outputs (tests/test_notebooks.py checks it): outputs are
large, differ from machine to machine and would make every re-run a diff. This clears each
code cell's outputs and execution count and the run-time metadata Jupyter adds (per cell, and
the kernel's version details in the notebook's language_info), and writes the file back as Jupyter does (one-space indentation, sorted keys), so stripping is idempotent.
"""
import json
import sys
from pathlib import Path

# Cell metadata Jupyter records while running; nothing a reader needs.
RUN_TIME_METADATA = ("execution", "collapsed", "scrolled")


def strip(path: Path) -> bool:
    """Strip one notebook in place; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    notebook = json.loads(text)
    language = notebook["metadata"].get("language_info")
    if language:
        notebook["metadata"]["language_info"] = {"name": language.get("name", "python")}
    for cell in notebook["cells"]:
        for key in RUN_TIME_METADATA:
            cell.get("metadata", {}).pop(key, None)
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    stripped = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if stripped != text:
        path.write_text(stripped, encoding="utf-8")
    return stripped != text


def main(paths: list[str]) -> None:
    notebooks = [Path(p) for p in paths] or sorted(Path(__file__).parent.glob("*.ipynb"))
    for path in notebooks:
        print(f"{path}: {'stripped' if strip(path) else 'already clean'}")


if __name__ == "__main__":
    main(sys.argv[1:])
