def totals(expenses):
    """Sums expenses per category."""
    out = {}
    for e in expenses:
        out[e.category] = out.get(e.category, 0) + e.cents
    return out
