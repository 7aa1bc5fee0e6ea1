import numpy as np

from mtsbench.embed.hashing import Hashing


def test_deterministic_unit_norm_and_dim():
    e = Hashing(dim=64)
    a = e.embed(["The user is allergic to milk", "用户对牛奶过敏"])
    b = Hashing(dim=64).embed(["The user is allergic to milk", "用户对牛奶过敏"])
    assert a.shape == (2, 64) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)


def test_empty_and_stop_words_give_zero_vector():
    v = Hashing().embed(["", "the a is"])
    assert not v.any()


def test_shared_words_are_closer_than_unrelated_text():
    e = Hashing()
    milk, allergy, weather = e.embed(["A glass of milk is on the table",
                                      "I'm allergic to milk", "Lovely weather for a walk"])
    assert milk @ allergy > 0.1 > abs(milk @ weather)


def test_chinese_bigrams_match():
    e = Hashing()
    a, b, c = e.embed(["桌上有一杯牛奶", "我对牛奶过敏", "今天天气很好"])
    assert a @ b > 0.05 and a @ b > abs(a @ c)


def test_subword_ngrams_link_inflections():
    e = Hashing()
    a, b = e.embed(["allergic", "allergy"])
    assert a @ b > 0.2   # 5 of 9 trigrams shared, words differ: 0.45 / 1.81
