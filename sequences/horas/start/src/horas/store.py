"""The data file: a JSON object whose "entries" list holds the logged work."""

import json
import os
from pathlib import Path


class HorasError(Exception):
    """A mistake of the user's: printed as `horas: <message>`, exit code 1."""


def data_path():
    return Path(os.environ.get("HORAS_FILE", "horas.json"))


def load(path):
    if not path.exists():
        return {"entries": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise HorasError(f"cannot read {path}: {err}") from err
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise HorasError(f"{path}: expected an object with a list of entries")
    return data


def save(path, data):
    text = json.dumps(data, indent=2, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
