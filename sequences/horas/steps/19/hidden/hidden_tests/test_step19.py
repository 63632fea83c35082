from harness import fails, ok, seed


def work():
    seed(
        ("2024-03-05", 90, "Zeta"),
        ("2024-03-04", 45, "Émile"),
        ("2024-03-06", 20, "acme"),
        ("2024-03-01", 120, "Beta", "café"),
        ("2024-03-02", 45, "Acme", "cafe"),
    )


def test_sort_by_client_in_dictionary_order():
    work()
    assert ok("list", "--sort", "client").lines == [
        "2024-03-02  0:45  Acme  cafe",
        "2024-03-06  0:20  acme",
        "2024-03-01  2:00  Beta  café",
        "2024-03-04  0:45  Émile",
        "2024-03-05  1:30  Zeta",
    ]


def test_sort_by_duration_longest_first():
    work()
    assert ok("list", "--sort=duration").lines == [
        "2024-03-01  2:00  Beta  café",
        "2024-03-05  1:30  Zeta",
        "2024-03-02  0:45  Acme  cafe",
        "2024-03-04  0:45  Émile",
        "2024-03-06  0:20  acme",
    ]
    assert ok("search", "CAFE", "--sort", "client").lines == ["2024-03-02  0:45  Acme  cafe", "2024-03-01  2:00  Beta  café"]


def test_sort_by_date_and_bad_sorts():
    work()
    assert ok("list", "--sort", "date").lines == ok("list").lines
    assert '"size"' in fails("list", "--sort", "size").err
