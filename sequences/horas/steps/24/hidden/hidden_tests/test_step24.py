from pathlib import Path

from harness import entries, ok, seed


def test_import_skips_what_is_recorded():
    seed(("2024-03-05", 90, "Café Olé", "Login"), ("2024-03-06", 60, "Acme"))
    Path("in.csv").write_bytes(
        "date,client,duration,note\n"
        "2024-03-05,cafe ole,1:30,login\n"
        "6/3/2024,ACME,1h,\n"
        "2024-03-06,Acme,2h,\n"
        "2024-03-07,Acme,1h,new\n".encode()
    )
    assert ok("import", "in.csv").lines == ["imported 2 entries, skipped 2 already recorded"]
    assert [(e["date"], e["minutes"]) for e in entries()] == [
        ("2024-03-05", 90), ("2024-03-06", 60), ("2024-03-06", 120), ("2024-03-07", 60)
    ]


def test_importing_twice_adds_nothing_and_twins_in_the_file_count_once():
    Path("in.csv").write_bytes("date,client,duration\n2024-03-05,Acme,1h\n2024-03-05,acme,60m\n".encode())
    assert ok("import", "in.csv").lines == ["imported 1 entries, skipped 1 already recorded"]
    assert ok("import", "in.csv").lines == ["imported 0 entries, skipped 2 already recorded"]
    assert len(entries()) == 1
