from harness import ok, seed


def work():
    seed(
        ("2024-03-05", 90, "Acme", "Café with the CEO"),
        ("2024-03-04", 45, "Beta", "review"),
        ("2024-03-06", 20, "Ñandú Films", "cafe menu"),
        ("2024-03-07", 30, "Acme", "Résumé page"),
    )


def test_search_ignores_capitals_and_accents():
    work()
    assert ok("search", "CAFE").lines == ["2024-03-05  1:30  Acme  Café with the CEO", "2024-03-06  0:20  Ñandú Films  cafe menu"]
    assert ok("search", "resume").lines == ["2024-03-07  0:30  Acme  Résumé page"]


def test_search_finds_clients_and_several_words():
    work()
    assert ok("search", "nandu").lines == ["2024-03-06  0:20  Ñandú Films  cafe menu"]
    assert ok("search", "with", "the").lines == ["2024-03-05  1:30  Acme  Café with the CEO"]


def test_search_without_a_match():
    work()
    assert ok("search", "invoice").lines == ["no entries"]
