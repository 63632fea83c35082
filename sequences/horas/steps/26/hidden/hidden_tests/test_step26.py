import pytest

from harness import fails, ok, seed


@pytest.mark.parametrize("typed", ["2024-W10", "2024W10", "2024-w10", "2024w10", "2024-03-06", "6/3/2024", "2024-3-10"])
def test_weeks_written_loosely_or_by_a_day(typed):
    seed(("2024-03-03", 60, "Acme"), ("2024-03-04", 30, "Acme"), ("2024-03-10", 45, "Beta"))
    assert ok("total", "--week", typed).lines == ["Total: 1:15"]


def test_one_digit_weeks_and_timesheets():
    seed(("2024-01-02", 60, "Acme"))
    assert ok("total", "--week", "2024-w1").lines == ["Total: 1:00"]
    assert ok("timesheet", "2024-01-03").lines[0] == "Week 2024-W01: 2024-01-01 to 2024-01-07"
    assert ok("timesheet", "2024W1").lines[0] == "Week 2024-W01: 2024-01-01 to 2024-01-07"


def test_a_day_in_the_next_years_week():
    seed(("2024-12-30", 60, "Acme"))
    assert ok("timesheet", "2025-01-01").lines[0] == "Week 2025-W01: 2024-12-30 to 2025-01-05"


@pytest.mark.parametrize("typed", ["2024-02-30", "2024-W", "W10", "2024-W60"])
def test_still_refused(typed):
    assert f'invalid week "{typed}"' in fails("total", "--week", typed).err
