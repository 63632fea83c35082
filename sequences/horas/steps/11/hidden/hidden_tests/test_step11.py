import pytest

from harness import fails, ok, seed


@pytest.mark.parametrize(
    "typed, shown",
    [("85,50", "€85.50"), ("85,5", "€85.50"), ("1.234,56", "€1,234.56"), ("1,234.56", "€1,234.56"), ("1.234", "€1,234.00"), ("12.000.000", "€12,000,000.00")],
)
def test_rates_as_typed(typed, shown):
    assert ok("rate", "Acme", typed).lines == [f"Acme: {shown}/h"]


def test_big_amounts_have_thousands_separators():
    seed(("2024-03-05", 600, "Acme"), ("2024-03-06", 1200, "Acme"))
    ok("rate", "Acme", "120")
    assert ok("invoice", "Acme").lines == [
        "2024-03-05  10:00  €1,200.00",
        "2024-03-06  20:00  €2,400.00",
        "Total: 30:00  €3,600.00",
    ]
    assert ok("by-client").lines == ["Acme  30:00  €3,600.00"]


@pytest.mark.parametrize("typed", ["1.234.5", "1,234,56", "1.23,45", "12,"])
def test_mixed_up_amounts_are_refused(typed):
    assert f'invalid amount "{typed}"' in fails("rate", "Acme", typed).err
