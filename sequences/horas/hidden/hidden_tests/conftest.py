"""Every hidden test runs in a fresh empty folder, without the caller's HORAS_* variables."""

import pytest


@pytest.fixture(autouse=True)
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("HORAS_FILE", "HORAS_CURRENCY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path
