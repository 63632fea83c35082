from harness import fails, ok, seed


def work():
    seed(("2024-03-05", 90, "Acme, Inc."), ("2024-03-11", 600, "Beta"), ("2024-04-01", 30, "acme, inc."))
    ok("rate", "Beta", "150")


def test_by_client_as_csv():
    work()
    assert ok("by-client", "--format", "csv").out == (
        "client,time,amount\r\n" "Beta,10:00,1500.00\r\n" '"Acme, Inc.",2:00,\r\n'
    )
    assert ok("by-client", "--format=text").lines == ["Beta  10:00  €1,500.00", "Acme, Inc.  2:00"]


def test_by_week_and_by_month_as_csv():
    work()
    assert ok("by-week", "--format", "csv").out == "week,time,amount\r\n2024-W10,1:30,\r\n2024-W11,10:00,\r\n2024-W14,0:30,\r\n"
    assert ok("by-month", "--format", "csv", "--client", "ACME, INC.").out == "month,time,amount\r\n2024-03,1:30,\r\n2024-04,0:30,\r\n"


def test_bad_format():
    work()
    assert '"xml"' in fails("by-month", "--format", "xml").err
