import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from util import parse_amount


def test_parse_amount_reads_a_european_amount():
    assert parse_amount("-1.234,56 EUR") == -123456
