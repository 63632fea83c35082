import pytest

from harness import entries, fails, ok, seed


@pytest.mark.parametrize("typed", ["5/3/2024", "05/03/2024", "2024-3-5", "2024/03/05", "5.3.2024", " 2024-03-05 "])
def test_dates_as_people_write_them(typed):
    ok("log", typed, "1h", "Acme")
    assert entries()[0]["date"] == "2024-03-05"


def test_periods_take_them_too():
    seed(("2024-03-01", 60, "Acme"), ("2024-03-05", 30, "Acme"), ("2024-03-31", 15, "Acme"))
    assert ok("total", "--from", "2/3/2024", "--to", "2024/3/30").lines == ["Total: 0:30"]


@pytest.mark.parametrize("typed", ["31/2/2024", "2024/3", "3/5/24", "2024-03-05-01"])
def test_still_refused(typed):
    assert f'invalid date "{typed}"' in fails("log", typed, "1h", "Acme").err
