import pytest

from harness import fails, ok, seed


def work():
    seed(("2024-03-05", 90, "Acme", "login"), ("2024-03-04", 30, "Beta"), ("2024-03-06", 60, "Acme"))


@pytest.mark.parametrize("option", [["--client", "Acme"], ["--client=Acme"]])
def test_list_one_client(option):
    work()
    assert ok("list", *option).lines == ["2024-03-05  1:30  Acme  login", "2024-03-06  1:00  Acme"]


def test_client_without_work():
    work()
    assert ok("list", "--client", "Gamma").lines == ["no entries"]


def test_option_mistakes_are_named():
    work()
    assert '"--clinet"' in fails("list", "--clinet", "Acme").err
    assert '"--client"' in fails("list", "--client").err
