from harness import entries, fails, ok, seed


def work():
    seed(
        ("2024-03-05", 90, "Café Olé", "Login page"),
        ("2024-03-05", 30, "cafe ole", "call"),
        ("2024-03-05", 60, "Acme"),
        ("2024-03-06", 60, "Café Olé"),
    )


def test_delete_a_day_of_a_client():
    work()
    assert ok("delete", "5/3/2024", "CAFE OLÉ").lines == ["deleted 2 entries"]
    assert ok("list").lines == ["2024-03-05  1:00  Acme", "2024-03-06  1:00  Café Olé"]


def test_delete_by_words_of_the_note():
    work()
    assert ok("delete", "2024-03-05", "cafe ole", "login").lines == ["deleted 1 entries"]
    assert [e["note"] for e in entries()] == ["call", "", ""]


def test_nothing_to_delete():
    work()
    err = fails("delete", "2024-03-07", "Acme").err
    assert 'no entry on 2024-03-07 for "Acme"' in err
    assert len(entries()) == 4
    assert 'invalid date "2024-02-30"' in fails("delete", "2024-02-30", "Acme").err
