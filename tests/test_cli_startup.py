"""The ``ebm`` command imports only the named subcommand's module; every command still parses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ebm.cli import build_parser, main


def _choices(parser) -> set[str]:
    return set(next(a for a in parser._actions if a.dest == "command").choices)


def test_one_module_registers_its_commands_only() -> None:
    assert _choices(build_parser("ask")) == {"ask", "explain"}
    everything = _choices(build_parser())
    assert {"ask", "explain", "eval", "assess", "bench", "sweep", "rules", "corpus", "serve"} <= everything


@pytest.mark.parametrize("command", ["explain", "eval", "assess", "sweep", "rules", "corpus"])
def test_every_command_still_parses(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: ebm {command} ")


def test_top_level_help_and_errors_list_every_command(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(c in out for c in ("ask", "explain", "sweep", "serve"))
    with pytest.raises(SystemExit) as e:
        main(["evaluate"])  # a module name, not a command name
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'evaluate'" in err and "'eval'" in err and "'serve'" in err


def test_a_command_does_not_import_the_others() -> None:
    code = (
        "import sys\n"
        "from ebm.cli import main\n"
        "try:\n    main(['rules', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(*sorted(m for m in sys.modules if m.startswith('ebm.cli.')), file=sys.stderr)\n"
        "print(*sorted(m for m in ('tqdm', 'flask', 'spacy') if m in sys.modules), file=sys.stderr)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cli_modules, heavy = run.stderr.splitlines()[-2:]
    assert cli_modules == "ebm.cli.rules" and heavy == ""
