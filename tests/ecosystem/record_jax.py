"""Record what each script in `scripts/` prints under real JAX 0.10.2.

    /tmp/jaxvenv/bin/python tests/ecosystem/record_jax.py [name ...]

The venv must have jax 0.10.2 and the libraries the scripts use; each script prints one
JSON line, written to `expected/<name>.json`.
"""
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> None:
    scripts = sorted((HERE / "scripts").glob("*.py"))
    for script in scripts:
        if names and script.stem not in names:
            continue
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             check=True, timeout=1800).stdout
        result = json.loads(out.strip().splitlines()[-1])
        (HERE / "expected" / f"{script.stem}.json").write_text(json.dumps(result, indent=1) + "\n")
        print(script.stem, "recorded")


if __name__ == "__main__":
    main(sys.argv[1:])
