import pytest

from harness import fails, ok, seed


def work():
    seed(("2024-03-03", 60, "Acme"), ("2024-03-04", 30, "Acme"), ("2024-03-10", 45, "Beta"), ("2024-03-11", 15, "Acme"))


def test_one_week():
    work()
    assert ok("list", "--week", "2024-W10").lines == ["2024-03-04  0:30  Acme", "2024-03-10  0:45  Beta"]
    assert ok("total", "--week=2024-W09").lines == ["Total: 1:00"]
    assert ok("by-client", "--week", "2024-W10").lines == ["Beta  0:45", "Acme  0:30"]


def test_week_53_only_in_years_that_have_it():
    seed(("2020-12-31", 60, "Acme"), ("2021-01-01", 30, "Acme"))
    assert ok("total", "--week", "2020-W53").lines == ["Total: 1:30"]
    assert 'invalid week "2021-W53"' in fails("total", "--week", "2021-W53").err


@pytest.mark.parametrize("typed", ["2024-W00", "2024-W54", "W10", "2024-10"])
def test_bad_weeks(typed):
    work()
    assert f'invalid week "{typed}"' in fails("list", "--week", typed).err
