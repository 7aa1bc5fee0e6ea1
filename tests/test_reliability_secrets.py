"""Secrets scrubbed everywhere (issue 16, item 6): a key on the command line is refused in
one line that never shows it and nothing is written; a server echoing the Authorization
header leaves the key in no file of the run (failure.json's traceback included) and not
on stderr."""

import pytest

from mtsbench.errors import redact, register_secret
from mtsbench.llm.testing import FakeOpenAI, Reply

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"

BAD_OVERRIDES = [
    f"llm.api_key={KEY}",
    f"+llm.api_key={KEY}",
    f"++llm.api_key={KEY}",
    "+llm.api_key=hunter2hunter2",
    f"llm.api_key_env={KEY}",
    "llm.api_key_env=sk-abc123456",
    "+llm.token=abcdefgh",
    f"llm.base_url=http://127.0.0.1:9/v1?api_key={KEY}",
]


@pytest.mark.parametrize("override", BAD_OVERRIDES)
@pytest.mark.parametrize("command", [["run"], ["run", "-m"], ["check"]])
def test_a_key_on_the_command_line_is_refused_in_one_line(capsys, monkeypatch, tmp_path, command, override):
    from mtsbench.cli import main     # refused before Hydra's app is called: safe in-process

    monkeypatch.chdir(tmp_path)
    assert main([*command, "llm=openai", "llm.model=m", override]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "llm.api_key_env" in err and "Traceback" not in err, err
    secret = override.partition("=")[2]
    assert KEY not in err and "hunter2" not in err and secret not in err
    assert list(tmp_path.iterdir()) == []                     # nothing written: no outputs/, no .hydra/


@pytest.mark.parametrize("command", [["run"], ["run", "-m"]])
def test_the_installed_command_refuses_it_too(cli, tmp_path, command):
    r = cli(*command, "llm=openai", "llm.model=m", f"+llm.api_key={KEY}")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and KEY not in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_echoed_key_is_in_no_file_and_not_on_stderr(cli, tmp_path):
    with FakeOpenAI() as server:
        server.push(*[Reply(500, content=f"upstream said: Authorization: Bearer {KEY} is invalid")] * 4)
        r = cli("run", "scenarios=[milk_allergy]", "llm=openai", f"llm.base_url={server.url}", "llm.model=m",
                "llm.max_retries=0", f"hydra.run.dir={tmp_path / 'run'}", env={"OPENAI_API_KEY": KEY})
        sent = server.requests[0][0]["authorization"]
    assert sent == f"Bearer {KEY}"                            # the key did go to the server
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert KEY not in r.stderr and "<redacted>" in r.stderr
    failure = tmp_path / "run" / "failure.json"
    assert "Traceback" in failure.read_text() and "<redacted>" in failure.read_text()
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_redact_removes_registered_secrets_and_key_shapes():
    register_secret("plain-secret-value")
    text = redact(f"a plain-secret-value and {KEY} and Bearer abc.def and api_key=xyz and llm.api_key_env=MY_KEY")
    assert "plain-secret-value" not in text and KEY not in text and "abc.def" not in text and "xyz" not in text
    assert "llm.api_key_env=MY_KEY" in text                    # the name of a variable is no secret
