"""Record real JAX's outputs for the cases of special_stats_cases.py (not a test; run by
hand, once per mode):

    cd tests/scipy && /tmp/jaxvenv/bin/python record_jax_special_stats.py x64 [PREFIX ...]
    cd tests/scipy && /tmp/jaxvenv/bin/python record_jax_special_stats.py x32 [PREFIX ...]

writes tests/data/scipy/special_stats_<mode>.npz (output leaves, key "<case id>|<i>") and
special_stats_<mode>.json (per case: dtypes and weak types of the leaves, or the
exception's type and message, or "hang" for a call JAX never returned from within 120 s).
With PREFIXes, only the cases whose ids start with one of them are recorded, and merged
into the existing files. Cases run in a child process that reports each result as it
goes; a child stuck in a case is killed and a fresh one continues after that case.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).parents[1] / "data" / "scipy"
HANG_SECONDS = 120


def child(mode: str, ids_file: str, scratch: str) -> None:
    """Run the cases listed in `ids_file` that `scratch` lacks, appending one JSON line
    per case to `scratch`."""
    import jax
    jax.config.update("jax_enable_x64", mode == "x64")
    import jax.scipy.special  # noqa: F401
    import jax.scipy.stats  # noqa: F401
    from special_stats_cases import all_cases

    wanted = json.loads(Path(ids_file).read_text())
    done = _done_ids(Path(scratch))
    cases = {case.id: case for case in all_cases()}
    with open(scratch, "a") as out:
        for case_id in wanted:
            if case_id in done:
                continue
            case = cases[case_id]
            # Written first, so that a case the parent kills is known to have hung.
            out.write(json.dumps({"id": case_id, "started": True}) + "\n")
            out.flush()
            entry: dict = {"id": case_id}
            try:
                leaves = jax.tree_util.tree_leaves(case.call(jax))
                entry["leaves"] = [_encode(np.asarray(leaf)) for leaf in leaves]
                entry["dtypes"] = [np.asarray(leaf).dtype.name for leaf in leaves]
                entry["weak"] = [bool(getattr(leaf, "weak_type", False)) for leaf in leaves]
            except Exception as error:  # noqa: BLE001 (the exception is the record)
                entry["error"] = type(error).__name__
                entry["message"] = str(error)[:300]
            out.write(json.dumps(entry) + "\n")
            out.flush()


def _done_ids(scratch: Path) -> set[str]:
    if not scratch.exists():
        return set()
    return {json.loads(line)["id"] for line in scratch.read_text().splitlines()
            if "started" not in json.loads(line)}


def _encode(value: np.ndarray) -> dict:
    """A leaf as JSON: real and imaginary parts as lists (nan and inf as JSON allows)."""
    if np.iscomplexobj(value):
        return {"real": value.real.tolist(), "imag": value.imag.tolist()}
    return {"real": value.tolist()}


def _decode(encoded: dict, dtype: str) -> np.ndarray:
    real = np.array(encoded["real"], dtype=np.float64 if dtype != "bool" else bool)
    if "imag" not in encoded:
        return real.astype(dtype)
    out = np.empty(real.shape, dtype)
    out.real, out.imag = real, np.array(encoded["imag"], np.float64)
    return out


def record(mode: str, prefixes: list[str]) -> None:
    from special_stats_cases import all_cases
    wanted = [c.id for c in all_cases() if mode in c.modes
              and (not prefixes or any(c.id.startswith(p) for p in prefixes))]
    scratch = OUT / f"special_stats_{mode}.jsonl"
    ids_file = OUT / f"special_stats_{mode}.ids.json"
    ids_file.write_text(json.dumps(wanted))
    hung: list[str] = []
    while not set(wanted) <= _done_ids(scratch) | set(hung):
        proc = subprocess.Popen([sys.executable, __file__, "child", mode, str(ids_file),
                                 str(scratch)])
        size = -1
        while proc.poll() is None:
            try:
                proc.wait(HANG_SECONDS)
            except subprocess.TimeoutExpired:
                now = scratch.stat().st_size if scratch.exists() else 0
                if now == size:  # no progress for HANG_SECONDS: a hanging case
                    proc.kill()
                    proc.wait()
                    break
                size = now
        lines = scratch.read_text().splitlines() if scratch.exists() else []
        last = json.loads(lines[-1]) if lines else {}
        if "started" not in last and proc.returncode != 0:
            raise RuntimeError(f"the recording child failed (exit code {proc.returncode})")
        if "started" in last:
            hung.append(last["id"])
            with open(scratch, "a") as out:
                out.write(json.dumps({"id": last["id"], "hang": True}) + "\n")
    _merge(mode, scratch)
    scratch.unlink()
    ids_file.unlink()
    print(f"{len(wanted)} cases recorded in {mode} mode ({len(hung)} hung)")


def _merge(mode: str, scratch: Path) -> None:
    """Fold the scratch lines into the recorded files (new entries replace old ones)."""
    meta_path, arrays_path = (OUT / f"special_stats_{mode}.json",
                              OUT / f"special_stats_{mode}.npz")
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    arrays = dict(np.load(arrays_path)) if arrays_path.exists() else {}
    for line in scratch.read_text().splitlines():
        entry = json.loads(line)
        if "started" in entry:
            continue
        case_id = entry["id"]
        arrays = {k: v for k, v in arrays.items() if k.split("|")[0] != case_id}
        if "hang" in entry:
            meta[case_id] = {"hang": True}
        elif "error" in entry:
            meta[case_id] = {"error": entry["error"], "message": entry["message"]}
        else:
            for i, (encoded, dtype) in enumerate(zip(entry["leaves"], entry["dtypes"])):
                arrays[f"{case_id}|{i}"] = _decode(encoded, dtype)
            meta[case_id] = {"dtypes": entry["dtypes"], "weak": entry["weak"]}
    np.savez_compressed(arrays_path, **arrays)
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        record(sys.argv[1], sys.argv[2:])
