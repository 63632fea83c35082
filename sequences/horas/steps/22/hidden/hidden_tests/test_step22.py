from pathlib import Path

from harness import entries, fails, ok, seed


def test_export_with_semicolons_and_decimal_commas():
    seed(("2024-03-05", 90, "Acme", "a; b"), ("2024-03-06", 600, "Beta, Inc."))
    ok("rate", "Acme", "85.50")
    ok("export", "out.csv", "--sep", ";")
    assert Path("out.csv").read_bytes().decode() == (
        "date;client;duration;amount;note\r\n"
        '2024-03-05;Acme;1:30;128,25;"a; b"\r\n'
        "2024-03-06;Beta, Inc.;10:00;;\r\n"
    )


def test_import_finds_the_separator():
    Path("in.csv").write_bytes("Date;Client;Duration;Note\n5/3/2024;Beta, Inc.;1,5h;\"x;y\"\n".encode())
    ok("import", "in.csv")
    assert entries() == [{"date": "2024-03-05", "minutes": 90, "client": "Beta, Inc.", "note": "x;y"}]


def test_round_trip_and_bad_separator():
    seed(("2024-03-05", 90, "Acme", "semi;colon, comma"))
    ok("export", "out.csv", "--sep=;")
    Path("horas.json").unlink()
    ok("import", "out.csv")
    assert ok("list").lines == ["2024-03-05  1:30  Acme  semi;colon, comma"]
    assert '"|"' in fails("export", "out.csv", "--sep", "|").err
