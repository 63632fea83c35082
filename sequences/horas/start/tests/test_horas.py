import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from horas.cli import main


@pytest.fixture(autouse=True)
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("HORAS_FILE", "HORAS_CURRENCY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def horas(*args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_log_then_list():
    assert horas("log", "2024-03-05", "90", "Acme", "fix", "login")[0] == 0
    assert horas("log", "2024-03-04", "45", "Beta")[0] == 0
    code, out, _ = horas("list")
    assert code == 0
    assert out.splitlines() == ["2024-03-04  0:45  Beta", "2024-03-05  1:30  Acme  fix login"]


def test_entries_are_saved_as_json(workspace):
    horas("log", "2024-03-05", "90", "Acme")
    data = json.loads((workspace / "horas.json").read_text(encoding="utf-8"))
    assert data["entries"] == [{"date": "2024-03-05", "minutes": 90, "client": "Acme", "note": ""}]


def test_bad_input_is_refused():
    code, _, err = horas("log", "5 March", "90", "Acme")
    assert code == 1 and "invalid date" in err
    code, _, err = horas("log", "2024-03-05", "soon", "Acme")
    assert code == 1 and "invalid duration" in err
    assert horas("list")[1] == "no entries\n"


def test_clients_and_last_entries():
    assert horas("clients")[1] == "no clients\n"
    for day, client in [("03", "Beta"), ("01", "Acme"), ("02", "Beta"), ("04", "Acme")]:
        horas("log", f"2024-03-{day}", "30", client)
    assert horas("clients")[1].splitlines() == ["Acme", "Beta"]
    assert horas("last", "2")[1].splitlines() == ["2024-03-03  0:30  Beta", "2024-03-04  0:30  Acme"]
    assert len(horas("last")[1].splitlines()) == 4
    assert horas("last", "0")[1] == ""
    assert horas("last", "many")[0] == 1


def test_unknown_command():
    assert horas("fly")[0] == 1
