"""Chinese figures draw their Chinese text (issue 29): with no CJK font installed, the panels
of a zh scenario used to read "needs a CJK font: none installed". mtsbench bundles a CJK
font (Noto Sans CJK SC cut to GB2312, SIL OFL: mtsbench/report/fonts/) and registers it
with matplotlib's font_manager; a zh timeline is drawn with its steps' text and without
matplotlib's missing-glyph warning."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace as NS

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from mtsbench.report import timeplots  # noqa: E402
from mtsbench.report.seeds import Config  # noqa: E402
from mtsbench.scenario.loader import load_scenario  # noqa: E402

ZH = Path(__file__).resolve().parent.parent / "scenarios" / "milk_allergy_zh.yaml"


def test_the_bundled_font_is_packaged_with_its_licence_and_draws_the_zh_scenarios():
    from matplotlib.ft2font import FT2Font

    assert timeplots.BUNDLED_CJK.is_file() and (timeplots.BUNDLED_CJK.parent / "OFL.txt").is_file()
    covers = FT2Font(str(timeplots.BUNDLED_CJK)).get_charmap()
    text = "".join(p.read_text(encoding="utf-8") for p in ZH.parent.glob("*_zh.yaml"))
    chinese = {c for c in text if "\u4e00" <= c <= "\u9fff"}
    assert len(chinese) > 100 and not [c for c in chinese if ord(c) not in covers]


def test_a_zh_timeline_draws_its_chinese_text_without_missing_glyphs(tmp_path, drawn, monkeypatch):
    scenario = load_scenario(ZH)
    steps = {s.id: {"text": s.text} for s in scenario.steps if s.id in ("allergy", "bookshop")}
    t = pd.DataFrame({"scenario": scenario.id, "memory": ["allergy"] * 3 + ["bookshop"] * 3,
                      "t": np.array([0.0, 1.0, 3.0] * 2) * 86400, "index": [0, 1, 2] * 2,
                      "long": [5.0, 4.0, 2.0] * 2, "short": [1.0, 0.5, 0.0] * 2, "tier": [0, 0, 1] * 2})
    monkeypatch.setattr(timeplots.data, "timelines", lambda job: t)
    monkeypatch.setattr(timeplots.data, "steps", lambda job, s: steps)
    monkeypatch.setattr(timeplots.data, "cutoffs", lambda job: [])
    monkeypatch.setattr(timeplots.data, "metrics", lambda job: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert timeplots.plot_timeline(Config("system=mts", [NS(ok=True)]), scenario.id, tmp_path / "zh.png")
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert not missing, missing[:3]
    titles = [ax.get_title(loc="left") for ax in drawn[-1].axes if ax.get_title(loc="left")]
    assert any("我对牛奶过敏" in " ".join(title.split()).replace(" ", "") for title in titles), titles
    assert not any("CJK font" in title for title in titles), titles
    assert (tmp_path / "zh.png").stat().st_size > 0
