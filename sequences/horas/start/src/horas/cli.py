"""Entry point: `python3 -m horas <command> ...`, or `main(argv)` from Python."""

import sys

from .commands import COMMANDS
from .store import HorasError, data_path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] not in COMMANDS:
        print(f"usage: horas <{'|'.join(COMMANDS)}> ...", file=sys.stderr)
        return 1
    try:
        return COMMANDS[args[0]](data_path(), args[1:])
    except HorasError as err:
        print(f"horas: {err}", file=sys.stderr)
        return 1
