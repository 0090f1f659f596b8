"""The case module beside these tests (run on JAX by the recorder too) is importable."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
