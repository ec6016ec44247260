"""`workbench --help` is where a newcomer meets the commands: each line must say what its command does.
Click cuts a command's line at the first word ending in a full stop, so a docstring opening "Import
FILE... (a folder…)" was listed as "Import FILE..." alone."""

from click.testing import CliRunner

from core.cli import cli


def command_lines(args: list[str]) -> dict[str, str]:
    """The commands `workbench ARGS --help` lists, each with the line it shows."""
    out = CliRunner().invoke(cli, [*args, "--help"]).output
    listed = out.split("Commands:\n", 1)[1].splitlines()
    return {name: text.strip() for name, _, text in (line.strip().partition(" ") for line in listed) if name}


def test_every_top_level_command_says_what_it_does_in_more_than_its_usage():
    lines = command_lines([])
    assert lines["import"].startswith("Bring chat logs"), lines["import"]
    short = {name: text for name, text in lines.items() if len(text.split()) < 3}
    assert short == {}, f"commands listed with less than a phrase: {short}"


def test_every_subcommand_says_what_it_does_in_more_than_its_usage():
    groups = ["bank", "chains", "demo", "feedback", "formation", "keys", "memory", "profiles", "services",
              "tasks"]
    short = {f"{group} {name}": text for group in groups for name, text in command_lines([group]).items()
             if len(text.split()) < 3}
    assert short == {}, f"commands listed with less than a phrase: {short}"
