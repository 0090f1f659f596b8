"""A client for the oracle worker: real JAX (or any JAX-like namespace) in another process.

The worker starts once and stays up; each request carries a batch of programs, so the
cost of starting JAX is paid once per fuzzing session. The environment variable
`JAXLITE_FUZZ_JAX_PYTHON` names the default interpreter.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

WORKER = Path(__file__).with_name("worker.py")
ENV_PYTHON = "JAXLITE_FUZZ_JAX_PYTHON"


def default_python() -> str | None:
    """The interpreter named by JAXLITE_FUZZ_JAX_PYTHON, if that file exists."""
    path = os.environ.get(ENV_PYTHON)
    return path if path and Path(path).exists() else None


class OracleError(RuntimeError):
    """The worker died or answered something that is not a response."""


class Oracle:
    """Runs programs in `python` with the namespace `namespace` (default: real JAX)."""

    def __init__(self, python: str, namespace: str = "jax", timeout: float = 600.0):
        self.python = python
        self.namespace = namespace
        self.timeout = timeout
        self.calls = 0
        self.programs_run = 0
        self._proc = None

    def _start(self):
        env = dict(os.environ)
        env.setdefault("JAX_PLATFORMS", "cpu")
        self._proc = subprocess.Popen(
            [self.python, str(WORKER), "--namespace", self.namespace],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env)

    def run_batch(self, programs: list[dict]) -> list[dict]:
        """The results of `programs`, in order (see worker.py for their form)."""
        if not programs:
            return []
        self.submit(programs)
        return self.receive(len(programs))

    def submit(self, programs: list[dict]) -> None:
        """Sends a batch without waiting, so that the caller can work meanwhile."""
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        try:
            self._proc.stdin.write(json.dumps({"programs": programs}) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            self.close()
            raise OracleError(f"oracle worker {self.python} died: {e}") from e

    def receive(self, count: int) -> list[dict]:
        """The results of the batch sent last."""
        try:
            line = self._proc.stdout.readline()
        except (BrokenPipeError, OSError) as e:
            self.close()
            raise OracleError(f"oracle worker {self.python} died: {e}") from e
        if not line:
            self.close()
            raise OracleError(f"oracle worker {self.python} exited without answering")
        self.calls += 1
        self.programs_run += count
        return json.loads(line)["results"]

    def close(self):
        """Stops the worker."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.stdin.close()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
            self._proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
