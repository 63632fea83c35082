from harness import fails, ok, seed


def work():
    seed(
        ("2024-02-29", 60, "Acme"),
        ("2024-03-01", 600, "Acme"),
        ("2024-03-12", 90, "Café Olé"),
        ("2024-03-13", 45, "Beta"),
        ("2024-03-31", 30, "cafe ole"),
        ("2024-04-01", 30, "Acme"),
    )
    ok("rate", "Acme", "100")
    ok("rate", "cafe olé", "85.50")


def test_summary_of_a_month():
    work()
    assert ok("summary", "2024-03").lines == [
        "Summary 2024-03",
        "Total: 12:45  €1,171.00",
        "Clients:",
        "Acme  10:00  €1,000.00",
        "Café Olé  2:00  €171.00",
        "Beta  0:45",
        "Weeks:",
        "2024-W09  10:00",
        "2024-W10  0:00",
        "2024-W11  2:15",
        "2024-W12  0:00",
        "2024-W13  0:30",
    ]


def test_summary_of_one_client_in_dollars():
    work()
    assert ok("summary", "3/2024", "--client", "CAFE OLE", "--currency", "USD").lines[:4] == [
        "Summary 2024-03",
        "Total: 2:00  $171.00",
        "Clients:",
        "Café Olé  2:00  $171.00",
    ]


def test_empty_month_and_bad_month():
    work()
    assert ok("summary", "2024-05").lines[:3] == ["Summary 2024-05", "Total: 0:00  €0.00", "Clients:"]
    assert 'invalid month "2024-13"' in fails("summary", "2024-13").err
