"""The case module beside these tests (run on JAX by the recorder too) and the helpers
they share with tests/experimental are importable."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "experimental"))
