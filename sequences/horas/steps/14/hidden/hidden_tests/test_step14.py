import pytest

from harness import fails, ok, seed


def work():
    seed(("2024-02-29", 60, "Acme"), ("2024-03-01", 30, "Acme"), ("2024-03-31", 45, "Beta"), ("2023-12-11", 15, "Acme"))


def test_time_per_month():
    work()
    assert ok("by-month").lines == ["2023-12  0:15", "2024-02  1:00", "2024-03  1:15"]
    assert ok("by-month", "--client", "Acme", "--from", "2024-01-01").lines == ["2024-02  1:00", "2024-03  0:30"]


@pytest.mark.parametrize("typed", ["2024-03", "2024-3", "3/2024", "03/2024", "2024/03"])
def test_one_month(typed):
    work()
    assert ok("total", "--month", typed).lines == ["Total: 1:15"]
    assert ok("list", f"--month={typed}").lines == ["2024-03-01  0:30  Acme", "2024-03-31  0:45  Beta"]


@pytest.mark.parametrize("typed", ["2024-13", "March", "2024", "24-03"])
def test_bad_months(typed):
    work()
    assert f'invalid month "{typed}"' in fails("total", "--month", typed).err
