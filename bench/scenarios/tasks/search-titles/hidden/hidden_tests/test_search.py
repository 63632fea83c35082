import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger.search import find


def test_find_ignores_case_and_accents():
    assert find(["Crème brûlée", "Tarte Tatin"], "creme") == ["Crème brûlée"]
    assert find(["Crème brûlée", "Tarte Tatin"], "TATIN") == ["Tarte Tatin"]
