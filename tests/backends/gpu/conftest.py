"""The gpu backend tests' folder on sys.path, for their shared helpers (gpu_testing)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
