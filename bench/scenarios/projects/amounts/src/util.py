"""Helpers shared by the household-expenses commands."""


def parse_amount(text, currency="EUR"):
    """Turn a typed amount such as '-1.234,56 EUR' into cents."""
    cleaned = text.strip().replace(currency, "").strip()
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
    if "," in cleaned and "." in cleaned:
        cleaned = cleaned.replace(".", "").replace(",", ".")
    elif "," in cleaned:
        cleaned = cleaned.replace(",", ".")
    if not cleaned:
        raise ValueError(f"not an amount: {text!r}")
    whole, _, fraction = cleaned.partition(".")
    cents = int(whole or "0") * 100 + int((fraction + "00")[:2])
    return -cents if negative else cents
