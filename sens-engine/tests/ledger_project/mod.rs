//! The small project the reuse tests share: an accent-folding helper (the
//! published pilot's case), money helpers and a report.

pub const FILES: [(&str, &str); 3] = [
    (
        "ledger/text.py",
        "import unicodedata\n\n\ndef fold(text):\n    \"\"\"Lower-cases text and strips accents, so that 'Café' and 'cafe' compare equal.\"\"\"\n    decomposed = unicodedata.normalize(\"NFKD\", text)\n    return \"\".join(c for c in decomposed if not unicodedata.combining(c)).lower()\n",
    ),
    (
        "ledger/money.py",
        "def cents_of(amount):\n    \"\"\"Parses an amount such as '12,50' or '12.5' into cents.\"\"\"\n    return round(float(amount.replace(',', '.')) * 100)\n\n\ndef format_cents(cents):\n    \"\"\"Cents as an amount with two decimals.\"\"\"\n    return f\"{cents / 100:.2f}\"\n",
    ),
    (
        "ledger/report.py",
        "def totals(expenses):\n    \"\"\"Sums expenses per category.\"\"\"\n    out = {}\n    for e in expenses:\n        out[e.category] = out.get(e.category, 0) + e.cents\n    return out\n",
    ),
];
