from harness import fails, ok, seed


def work():
    seed(
        ("2024-03-04", 90, "Beta"),
        ("2024-03-04", 30, "Acme"),
        ("2024-03-06", 60, "acme"),
        ("2024-03-10", 15, "Acme"),
        ("2024-03-11", 45, "Acme"),
        ("2024-03-03", 45, "Acme"),
    )


def test_a_week_per_client_and_day():
    work()
    assert ok("timesheet", "2024-W10").lines == [
        "Week 2024-W10: 2024-03-04 to 2024-03-10",
        "Acme  0:30 0:00 1:00 0:00 0:00 0:00 0:15  1:45",
        "Beta  1:30 0:00 0:00 0:00 0:00 0:00 0:00  1:30",
        "Total  2:00 0:00 1:00 0:00 0:00 0:00 0:15  3:15",
    ]


def test_one_client_and_an_empty_week():
    work()
    assert ok("timesheet", "2024-W10", "--client", "beta").lines[1:] == [
        "Beta  1:30 0:00 0:00 0:00 0:00 0:00 0:00  1:30",
        "Total  1:30 0:00 0:00 0:00 0:00 0:00 0:00  1:30",
    ]
    assert ok("timesheet", "2025-W01").lines == [
        "Week 2025-W01: 2024-12-30 to 2025-01-05",
        "Total  0:00 0:00 0:00 0:00 0:00 0:00 0:00  0:00",
    ]


def test_a_week_that_does_not_exist():
    assert 'invalid week "2023-W53"' in fails("timesheet", "2023-W53").err
