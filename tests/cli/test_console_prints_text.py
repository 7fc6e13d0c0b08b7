"""What the CLI prints carries users' values (stack names, regions, paths): rich must print them as text. With its
defaults a table cell `[/x]` raises MarkupError and `a:b:c` prints an emoji (🅱)."""

from __future__ import annotations

from rich.table import Table

from accelstack.commands.common import echo_lines, err, out

VALUES = ("a:b:c:d:e:f", "[/x] closes nothing", "[bold]not bold[/bold]", ":thumbs_up:")


def test_tables_and_lines_print_values_as_written(capsys) -> None:
    table = Table("key", "value")
    for value in VALUES:
        table.add_row("parentPath", value)
    out().print(table)
    echo_lines(VALUES)
    err().print(*VALUES)
    printed = capsys.readouterr()
    for value in VALUES:
        assert printed.out.count(value) == 2, value
        assert value in printed.err
    assert "🅱" not in printed.out + printed.err and "👍" not in printed.out + printed.err
