"""The disk cache of the model embedders (mtsbench.embed.cache), on a stand-in model that
counts what it encodes: needs no optional extra."""

import json
import multiprocessing
import os
import warnings

import numpy as np
import pytest

from mtsbench.embed.cache import CachedModelEmbedder, DiskCache, embeddings_dir, text_key
from mtsbench.embed.hashing import Hashing

TEXTS = ["The user is allergic to milk", "用户对牛奶过敏", "", "A glass of milk", "The user is allergic to milk"]


class Counting(CachedModelEmbedder):
    """A model embedder over the hashing embedder that records every batch it encodes."""

    def __init__(self, batch_size: int = 2, cache: bool = True, cache_dir: str | None = None, dim: int = 32):
        self.batch_size = batch_size
        self.cache = cache
        self.cache_dir = cache_dir
        self.dim_given = dim

    def _model_dim(self) -> int:
        self.__dict__.setdefault("loads_", []).append(1)
        return self.dim_given

    def _namespace(self) -> dict:
        return {"class": "Counting", "dim": self.dim_given}

    def _encode(self, texts):
        self.__dict__.setdefault("encoded_", []).append(list(texts))
        return Hashing(dim=self.dim_given).embed(texts)


def test_cached_vectors_equal_uncached_bit_for_bit(tmp_path):
    uncached = Counting(cache=False).embed(TEXTS)
    first = Counting(cache_dir=str(tmp_path))
    filled = first.embed(TEXTS)
    second = Counting(cache_dir=str(tmp_path))
    read = second.embed(TEXTS)
    assert np.array_equal(uncached, filled) and np.array_equal(uncached, read)
    assert uncached.dtype == read.dtype == np.float32 and not read[2].any()
    assert first.encoded_ == [["The user is allergic to milk", "用户对牛奶过敏", "A glass of milk"]]
    assert "encoded_" not in vars(second) and "loads_" not in vars(second)   # all from disk: no model load
    folder, = tmp_path.iterdir()
    assert json.loads((folder / "about.json").read_text()) == {"dim": 32, "namespace": {"class": "Counting", "dim": 32}}
    key = text_key("A glass of milk")
    assert (folder / key[:2] / f"{key[2:]}.f32").stat().st_size == 32 * 4
    assert not list(folder.rglob("*.tmp"))


def test_only_new_texts_are_encoded_and_in_chunks(tmp_path, monkeypatch):
    from mtsbench.embed import cache

    monkeypatch.setattr(cache, "CHUNK", 1)
    Counting(cache_dir=str(tmp_path)).embed(["a", "b"])
    e = Counting(cache_dir=str(tmp_path), batch_size=2)
    e.embed(["a", "c", "d", "e", "b", "c"])
    assert e.encoded_ == [["c", "d"], ["e"]]          # chunks of CHUNK * batch_size, each stored as done
    e.embed(["e", "d"])
    assert e.encoded_ == [["c", "d"], ["e"]]


def test_cache_off_writes_nothing_and_namespaces_are_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("MTSBENCH_CACHE", str(tmp_path / "home"))
    assert embeddings_dir() == tmp_path / "home" / "embeddings"
    assert embeddings_dir(str(tmp_path / "mine")) == tmp_path / "mine"
    Counting(cache=False).embed(TEXTS)
    assert not (tmp_path / "home").exists()
    Counting().embed(TEXTS)
    Counting(dim=16).embed(TEXTS)
    assert len(list((tmp_path / "home" / "embeddings").iterdir())) == 2


def test_a_file_of_the_wrong_size_is_a_miss(tmp_path):
    Counting(cache_dir=str(tmp_path)).embed(["milk"])
    key = text_key("milk")
    path, = tmp_path.glob(f"*/{key[:2]}/{key[2:]}.f32")
    path.write_bytes(path.read_bytes()[:50])           # as if a write had been cut short
    e = Counting(cache_dir=str(tmp_path))
    assert np.array_equal(e.embed(["milk"]), Counting(cache=False).embed(["milk"]))
    assert e.encoded_ == [["milk"]] and path.stat().st_size == 32 * 4


def test_unwritable_cache_warns_once_and_still_embeds(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    e = Counting(cache_dir=str(blocker / "below"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = e.embed(TEXTS)
        e.embed(["more", "texts"])
    assert np.array_equal(v, Counting(cache=False).embed(TEXTS))
    assert len(caught) == 1 and "not writable" in str(caught[0].message)


def _fill(folder: str, seed: int, out) -> None:
    texts = [f"text number {i}" for i in range(300)]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    e = Counting(cache_dir=folder, batch_size=8)
    vectors = e.embed([texts[i] for i in order])
    out.put(bool(np.array_equal(vectors, Counting(cache=False).embed([texts[i] for i in order]))))


def test_parallel_processes_share_the_cache(tmp_path):
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    jobs = [ctx.Process(target=_fill, args=(str(tmp_path), seed, out)) for seed in range(4)]
    for j in jobs:
        j.start()
    for j in jobs:
        j.join(60)
    assert [j.exitcode for j in jobs] == [0] * 4 and all(out.get(timeout=5) for _ in jobs)
    folder, = tmp_path.iterdir()
    files = list(folder.rglob("*.f32"))
    assert len(files) == 300 and {f.stat().st_size for f in files} == {32 * 4}
    assert not list(folder.rglob("*.tmp"))
    texts = [f"text number {i}" for i in range(300)]
    e = Counting(cache_dir=str(tmp_path))
    assert np.array_equal(e.embed(texts), Counting(cache=False).embed(texts)) and "encoded_" not in vars(e)


def test_disk_cache_round_trip(tmp_path):
    disk = DiskCache(tmp_path, "x", {"a": 1})
    assert disk.dim is None and disk.get(["k" * 64], 3) == {}
    disk.record_dim(3)
    disk.put({"ab" * 32: np.array([1, 2, 3], dtype=np.float32)})
    again = DiskCache(tmp_path, "x", {"a": 1})
    assert again.dim == 3 and again.folder == disk.folder != DiskCache(tmp_path, "x", {"a": 2}).folder
    assert np.array_equal(again.get(["ab" * 32], 3)["ab" * 32], [1, 2, 3])
    assert os.listdir(tmp_path) == [disk.folder.name]


def test_constructor_stores_parameters_only():
    e = Counting()
    assert vars(e) == {"batch_size": 2, "cache": True, "cache_dir": None, "dim_given": 32}


@pytest.mark.parametrize("text", ["", "   "])
def test_blank_text_is_a_zero_row_and_never_stored(tmp_path, text):
    e = Counting(cache_dir=str(tmp_path))
    assert not e.embed([text]).any()
    assert "encoded_" not in vars(e)
