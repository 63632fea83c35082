from harness import ok, seed


def test_every_week_of_the_period():
    seed(("2024-03-04", 60, "Acme"), ("2024-03-20", 30, "Beta"), ("2024-05-01", 30, "Beta"))
    assert ok("by-week", "--from", "2024-03-01", "--to", "2024-03-31").lines == [
        "2024-W09  0:00",
        "2024-W10  1:00",
        "2024-W11  0:00",
        "2024-W12  0:30",
        "2024-W13  0:00",
    ]


def test_weeks_across_the_new_year():
    seed(("2020-12-29", 60, "Acme"))
    assert ok("by-week", "--from", "2020-12-20", "--to", "2021-01-12").lines == [
        "2020-W51  0:00",
        "2020-W52  0:00",
        "2020-W53  1:00",
        "2021-W01  0:00",
        "2021-W02  0:00",
    ]


def test_every_month_of_the_period():
    seed(("2023-12-04", 60, "Acme"), ("2024-02-20", 30, "Beta"))
    assert ok("by-month", "--from", "2023-11-15", "--to", "2024-03-01").lines == [
        "2023-11  0:00",
        "2023-12  1:00",
        "2024-01  0:00",
        "2024-02  0:30",
        "2024-03  0:00",
    ]


def test_without_both_ends_only_weeks_with_work():
    seed(("2024-03-04", 60, "Acme"), ("2024-03-20", 30, "Beta"))
    assert ok("by-week", "--from", "2024-03-01").lines == ["2024-W10  1:00", "2024-W12  0:30"]
