from pathlib import Path

from harness import entries, fails, ok, seed


def test_file_before_or_after_the_command():
    ok("--file", "work.json", "log", "2024-03-05", "1h", "Acme")
    ok("log", "2024-03-06", "30m", "Acme", "--file=work.json")
    ok("log", "--file", "work.json", "2024-03-07", "15m", "Beta", "call")
    assert not Path("horas.json").exists()
    assert len(entries("work.json")) == 3
    assert ok("total", "--file", "work.json", "--client", "acme").lines == ["Total: 1:30"]


def test_file_wins_over_the_variable(monkeypatch):
    seed(("2024-03-05", 60, "Env"), path="env.json")
    seed(("2024-03-05", 30, "Flag"), path="flag.json")
    monkeypatch.setenv("HORAS_FILE", "env.json")
    assert ok("list").lines == ["2024-03-05  1:00  Env"]
    assert ok("list", "--file", "flag.json").lines == ["2024-03-05  0:30  Flag"]


def test_every_command_takes_it():
    seed(("2024-03-05", 60, "Acme", "Café"), path="w.json")
    ok("--file=w.json", "rate", "Acme", "50")
    assert ok("by-client", "--file", "w.json").lines == ["Acme  1:00  €50.00"]
    assert ok("search", "cafe", "--file", "w.json").lines == ["2024-03-05  1:00  Acme  Café"]
    assert ok("invoice", "Acme", "--file", "w.json").lines[-1] == "Total: 1:00  €50.00"
    assert '"--file"' in fails("list", "--file").err
