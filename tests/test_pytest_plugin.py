"""The pytest plugin: scenario files as tests, expectations as items (pytester, in a subprocess:
the installed plugin loads through its entry point as it does for a user)."""

import shutil
from pathlib import Path

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent


def scenario_dir(pytester):
    d = pytester.path / "scen"
    d.mkdir()
    shutil.copy(REPO / "scenarios" / "milk_allergy.yaml", d)
    shutil.copy(REPO / "tests" / "data" / "malformed" / "backwards.yaml", d)
    (d / "settings.yaml").write_text("name: not a scenario\nvalue: 3\n")
    return d


def test_a_folder_collects_each_expectation_and_a_malformed_file_fails_once(pytester):
    d = scenario_dir(pytester)
    r = pytester.runpytest_subprocess(str(d), "-v", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=5, failed=1)
    out = r.stdout.str()
    assert "milk:attention PASSED" in out and "settings" not in out
    assert "backwards.yaml: step 1 (milk): at: goes back in time" in out and "Traceback" not in out


def test_overrides_reach_the_run_and_a_failure_reads_as_one_line(pytester):
    d = scenario_dir(pytester)
    r = pytester.runpytest_subprocess(str(d / "milk_allergy.yaml"), "--mtsbench-override", "attention=common_sense",
                           "-p", "no:cacheprovider")
    r.assert_outcomes(passed=4, failed=1)
    r.stdout.fnmatch_lines(["*milk_allergy.yaml step 8 (milk): attention expected >= 6, got 1*"
                            "[[]overrides: attention=common_sense[]]*"])
    bad = pytester.runpytest_subprocess(str(d / "milk_allergy.yaml"), "--mtsbench-override", "attention=comon_sense",
                             "-p", "no:cacheprovider")
    bad.assert_outcomes(failed=5)
    bad.stdout.fnmatch_lines(["*the run failed: *did you mean 'common_sense'*"])


def test_yaml_is_left_alone_unless_named_or_configured(pytester):
    d = scenario_dir(pytester)
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")     # the folder is below the rootdir, not named
    r.assert_outcomes(passed=1)
    pytester.makeini(f"[pytest]\nmtsbench_scenarios = {d.name}\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=6, failed=1)
