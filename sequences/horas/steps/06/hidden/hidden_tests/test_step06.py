from harness import ok, seed


def test_time_and_money_per_client_biggest_first():
    seed(
        ("2024-03-05", 90, "Acme"),
        ("2024-03-04", 45, "Beta"),
        ("2024-03-06", 20, "Acme"),
        ("2024-03-07", 200, "Gamma"),
    )
    ok("rate", "Acme", "85.50")
    ok("rate", "Gamma", "40")
    assert ok("by-client").lines == ["Gamma  3:20  €133.33", "Acme  1:50  €156.75", "Beta  0:45"]


def test_by_client_of_a_period():
    seed(("2024-03-05", 90, "Acme"), ("2024-04-04", 45, "Beta"), ("2024-04-06", 45, "Acme"))
    assert ok("by-client", "--from", "2024-04-01").lines == ["Acme  0:45", "Beta  0:45"]


def test_nothing_logged():
    assert ok("by-client").lines == []
