"""The commands: each takes the data file and its arguments, returns the exit code."""

import re

from .store import HorasError, load, save


def entry_line(entry):
    minutes = entry["minutes"]
    line = f"{entry['date']}  {minutes // 60}:{minutes % 60:02d}  {entry['client']}"
    note = entry.get("note", "")
    return f"{line}  {note}" if note else line


def cmd_log(path, args):
    if len(args) < 3:
        raise HorasError("usage: horas log <date> <minutes> <client> [note...]")
    date, minutes, client, *note = args
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise HorasError(f'invalid date "{date}"')
    if not minutes.isdigit() or int(minutes) == 0:
        raise HorasError(f'invalid duration "{minutes}"')
    data = load(path)
    entry = {"date": date, "minutes": int(minutes), "client": client, "note": " ".join(note)}
    data["entries"].append(entry)
    save(path, data)
    print(f"logged {entry_line(entry)}")
    return 0


def cmd_list(path, args):
    if args:
        raise HorasError(f'unexpected argument "{args[0]}"')
    entries = sorted(load(path)["entries"], key=lambda entry: entry["date"])
    if not entries:
        print("no entries")
    for entry in entries:
        print(entry_line(entry))
    return 0


def cmd_clients(path, args):
    if args:
        raise HorasError(f'unexpected argument "{args[0]}"')
    clients = sorted({entry["client"] for entry in load(path)["entries"]})
    if not clients:
        print("no clients")
    for client in clients:
        print(client)
    return 0


def cmd_last(path, args):
    if len(args) > 1 or (args and not args[0].isdigit()):
        raise HorasError("usage: horas last [<how many>]")
    count = int(args[0]) if args else 5
    entries = sorted(load(path)["entries"], key=lambda entry: entry["date"])
    for entry in entries[-count:] if count else []:
        print(entry_line(entry))
    return 0


COMMANDS = {"log": cmd_log, "list": cmd_list, "clients": cmd_clients, "last": cmd_last}
