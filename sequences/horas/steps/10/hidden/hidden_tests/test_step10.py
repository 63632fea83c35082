from harness import ok, seed


def test_time_per_iso_week():
    seed(
        ("2024-03-04", 60, "Acme"),  # Monday, W10
        ("2024-03-10", 30, "Beta"),  # Sunday, W10
        ("2024-03-11", 45, "Acme"),  # Monday, W11
        ("2024-02-26", 15, "Acme"),  # W09
    )
    assert ok("by-week").lines == ["2024-W09  0:15", "2024-W10  1:30", "2024-W11  0:45"]


def test_weeks_across_the_new_year_belong_to_their_thursday():
    seed(("2024-12-30", 60, "Acme"), ("2021-01-03", 30, "Acme"), ("2020-12-31", 10, "Acme"))
    assert ok("by-week").lines == ["2020-W53  0:40", "2025-W01  1:00"]


def test_by_week_for_one_client():
    seed(("2024-03-04", 60, "Acme"), ("2024-03-05", 30, "Beta"))
    assert ok("by-week", "--client", "beta").lines == ["2024-W10  0:30"]
