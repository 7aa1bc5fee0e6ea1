"""The API key never reaches disk or the console through interpolation or an echo (issue 28,
item 3): ``${oc.env:...}`` of the key's variable anywhere but ``llm.api_key_env`` is refused
in one line (exit 2, nothing written, the key not shown), whatever route composes it; a
server echoing the key in a 200 answer leaves it in no line of the recorded cassette."""

import json
from pathlib import Path

import pytest

from mtsbench.llm.testing import FakeOpenAI, task_of, valid_answer

KEY = "sk-test-interp-abcdefghijklmnopqrstuvwxyz"
PLAIN = "plain-secret-value-0123456789"          # not shaped like a key: only its variable tells

READS = [
    ["llm=openai", "llm.model=${oc.env:OPENAI_API_KEY}"],
    ["hydra.run.dir=out_${oc.env:OPENAI_API_KEY}"],
    ["generate.id=${oc.env:OPENAI_API_KEY}"],
    ["generate.id=${oc.decode:${oc.env:OPENAI_API_KEY}}"],
    ["generate.id=${oc.env:${llm.api_key_env}}"],
    ["-m", "generate.id=a,${oc.env:OPENAI_API_KEY}"],
    ["llm=openai", "llm.api_key_env=MY_KEY", "llm.model=${oc.env:MY_KEY}"],
    ["hydra.job.name=${oc.env:HF_TOKEN}"],                         # a variable that says it holds a secret
    ["--cfg", "job", "--resolve", "generate.id=${oc.env:OPENAI_API_KEY}"],
]


def _files_hold(root: Path, secret: str) -> list[Path]:
    """Files under ``root`` whose bytes, or (parquet) whose decoded cells and metadata, hold ``secret``."""
    import pyarrow.parquet as pq

    found = []
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            text += str(table.schema.metadata) + table.to_pandas().astype(str).to_string()
        if secret in text or secret in path.name:
            found.append(path)
    return found


@pytest.mark.parametrize("args", READS, ids=[" ".join(a) for a in READS])
@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["sk-key", "plain-key"])
def test_reading_the_key_into_the_config_is_refused_in_one_line(cli, tmp_path, args, secret):
    env = {"OPENAI_API_KEY": secret, "MY_KEY": secret, "HF_TOKEN": secret}
    r = cli("run", *args, "scenarios=[milk_allergy]", env=env, timeout=120)
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "the key is read only through llm.api_key_env" in r.stderr, r.stderr
    assert secret not in r.stderr and secret not in r.stdout
    assert list(tmp_path.iterdir()) == []                     # no outputs/ folder, no .hydra/


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["sk-key", "plain-key"])
def test_a_config_folder_reading_the_key_is_refused(cli, tmp_path, secret):
    """Composed from a --config-dir option (the first job), from one a sweep reaches, and
    through a variable's name that no text shows (``${oc.env:${llm.model}}``: its value tells;
    Hydra's override grammar takes no nested interpolation, a config file does)."""
    own = tmp_path / "own" / "attention"
    own.mkdir(parents=True)
    (own / "leaky.yaml").write_text("defaults:\n  - associative\n  - _self_\nmotivation: ${oc.env:OPENAI_API_KEY}\n")
    (own / "routed.yaml").write_text("defaults:\n  - associative\n  - _self_\nmotivation: ${oc.env:${llm.model}}\n")
    routed = ["llm=openai", "llm.model=OPENAI_API_KEY", "attention=routed"]
    for args, told in ((["attention=leaky"], "${oc.env:OPENAI_API_KEY} would write the API key"),
                       (["-m", "attention=associative,leaky"], "${oc.env:OPENAI_API_KEY} would write the API key"),
                       (routed, "attention.motivation: resolves to text that holds the API key")):
        r = cli("run", "--config-dir", "own", *args, "scenarios=[milk_allergy]", env={"OPENAI_API_KEY": secret})
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr[-2000:]
        assert told in r.stderr and secret not in r.stderr, r.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["own"]


def test_other_variables_still_interpolate(cli, tmp_path):
    r = cli("run", "generate.id=${oc.env:RUN_ID}", "generate.days=3", "generate.needles=1", "scenarios=[milk_allergy]",
            "hydra.run.dir=run", env={"OPENAI_API_KEY": KEY, "RUN_ID": "nightly_7"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "run" / "generated" / "nightly_7.yaml").is_file()


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["sk-key", "plain-key"])
def test_a_key_echoed_in_a_200_answer_is_in_no_cassette_line(cli, tmp_path, secret):
    def answer(body):                 # the summary quotes the key: later prompts show it too
        if task_of(body) == "summarize":
            return json.dumps({"summary": f"The user said the key is {secret} today.", "facts": [], "events": []})
        return valid_answer(body)

    with FakeOpenAI(answer=answer) as server:
        r = cli("run", "scenarios=[milk_allergy]", "llm=openai", f"llm.base_url={server.url}", "llm.model=m",
                "llm.record=cassette.jsonl", "hydra.run.dir=run", env={"OPENAI_API_KEY": secret})
    assert r.returncode == 0, r.stderr[-2000:]
    lines = (tmp_path / "cassette.jsonl").read_text().splitlines()
    echoed = [json.loads(line) for line in lines if "The user said the key is" in line]
    assert echoed and all("The user said the key is <redacted> today." in json.dumps(e) for e in echoed)
    assert secret not in r.stderr and secret not in r.stdout
    assert _files_hold(tmp_path, secret) == []
