from harness import fails, ok, seed


def test_budgets_used_and_left():
    seed(("2024-03-05", 90, "Acme"), ("2024-03-06", 600, "ACME"), ("2024-03-07", 200, "Café Olé"), ("2024-03-08", 30, "Beta"))
    assert ok("budget", "acme", "20h").lines == ["acme: budget 20:00"]
    ok("budget", "Cafe Ole", "2:30")
    assert ok("status").lines == [
        "acme  11:30 of 20:00, 8:30 left",
        "Cafe Ole  3:20 of 2:30, over by 0:50",
    ]


def test_a_new_budget_replaces_the_old_one_and_periods_count():
    seed(("2024-03-05", 90, "Acme"), ("2024-04-06", 60, "Acme"))
    ok("budget", "Acme", "10h")
    ok("budget", "ACMÉ", "1h30")
    assert ok("status").lines == ["ACMÉ  2:30 of 1:30, over by 1:00"]
    assert ok("status", "--month", "2024-04").lines == ["ACMÉ  1:00 of 1:30, 0:30 left"]


def test_bad_budget():
    assert 'invalid duration "lots"' in fails("budget", "Acme", "lots").err
    assert ok("status").lines == []
