from pathlib import Path

import pytest

from harness import entries, fails, ok


@pytest.mark.parametrize("typed, minutes", [("09:15-10:45", 90), ("9:00-17:30", 510), ("23:30-00:15", 45), ("8:05 - 8:50", 45)])
def test_log_a_clock_range(typed, minutes):
    ok("log", "2024-03-05", typed, "Acme")
    assert entries()[0]["minutes"] == minutes


def test_import_takes_ranges():
    Path("in.csv").write_bytes("date,client,duration\n2024-03-05,Acme,14:00-15:20\n".encode())
    ok("import", "in.csv")
    assert ok("list").lines == ["2024-03-05  1:20  Acme"]


@pytest.mark.parametrize("typed", ["10:00-10:00", "25:00-26:00", "9:00-", "9:60-10:00"])
def test_bad_ranges(typed):
    assert f'invalid duration "{typed}"' in fails("log", "2024-03-05", typed, "Acme").err
