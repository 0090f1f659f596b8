"""The notebooks in notebooks/: committed without outputs, and each one runs from top to bottom.

Running them needs the notebook tools of the `test` extra (nbclient, ipykernel, matplotlib,
scikit-learn); without them those tests skip and say what to install. The notebooks assert
their own results (finite-difference checks, a test accuracy), so a wrong number fails here.
"""
import importlib.util
import json
from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = ["autodiff", "compiler", "performance", "quickstart", "training"]
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
TOOLS = ["nbclient", "nbformat", "ipykernel", "matplotlib", "sklearn"]
CELL_TIMEOUT_S = 300


def test_the_notebooks_are_all_there():
    assert [path.stem for path in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code_cells, "a notebook without code"
    for index, cell in enumerate(code_cells):
        assert cell["outputs"] == [], f"code cell {index} has outputs: run notebooks/strip_outputs.py"
        assert cell["execution_count"] is None, f"code cell {index} has an execution count"
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"


def _missing_tools() -> list[str]:
    return [name for name in TOOLS if importlib.util.find_spec(name) is None]


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_without_errors(path, monkeypatch):
    missing = _missing_tools()
    if missing:
        pytest.skip(f"running the notebooks needs {', '.join(missing)}: "
                    "pip install -e '.[test]' (or the 'notebooks' extra)")
    import nbformat
    from nbclient import NotebookClient

    # The kernel inherits this environment: plots render off-screen, and conftest's
    # PYTHONPATH and compilation-cache folder point it at this checkout and a scratch cache.
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name="python3", timeout=CELL_TIMEOUT_S,
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    ran = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in ran)
