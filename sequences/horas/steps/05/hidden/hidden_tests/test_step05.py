import pytest

from harness import fails, ok, seed


def test_set_and_show_a_rate():
    assert ok("rate", "Acme", "85.5").lines == ["Acme: €85.50/h"]
    assert ok("rate", "Acme").lines == ["Acme: €85.50/h"]
    assert ok("rate", "Beta", "60").lines == ["Beta: €60.00/h"]
    assert ok("rate", "Acme").lines == ["Acme: €85.50/h"]


def test_invoice_lines_and_total():
    seed(("2024-03-05", 90, "Acme", "login"), ("2024-03-04", 45, "Beta"), ("2024-03-06", 20, "Acme"))
    ok("rate", "Acme", "85.50")
    assert ok("invoice", "Acme").lines == [
        "2024-03-05  1:30  €128.25  login",
        "2024-03-06  0:20  €28.50",
        "Total: 1:50  €156.75",
    ]


def test_amounts_round_half_up_to_the_cent():
    seed(("2024-03-05", 1, "Acme"), ("2024-03-06", 1, "Acme"))
    ok("rate", "Acme", "0.3")
    # 0.005 each, 0.01 together
    assert ok("invoice", "Acme").lines == ["2024-03-05  0:01  €0.01", "2024-03-06  0:01  €0.01", "Total: 0:02  €0.01"]


def test_invoice_of_a_period():
    seed(("2024-03-05", 60, "Acme"), ("2024-04-02", 30, "Acme"))
    ok("rate", "Acme", "100")
    assert ok("invoice", "Acme", "--from", "2024-04-01").lines == ["2024-04-02  0:30  €50.00", "Total: 0:30  €50.00"]


@pytest.mark.parametrize("typed", ["abc", "12.3.4", "-5"])
def test_bad_rates(typed):
    assert f'invalid amount "{typed}"' in fails("rate", "Acme", typed).err


def test_invoice_needs_a_rate():
    seed(("2024-03-05", 60, "Acme"))
    assert '"Acme"' in fails("invoice", "Acme").err
