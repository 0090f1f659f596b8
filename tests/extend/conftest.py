"""The helpers of the extension-API tests (extend_cases, recorded) are importable."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
