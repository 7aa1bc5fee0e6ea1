"""`mtsbench validate` lists every problem of a file, one line each, and words YAML
indentation errors as the line, the column and what was expected."""

from pathlib import Path

import pytest

from mtsbench.scenario import ScenarioError, load_scenario
from mtsbench.scenario.commands import validate_main

THREE_PROBLEMS = """\
id: many
title: Three problems
language: en
start: 2026-03-02T09:00:00
steps:
  - at: d0 09:00
    say: fine
  - at: d0 10:00
    say: hello
    reply: both kinds
  - at: d0 11:00
    say: fine again
  - at: soon
    say: a bad time
  - at: d0 12:00
    say: hi
    hints: {salience: 99}
"""


def _write(tmp_path, name, text):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_validate_prints_every_problem_one_line_each(tmp_path, capsys):
    path = _write(tmp_path, "many", THREE_PROBLEMS)
    assert validate_main([str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3, err
    assert [line.split(": ", 2)[1] for line in err] == ["step 1 (s1)", "step 3 (s3)", "step 4 (s4)"]
    assert all(line.startswith(f"{path}: ") and "\n" not in line for line in err)
    with pytest.raises(ScenarioError) as info:          # the message stays the first problem
        load_scenario(path)
    assert str(info.value) == err[0] and info.value.problems == err


@pytest.mark.parametrize("text, line, column, expected", [
    ("id: a\ntitle: t\nsteps:\n  - at: d0 09:00\n    say: hi\n     hints: {}\n", 6, 6, "expected it at column 5"),
    ("id: b\ntitle: t\nsteps:\n  - at: d0 09:00\n    say: hi\n   - at: d0 10:00\n", 6, 4, "expected column 3"),
    ("id: c\n  title: t\nsteps: []\n", 2, 3, "expected it at column 1"),
    ("id: d\ntitle: t\nsteps:\n  - at: d0 09:00\n\tsay: hi\n", 5, 1, "expected spaces instead of the tab"),
])
def test_yaml_indentation_error_is_one_clear_line(tmp_path, text, line, column, expected):
    path = _write(tmp_path, text[4], text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert message.startswith(f"{path}: invalid YAML at line {line}, column {column}: ")
    assert expected in message and "block end" not in message and "mapping values" not in message


def test_check_lists_every_bad_file_as_validate_does(cli, tmp_path):
    """``mtsbench check DIR`` names every problem of every file, not the first file's alone; a
    copied scenario's id names the fix."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "copy.yaml").write_text((Path(__file__).parent.parent / "scenarios" / "flu_fades.yaml").read_text())
    (folder / "many.yaml").write_text(THREE_PROBLEMS)
    done = cli("check", folder)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == (f"mtsbench: {folder / 'copy.yaml'}: id: expected the file's name 'copy', got 'flu_fades' "
                        "(a scenario is named by its file: in a copy, set id: copy)"), lines
    assert sum(f"{folder / 'many.yaml'}:" in line for line in lines) == 3, lines
    assert lines[-1].endswith("(4 problems; nothing was run)"), lines
    assert cli("validate", folder).stderr.count("\n") == 4
