"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
Filled by the work on this area; `suite.py` runs them beside the shared ones."""
from __future__ import annotations

from workloads import Workload  # noqa: F401  (defined before this module is read)

WORKLOADS: list = []
