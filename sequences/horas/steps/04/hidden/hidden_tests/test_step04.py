import pytest

from harness import fails, ok, seed


def work():
    seed(("2024-02-28", 60, "Acme"), ("2024-03-01", 30, "Beta"), ("2024-03-05", 90, "Acme"), ("2024-03-09", 15, "Acme"))


def test_list_a_period():
    work()
    assert ok("list", "--from", "2024-03-01", "--to=2024-03-05").lines == [
        "2024-03-01  0:30  Beta",
        "2024-03-05  1:30  Acme",
    ]


def test_total_of_a_period():
    work()
    assert ok("total", "--from", "2024-03-02").lines == ["Total: 1:45"]
    assert ok("total", "--to", "2024-03-01", "--client", "Acme").lines == ["Total: 1:00"]


@pytest.mark.parametrize("day", ["2024-02-30", "2023-02-29", "2024-13-01", "2024-04-31"])
def test_days_that_do_not_exist(day):
    assert f'invalid date "{day}"' in fails("log", day, "1h", "Acme").err
    work()
    assert f'invalid date "{day}"' in fails("list", "--from", day).err


def test_leap_day_exists():
    ok("log", "2024-02-29", "1h", "Acme")
    assert ok("list").lines == ["2024-02-29  1:00  Acme"]
