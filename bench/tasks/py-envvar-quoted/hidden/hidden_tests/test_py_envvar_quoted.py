"""Values read from one environment variable are split like a shell command line."""
import os

import click
from click.testing import CliRunner


def _greet():
    @click.command()
    @click.option("--name", "names", multiple=True, envvar="GREET_NAMES")
    def greet(names):
        for name in names:
            click.echo(f"Hello {name}!")

    return greet


def _run(cli, env, args=()):
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_double_quotes_keep_a_name_with_spaces_together():
    out = _run(_greet(), {"GREET_NAMES": '"Ann Lee" Bob'})
    assert out == "Hello Ann Lee!\nHello Bob!\n"


def test_single_quotes_keep_a_name_with_spaces_together():
    out = _run(_greet(), {"GREET_NAMES": "'Ann Lee' 'Bo  Chen' Cy"})
    assert out == "Hello Ann Lee!\nHello Bo  Chen!\nHello Cy!\n"


def test_unquoted_values_still_split_on_whitespace():
    out = _run(_greet(), {"GREET_NAMES": "  Ann \t Bob   Cy  "})
    assert out == "Hello Ann!\nHello Bob!\nHello Cy!\n"


def test_command_line_still_wins_over_the_variable():
    out = _run(_greet(), {"GREET_NAMES": '"Ann Lee" Bob'}, ["--name", "Zoe Kim"])
    assert out == "Hello Zoe Kim!\n"


def test_auto_envvar_prefix_reads_quoted_values():
    @click.command()
    @click.option("--tag", multiple=True)
    def cli(tag):
        click.echo(repr(tag))

    result = CliRunner().invoke(
        cli, [], auto_envvar_prefix="APP", env={"APP_TAG": 'red "dark blue"'}
    )
    assert result.exit_code == 0, result.output
    assert result.output == "('red', 'dark blue')\n"


def test_option_with_two_values_reads_quoted_values():
    @click.command()
    @click.option("--city", nargs=2, type=(str, int), envvar="CITY")
    def cli(city):
        click.echo(repr(city))

    out = _run(cli, {"CITY": "'New York' 10001"})
    assert out == "('New York', 10001)\n"


def test_multiple_pairs_read_quoted_values():
    @click.command()
    @click.option("--pair", nargs=2, multiple=True, envvar="PAIRS")
    def cli(pair):
        click.echo(repr(pair))

    out = _run(cli, {"PAIRS": '"a b" c "d" "e f"'})
    assert out == "(('a b', 'c'), ('d', 'e f'))\n"


def test_variadic_argument_reads_quoted_values():
    @click.command()
    @click.argument("words", nargs=-1, envvar="WORDS")
    def cli(words):
        click.echo(repr(words))

    out = _run(cli, {"WORDS": "one \"two three\" 'four'"})
    assert out == "('one', 'two three', 'four')\n"


def test_path_lists_still_split_on_the_path_separator():
    @click.command()
    @click.option("--dir", "dirs", multiple=True, type=click.Path(), envvar="DIRS")
    def cli(dirs):
        click.echo(repr(dirs))

    value = os.pathsep.join(["my docs", "'quoted'"])
    out = _run(cli, {"DIRS": value})
    assert out == "('my docs', \"'quoted'\")\n"
