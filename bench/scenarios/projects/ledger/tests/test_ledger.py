from ledger.money import cents_of, format_cents
from ledger.text import fold


def test_fold_strips_accents_and_case():
    assert fold("Crème Brûlée") == "creme brulee"


def test_cents_round_trip():
    assert format_cents(cents_of("12,50")) == "12.50"
