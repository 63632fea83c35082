from pathlib import Path

from harness import entries, fails, ok, seed


def write(name, text):
    Path(name).write_bytes(text.encode("utf-8"))


def test_import_any_column_order_quoted_and_hand_written():
    seed(("2024-03-01", 60, "Acme"))
    write(
        "in.csv",
        "Note,Duration,Client,Date,extra\r\n"
        '"the ""login"" page, again",1h30,Acme,5/3/2024,x\r\n'
        '"two\nlines",0:45,"Beta, Inc.",2024-3-6,\r\n'
        ",2h,Café Olé,2024/03/07,\r\n",
    )
    assert ok("import", "in.csv").lines == ["imported 3 entries"]
    assert entries() == [
        {"date": "2024-03-01", "minutes": 60, "client": "Acme", "note": ""},
        {"date": "2024-03-05", "minutes": 90, "client": "Acme", "note": 'the "login" page, again'},
        {"date": "2024-03-06", "minutes": 45, "client": "Beta, Inc.", "note": "two\nlines"},
        {"date": "2024-03-07", "minutes": 120, "client": "Café Olé", "note": ""},
    ]


def test_what_export_writes_imports_back():
    seed(("2024-03-05", 90, "Acme", 'a "quoted", note'), ("2024-03-06", 600, "Beta"))
    ok("rate", "Acme", "100")
    ok("export", "out.csv")
    Path("horas.json").unlink()
    ok("import", "out.csv")
    assert ok("list").lines == ["2024-03-05  1:30  Acme  a \"quoted\", note", "2024-03-06  10:00  Beta"]


def test_all_or_nothing_with_the_bad_line_named():
    seed(("2024-03-01", 60, "Acme"))
    write("bad.csv", "date,client,duration\n2024-03-05,Acme,1h\n2024-02-30,Acme,1h\n2024-03-07,Acme,1h\n")
    err = fails("import", "bad.csv").err
    assert "bad.csv line 3" in err and 'invalid date "2024-02-30"' in err
    write("bad.csv", "date,client,duration\n2024-03-05,Acme,1h\n2024-03-06,Acme,soon\n")
    assert "bad.csv line 3" in fails("import", "bad.csv").err
    assert len(entries()) == 1


def test_a_missing_column_or_file_is_named():
    write("cols.csv", "date,client\n2024-03-05,Acme\n")
    assert "duration" in fails("import", "cols.csv").err
    assert "nothing.csv" in fails("import", "nothing.csv").err
