import pytest

from harness import entries, fails, ok


@pytest.mark.parametrize(
    "typed, minutes",
    [("1:30", 90), ("1h30", 90), ("1h 30m", 90), ("90m", 90), ("2h", 120), ("1.5h", 90), ("0:45", 45), ("1,25h", 75)],
)
def test_durations_as_typed(typed, minutes):
    ok("log", "2024-03-05", typed, "Acme")
    assert entries()[0]["minutes"] == minutes


def test_list_shows_hours_and_minutes():
    ok("log", "2024-03-05", "2h15", "Acme", "design")
    assert ok("list").lines == ["2024-03-05  2:15  Acme  design"]


@pytest.mark.parametrize("typed", ["1:75", "h", "0m", "1h30x", "-1h"])
def test_bad_durations_are_refused(typed):
    run = fails("log", "2024-03-05", typed, "Acme")
    assert f'invalid duration "{typed}"' in run.err
    assert ok("list").lines == ["no entries"]
