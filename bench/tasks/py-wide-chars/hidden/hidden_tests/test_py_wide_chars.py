"""Help, usage and progress bars line up when text holds East Asian wide characters."""
import io
import unicodedata

import click
from click.testing import CliRunner


def columns(text):
    """Terminal columns taken by plain text: wide and fullwidth characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def column_of(line, needle):
    """The terminal column at which `needle` starts in `line`."""
    return columns(line[: line.index(needle)])


def _group():
    @click.group()
    def cli():
        """Manage the shop."""

    @cli.command("add-item")
    def add_item():
        """Add an item."""

    @cli.command("一覧")
    def list_items():
        """Show all items."""

    @cli.command("削除する")
    def delete():
        """Delete an item."""

    return cli


def test_command_list_descriptions_line_up():
    result = CliRunner().invoke(_group(), ["--help"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    starts = {
        column_of(next(ln for ln in lines if text in ln), text)
        for text in ["Add an item.", "Show all items.", "Delete an item."]
    }
    assert len(starts) == 1, result.output


def test_option_list_descriptions_line_up():
    @click.command()
    @click.option("--名前", "name", help="The item name.")
    @click.option("--count", type=int, help="How many items.")
    @click.option("--price", metavar="価格", help="The item price.")
    def cli(name, count, price):
        pass

    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    starts = {
        column_of(next(ln for ln in lines if text in ln), text)
        for text in [
            "The item name.",
            "How many items.",
            "The item price.",
            "Show this message and exit.",
        ]
    }
    assert len(starts) == 1, result.output


def test_styled_option_names_still_line_up():
    @click.command()
    @click.option("--名前", "name", metavar=click.style("文字", fg="red"), help="Name.")
    @click.option("--count", type=int, help="Count.")
    def cli(name, count):
        pass

    result = CliRunner().invoke(cli, ["--help"], color=True)
    assert result.exit_code == 0, result.output
    assert "\x1b[31m" in result.output
    lines = click.unstyle(result.output).splitlines()
    starts = {
        column_of(next(ln for ln in lines if text in ln), text)
        for text in ["Name.", "Count.", "Show this message and exit."]
    }
    assert len(starts) == 1, result.output


def test_wrapped_usage_continues_under_the_first_argument():
    @click.command()
    @click.argument("first")
    @click.argument("second")
    @click.argument("third")
    @click.argument("fourth")
    @click.argument("fifth")
    @click.argument("sixth")
    def cli(first, second, third, fourth, fifth, sixth):
        pass

    result = CliRunner().invoke(
        cli, ["--help"], prog_name="データ処理ツール", terminal_width=60
    )
    assert result.exit_code == 0, result.output
    usage = result.output.split("\n\n")[0].splitlines()
    assert len(usage) >= 2, result.output
    first_argument = columns("Usage: データ処理ツール ")
    assert usage[0].startswith("Usage: データ処理ツール [OPTIONS]"), result.output
    for line in usage[1:]:
        assert columns(line) - columns(line.lstrip(" ")) == first_argument, (
            result.output
        )


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _progress_frames(label, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    out = _Terminal()
    with click.progressbar(range(4), label=label, width=0, file=out) as bar:
        for _ in bar:
            pass
    frames = [click.unstyle(f).rstrip("\n") for f in out.getvalue().split("\r")]
    return [f for f in frames if f]


def test_full_width_progress_bar_fits_the_terminal(monkeypatch):
    frames = _progress_frames("ファイルをアップロード中", monkeypatch)
    assert frames
    for frame in frames:
        assert frame.startswith("ファイルをアップロード中")
        assert columns(frame.rstrip(" ")) == 60, frames


def test_full_width_progress_bar_with_latin_label_is_unchanged(monkeypatch):
    frames = _progress_frames("Uploading files", monkeypatch)
    assert frames
    for frame in frames:
        assert columns(frame.rstrip(" ")) == 60, frames
