from __future__ import annotations

import sys
from pathlib import Path

# ``benchmarks`` is not an installed package: make the repository root importable however pytest runs.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
