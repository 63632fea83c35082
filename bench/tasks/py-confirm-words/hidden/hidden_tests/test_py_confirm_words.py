"""Yes/no questions accept true/false, t/f, on/off and 1/0 besides y/yes/n/no."""
import click
import pytest
from click.testing import CliRunner


def _clean(**confirm_args):
    @click.command()
    def clean():
        if click.confirm("Delete 3 files?", **confirm_args):
            click.echo("deleted")
        else:
            click.echo("kept")

    return clean


YES = ["y", "yes", "true", "t", "on", "1", "YES", "True", "On", "  on  "]
NO = ["n", "no", "false", "f", "off", "0", "NO", "False", "OFF", " 0 "]


@pytest.mark.parametrize("answer", YES)
def test_yes_answers(answer):
    result = CliRunner().invoke(_clean(), input=f"{answer}\n")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("deleted\n")
    assert "invalid input" not in result.output


@pytest.mark.parametrize("answer", NO)
def test_no_answers(answer):
    result = CliRunner().invoke(_clean(default=True), input=f"{answer}\n")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("kept\n")
    assert "invalid input" not in result.output


def test_other_answers_are_asked_again():
    result = CliRunner().invoke(_clean(), input="maybe\nyess\non\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("Error: invalid input") == 2
    assert result.output.count("Delete 3 files? [y/N]:") == 3
    assert result.output.endswith("deleted\n")


def test_empty_answer_still_takes_the_default():
    result = CliRunner().invoke(_clean(default=True), input="\n")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("deleted\n")


def test_empty_answer_without_default_is_asked_again():
    # The trailing "y" ends the loop also where "1" is not accepted, so that
    # the test fails instead of prompting forever.
    result = CliRunner().invoke(_clean(default=None), input="\n1\ny\n")
    assert result.output.count("Error: invalid input") == 1
    assert result.output.endswith("deleted\n")


def test_abort_on_no_answer():
    result = CliRunner().invoke(_clean(abort=True), input="off\n")
    assert result.exit_code == 1
    assert "Aborted!" in result.output
    assert "deleted" not in result.output


def test_flag_prompt_accepts_the_new_words():
    @click.command()
    @click.option("--force", is_flag=True, prompt="Really force?")
    def cli(force):
        click.echo(f"force={force}")

    result = CliRunner().invoke(cli, [], input="true\n")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("force=True\n")

    result = CliRunner().invoke(cli, [], input="off\n")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("force=False\n")


def test_confirmation_option_accepts_the_new_words():
    @click.command()
    @click.confirmation_option(prompt="Drop the database?")
    def dropdb():
        click.echo("dropped")

    result = CliRunner().invoke(dropdb, [], input="1\n")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("dropped\n")

    result = CliRunner().invoke(dropdb, [], input="false\n")
    assert result.exit_code == 1
    assert "dropped" not in result.output
