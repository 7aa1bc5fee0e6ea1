"""A researcher's own option file (``--config-dir DIR``) is checked as the packaged ones are:
a misspelled parameter, a value out of its declared range, a ``_target_`` that does not
import and a file that is not YAML are each one line naming the file and the key (the line
and column for YAML), exit 2, before anything runs, from `run`, `check` and a sweep."""

import pytest

from mtsbench.cli import main

TARGET = "_target_: mtsbench.mechanisms.decay.Exponential\n"
CASES = {   # file text -> what the line says after the file's name
    "misspelled": (TARGET + "half_lif: 3\n",
                   "short_decay.half_lif: not a parameter of mtsbench.mechanisms.decay.Exponential "
                   "(did you mean 'short_decay.half_life'?)"),
    "out of range": (TARGET + "half_life: -3\n", "short_decay.half_life: expected a number > 0, got -3"),
    "tab": (TARGET + "half_life:\t3\n",
            "line 2, column 11: not valid YAML: found character '\\t' that cannot start any token"),
    "target typo": ("_target_: mtsbench.mechanisms.decay.Exponentail\nhalf_life: 3\n",
                    "short_decay._target_: cannot import 'mtsbench.mechanisms.decay.Exponentail' "
                    "(did you mean 'mtsbench.mechanisms.decay.Exponential'?)"),
}
COMMANDS = {
    "run": ["run", "short_decay=mine"],
    "check": ["check", "short_decay=mine"],
    "sweep of seeds": ["run", "-m", "short_decay=mine", "seed=0,1"],
    "sweep of options": ["run", "-m", "short_decay=exponential,mine"],
}


@pytest.fixture
def option_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "mine"
    (folder / "short_decay").mkdir(parents=True)
    return folder


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_option_file_is_one_line_naming_it(capsys, option_dir, tmp_path, case, command):
    text, words = CASES[case]
    path = option_dir / "short_decay" / "mine.yaml"
    path.write_text(text)
    code = main([*COMMANDS[command], "scenarios=milk_allergy", "--config-dir", str(option_dir)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"mtsbench: {path.resolve()}: {words}"), err
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "multirun").exists()   # nothing launched


def test_a_value_an_override_sets_is_not_blamed_on_the_file(capsys, option_dir):
    (option_dir / "short_decay" / "mine.yaml").write_text(TARGET + "half_life: 3\n")
    code = main(["check", "short_decay=mine", "short_decay.half_life=0", "--config-dir", str(option_dir)])
    assert code == 2
    assert capsys.readouterr().err == "mtsbench: short_decay.half_life: expected a number > 0, got 0\n"


def test_through_the_installed_command(cli, option_dir):
    (option_dir / "short_decay" / "mine.yaml").write_text(CASES["misspelled"][0])
    r = cli("run", "--config-dir", str(option_dir), "short_decay=mine", "scenarios=milk_allergy")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "mine.yaml: short_decay.half_lif: not a parameter" in r.stderr
