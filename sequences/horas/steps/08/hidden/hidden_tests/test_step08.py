from harness import ok, seed


def work():
    seed(
        ("2024-03-04", 45, "Café Olé"),
        ("2024-03-05", 90, "Acme"),
        ("2024-03-06", 60, "cafe ole"),
        ("2024-03-07", 30, "ACME"),
    )


def test_by_client_joins_spellings_under_the_first():
    work()
    assert ok("by-client").lines == ["Acme  2:00", "Café Olé  1:45"]


def test_client_option_ignores_capitals_and_accents():
    work()
    assert ok("list", "--client", "CAFÉ OLE").lines == ["2024-03-04  0:45  Café Olé", "2024-03-06  1:00  cafe ole"]
    assert ok("total", "--client=acme").lines == ["Total: 2:00"]


def test_rates_ignore_capitals_and_accents():
    work()
    ok("rate", "cafe olé", "60")
    assert ok("rate", "CAFE OLE").lines == ["CAFE OLE: €60.00/h"]
    ok("rate", "Café Olé", "80")
    assert ok("by-client").lines == ["Acme  2:00", "Café Olé  1:45  €140.00"]
    assert ok("invoice", "café olé").lines[-1] == "Total: 1:45  €140.00"


def test_clients_listed_once_whatever_the_spelling():
    work()
    assert ok("clients").lines == ["Acme", "Café Olé"]
