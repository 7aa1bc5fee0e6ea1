"""The scenarios in docs/scenarios.md stay valid and passing, so the page cannot rot.

Every ```yaml block of the page whose first line starts with ``id:`` is a complete
scenario: it is written to a temporary file named by its id, and ``mtsbench validate``
must accept it and ``mtsbench check`` (the reference configuration) must pass it.
Blocks that start otherwise (fragments, the broken example) are not run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"
BLOCK = re.compile(r"^```yaml[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
MTSBENCH = Path(sys.executable).parent / "mtsbench"


def doc_scenarios() -> dict[str, str]:
    """id -> YAML text of each ```yaml block of the page that starts with ``id:``."""
    out: dict[str, str] = {}
    for m in BLOCK.finditer(DOC.read_text(encoding="utf-8")):
        text = m.group(1)
        if not text.startswith("id:"):
            continue
        sid = yaml.safe_load(text)["id"]
        assert sid not in out, f"docs/scenarios.md: two scenario blocks with id {sid!r}"
        out[sid] = text
    return out


def mtsbench(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(MTSBENCH), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("doc_scenarios")
    paths = []
    for sid, text in doc_scenarios().items():
        path = folder / f"{sid}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def test_the_page_has_an_english_and_a_chinese_example():
    languages = {yaml.safe_load(text)["language"] for text in doc_scenarios().values()}
    assert {"en", "zh"} <= languages


def test_validate_accepts_every_doc_scenario(written):
    done = mtsbench("validate", *written, cwd=written[0].parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("ok  ") == len(written), done.stdout


def test_check_passes_every_doc_scenario(written, tmp_path):
    done = mtsbench("check", *written, "--out", tmp_path / "run", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    m = re.search(r"(\d+) of (\d+) expectations passed in (\d+) scenarios", done.stdout)
    assert m, done.stdout
    passed, judged, scenarios = map(int, m.groups())
    assert passed == judged > 0 and scenarios == len(written), done.stdout
    assert "unsupported" not in done.stdout.splitlines()[0], done.stdout
