def cents_of(amount):
    """Parses an amount such as '12,50' or '12.5' into cents."""
    return round(float(amount.replace(',', '.')) * 100)


def format_cents(cents):
    """Cents as an amount with two decimals."""
    return f"{cents / 100:.2f}"
