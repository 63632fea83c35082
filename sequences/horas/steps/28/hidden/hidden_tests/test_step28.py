from harness import fails, ok, seed


def work():
    seed(("2024-03-05", 600, "Acme"), ("2024-03-06", 90, "Acme", "call"))
    ok("rate", "Acme", "150")


def test_currency_option_anywhere():
    work()
    assert ok("invoice", "Acme", "--currency", "USD").lines[-1] == "Total: 11:30  $1,725.00"
    assert ok("--currency=gbp", "by-client").lines == ["Acme  11:30  £1,725.00"]
    assert ok("rate", "Acme", "--currency", "USD").lines == ["Acme: $150.00/h"]


def test_currency_from_the_variable_and_back_to_euros(monkeypatch):
    work()
    monkeypatch.setenv("HORAS_CURRENCY", "GBP")
    assert ok("invoice", "Acme", "--vat", "20").lines[-2:] == ["VAT 20%: £345.00", "Due: £2,070.00"]
    assert ok("invoice", "Acme", "--currency", "EUR").lines[-1] == "Total: 11:30  €1,725.00"
    monkeypatch.delenv("HORAS_CURRENCY")
    assert ok("by-client").lines == ["Acme  11:30  €1,725.00"]


def test_unknown_currency():
    work()
    assert '"JPY"' in fails("by-client", "--currency", "JPY").err
