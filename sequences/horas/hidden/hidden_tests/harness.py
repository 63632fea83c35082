"""Helpers of the hidden tests: run one horas command in-process, seed the data file."""

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from horas.cli import main


class Run:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    @property
    def lines(self):
        return [line.rstrip() for line in self.out.splitlines() if line.strip()]


def horas(*args):
    """Runs `horas ARGS...` in-process; a SystemExit counts as the exit code, as it
    would for `python3 -m horas`."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    return Run(code, out.getvalue(), err.getvalue())


def ok(*args):
    run = horas(*args)
    assert run.code == 0, f"horas {' '.join(map(str, args))}: exit {run.code}, stderr {run.err!r}"
    return run


def fails(*args):
    run = horas(*args)
    assert run.code == 1, f"horas {' '.join(map(str, args))}: expected exit 1, got {run.code}"
    assert run.err.startswith("horas: "), run.err
    return run


def seed(*entries, path="horas.json"):
    """Writes entries given as (date, minutes, client[, note]) into the data file."""
    rows = [
        {"date": e[0], "minutes": e[1], "client": e[2], "note": e[3] if len(e) > 3 else ""}
        for e in entries
    ]
    Path(path).write_text(json.dumps({"entries": rows}, ensure_ascii=False), encoding="utf-8")


def entries(path="horas.json"):
    return json.loads(Path(path).read_text(encoding="utf-8"))["entries"]
