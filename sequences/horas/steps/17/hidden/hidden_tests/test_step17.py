from harness import fails, ok, seed


def test_invoice_rounds_each_entry_up():
    seed(("2024-03-05", 50, "Acme", "call"), ("2024-03-06", 60, "Acme"), ("2024-03-07", 1, "Acme"))
    ok("rate", "Acme", "100")
    assert ok("invoice", "Acme", "--round", "15").lines == [
        "2024-03-05  1:00  €100.00  call",
        "2024-03-06  1:00  €100.00",
        "2024-03-07  0:15  €25.00",
        "Total: 2:15  €225.00",
    ]
    assert ok("invoice", "Acme", "--round=30", "--to", "2024-03-05").lines[-1] == "Total: 1:00  €100.00"


def test_without_rounding_the_time_is_as_logged():
    seed(("2024-03-05", 50, "Acme"))
    ok("rate", "Acme", "60")
    assert ok("invoice", "Acme").lines[-1] == "Total: 0:50  €50.00"


def test_bad_rounding():
    seed(("2024-03-05", 50, "Acme"))
    ok("rate", "Acme", "60")
    assert '"0"' in fails("invoice", "Acme", "--round", "0").err
    assert '"quarter"' in fails("invoice", "Acme", "--round", "quarter").err
