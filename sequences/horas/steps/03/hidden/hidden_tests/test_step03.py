from harness import fails, ok, seed


def test_total_of_everything():
    seed(("2024-03-05", 90, "Acme"), ("2024-03-04", 45, "Beta"), ("2024-03-06", 600, "Acme"))
    assert ok("total").lines == ["Total: 12:15"]


def test_total_of_one_client():
    seed(("2024-03-05", 90, "Acme"), ("2024-03-04", 45, "Beta"), ("2024-03-06", 600, "Acme"))
    assert ok("total", "--client=Acme").lines == ["Total: 11:30"]
    assert ok("total", "--client", "Beta").lines == ["Total: 0:45"]


def test_nothing_to_count():
    assert ok("total").lines == ["Total: 0:00"]
