import unicodedata


def fold(text):
    """Lower-cases text and strips accents, so that 'Café' and 'cafe' compare equal."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
