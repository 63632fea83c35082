"""Colors may be given as hex strings, #rrggbb or #rgb, for text and background."""
import click
import pytest
from click.testing import CliRunner


@pytest.mark.parametrize(
    ("hex_color", "rgb"),
    [
        ("#ff8800", (255, 136, 0)),
        ("#FF8800", (255, 136, 0)),
        ("#f80", (255, 136, 0)),
        ("#F80", (255, 136, 0)),
        ("#000000", (0, 0, 0)),
        ("#0a0B0c", (10, 11, 12)),
        ("#fff", (255, 255, 255)),
    ],
)
def test_hex_text_color_equals_the_rgb_color(hex_color, rgb):
    assert click.style("Hi", fg=hex_color) == click.style("Hi", fg=rgb)


def test_hex_text_color_is_true_color():
    assert click.style("Hi", fg="#ff8800") == "\x1b[38;2;255;136;0mHi\x1b[0m"


def test_hex_background_color_is_true_color():
    assert click.style("Hi", bg="#0000ff") == "\x1b[48;2;0;0;255mHi\x1b[0m"
    assert click.style("Hi", bg="#00f") == click.style("Hi", bg=(0, 0, 255))


def test_hex_colors_combine_with_other_styles():
    assert click.style("Hi", fg="#123456", bg="#abc", bold=True) == click.style(
        "Hi", fg=(0x12, 0x34, 0x56), bg=(0xAA, 0xBB, 0xCC), bold=True
    )


def test_named_and_numbered_colors_are_unchanged():
    assert click.style("Hi", fg="red") == "\x1b[31mHi\x1b[0m"
    assert click.style("Hi", bg=117) == "\x1b[48;5;117mHi\x1b[0m"


def test_secho_accepts_hex_colors():
    @click.command()
    def cli():
        click.secho("Warning", fg="#ff8800")

    result = CliRunner().invoke(cli, [], color=True)
    assert result.exit_code == 0, result.output
    assert result.output == "\x1b[38;2;255;136;0mWarning\x1b[0m\n"


@pytest.mark.parametrize("bad", ["#ff88", "#ff88000", "#gg0000", "#", "#12"])
@pytest.mark.parametrize("which", ["fg", "bg"])
def test_malformed_hex_fails_like_an_unknown_color_name(bad, which):
    with pytest.raises(TypeError) as unknown_name:
        click.style("Hi", **{which: "no-such-color"})
    with pytest.raises(TypeError) as malformed:
        click.style("Hi", **{which: bad})
    assert str(malformed.value) == str(unknown_name.value).replace(
        "no-such-color", bad
    )
