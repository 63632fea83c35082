import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from report import total


def test_total_sums_typed_amounts_in_cents():
    assert total(["1,50 EUR", "2,25"]) == 375
