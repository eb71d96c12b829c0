import sys
from pathlib import Path

# The fixture helpers live beside the tests; make them importable without packaging tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))
