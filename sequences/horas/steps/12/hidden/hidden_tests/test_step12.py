from pathlib import Path

from harness import ok, seed


def read(name):
    return Path(name).read_bytes().decode("utf-8")


def test_export_with_header_amounts_and_quoting():
    seed(
        ("2024-03-05", 90, "Acme", 'the "login" page, again'),
        ("2024-03-04", 45, "Beta, Inc."),
        ("2024-03-06", 600, "Acme", "Café"),
    )
    ok("rate", "Acme", "150")
    assert ok("export", "out.csv").lines == ["exported 3 entries to out.csv"]
    assert read("out.csv") == (
        "date,client,duration,amount,note\r\n"
        '2024-03-04,"Beta, Inc.",0:45,,\r\n'
        '2024-03-05,Acme,1:30,225.00,"the ""login"" page, again"\r\n'
        "2024-03-06,Acme,10:00,1500.00,Café\r\n"
    )


def test_export_what_the_options_choose():
    seed(("2024-03-05", 90, "Acme"), ("2024-03-04", 45, "Beta"), ("2024-04-01", 30, "Acme"))
    ok("export", "march.csv", "--client", "acme", "--to", "2024-03-31")
    assert read("march.csv") == "date,client,duration,amount,note\r\n2024-03-05,Acme,1:30,,\r\n"


def test_export_a_note_over_two_lines():
    seed(("2024-03-05", 90, "Acme", "one\ntwo"))
    ok("export", "x.csv")
    assert read("x.csv").endswith('2024-03-05,Acme,1:30,,"one\ntwo"\r\n')
