from harness import fails, ok, seed


def test_invoice_with_vat_for_a_month():
    seed(("2024-02-28", 60, "Acme"), ("2024-03-05", 90, "Acme", "login"), ("2024-03-20", 35, "Acme"), ("2024-03-21", 60, "Beta"))
    ok("rate", "Acme", "85.50")
    assert ok("invoice", "Acme", "--month", "2024-03", "--vat", "21").lines == [
        "2024-03-05  1:30  €128.25  login",
        "2024-03-20  0:35  €49.88",
        "Total: 2:05  €178.13",
        "VAT 21%: €37.41",
        "Due: €215.54",
    ]


def test_vat_rounds_half_up_and_takes_a_decimal_comma():
    seed(("2024-03-05", 60, "Acme"))
    ok("rate", "Acme", "10.50")
    # 10% of 10.50 is 1.05; 5.5% of it is 0.5775
    assert ok("invoice", "Acme", "--vat=10").lines[-2:] == ["VAT 10%: €1.05", "Due: €11.55"]
    assert ok("invoice", "Acme", "--vat", "5,5").lines[-2:] == ["VAT 5,5%: €0.58", "Due: €11.08"]


def test_bad_vat():
    seed(("2024-03-05", 60, "Acme"))
    ok("rate", "Acme", "10")
    assert 'invalid percentage "lots"' in fails("invoice", "Acme", "--vat", "lots").err
