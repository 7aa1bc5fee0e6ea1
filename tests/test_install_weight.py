"""Install weight: the core install carries no dependency that serves one option only, the
test extra pulls what the tests exercise, and an option chosen without its extra is one line."""

import importlib.metadata
import re
import subprocess
import sys

ONE_OPTION = {"openai": "openai", "hnswlib": "hnsw", "pytest-benchmark": "bench"}   # dependency: its extra


def requirements() -> dict[str, set[str]]:
    """The installed mtsbench's requirements by extra ('' for the core)."""
    out: dict[str, set[str]] = {}
    for req in importlib.metadata.requires("mtsbench") or []:
        name = re.split(r"[ ;<>=!~\[]", req, maxsplit=1)[0].lower()
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", req)
        out.setdefault(extra.group(1) if extra else "", set()).add(name)
    return out


def test_one_option_dependencies_are_extras_and_the_test_extra_has_them():
    reqs = requirements()
    for dep, extra in ONE_OPTION.items():
        assert dep not in reqs[""], f"{dep} serves one option: it belongs in the extra {extra}, not the core"
        assert dep in reqs[extra] and dep in reqs["test"], (dep, extra)
    assert "openai" in reqs["local"] and "openai" in reqs["local-small"]     # llm=local talks through it
    assert {"numpy", "pandas", "hydra-core", "faiss-cpu"} <= reqs[""]


def run_without(module: str, *args: str, tmp_path) -> subprocess.CompletedProcess:
    """``mtsbench ARGS`` in a fresh interpreter where ``module`` cannot be imported (as if its
    extra were not installed)."""
    code = (f"import sys; sys.modules[{module!r}] = None; from mtsbench.cli import main; "
            f"raise SystemExit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-P", "-c", code, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)


def test_a_mock_run_needs_none_of_them(tmp_path):
    code = ("import sys\n"
            "for m in ('openai', 'hnswlib', 'pytest_benchmark'): sys.modules[m] = None\n"
            "from mtsbench.cli import main\n"
            f"raise SystemExit(main(['run', 'scenarios=[milk_allergy]', 'hydra.run.dir={tmp_path / 'job'}']))")
    done = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "job" / "metrics.csv").is_file()


def test_per_tier_index_without_hnswlib_is_one_line(tmp_path):
    done = run_without("hnswlib", "run", "index.graph=per_tier", "scenarios=[milk_allergy]",
                       f"hydra.run.dir={tmp_path / 'job'}", tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("mtsbench: index.graph=per_tier needs hnswlib, an optional extra: pip install "
                           "'mtsbench[hnsw]' (hnswlib is not installed; the default index.graph=shared does "
                           "not need it)\n")


def test_openai_and_local_without_the_client_are_one_line(tmp_path):
    done = run_without("openai", "run", "llm=openai", "llm.base_url=http://127.0.0.1:9/v1", "llm.model=m",
                       "scenarios=[milk_allergy]", f"hydra.run.dir={tmp_path / 'a'}", tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("mtsbench: llm=openai and llm=local need the openai client, an optional extra: "
                           "pip install 'mtsbench[openai]' (or 'mtsbench[local]'; openai is not installed)\n")
    done = run_without("openai", "run", "llm=local", "scenarios=[milk_allergy]", f"hydra.run.dir={tmp_path / 'b'}",
                       tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("mtsbench: llm=local needs the openai client (it talks to its server through it), an "
                           "optional extra: pip install 'mtsbench[local]' (openai is not installed)\n")
