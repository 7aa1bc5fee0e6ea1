"""An embedder's chance level: how similar it finds texts that are unrelated.

``CHANCE_TEXTS`` holds, per language, 32 short everyday sentences on 32 different subjects
(no two about the same thing, no cue word of the mock's heuristic salience); every pair of
them is unrelated, so the cosines an embedder gives their 496 pairs are its cosines of
chance. ``chance_level`` reduces them to their mean and standard deviation; ``measure``
embeds the sentences of one language and does so. Whatever reads a cosine against a
threshold reads it in standard deviations above that level, z = (cosine - mean) / sd, so
the threshold means the same for every embedder: the mock's relevance (``mtsbench.llm.mock``)
and regional arousal's reach and amounts (``mtsbench.mechanisms.arousal``, converted by
``mtsbench.memory.memory.Memory``). Fixed texts make the calibration deterministic, cheap
(32 embeddings per language, once per embedder) and independent of the scenario: it never
reads a scenario's texts.
"""

from __future__ import annotations

import numpy as np

from . import Embedder

CHANCE_TEXTS: dict[str, tuple[str, ...]] = {
    "en": (
        'The bus to the stadium was packed on Saturday.',
        'I finally repaired the leaking kitchen tap on Sunday.',
        'My sister is moving to a small town by the sea next spring.',
        'We watched a documentary about volcanoes last night.',
        'The printer in the office has run out of paper.',
        'He has been learning to play the cello for two years.',
        'Our neighbours painted their fence bright yellow.',
        'I bought new running shoes because the old ones wore out.',
        'The museum downtown opens a dinosaur exhibition on Friday.',
        'She baked a lemon cake for the school fundraiser.',
        'It rained so hard that the football match was cancelled.',
        'My phone battery dies before lunch every day.',
        'They adopted a grey kitten from the animal shelter.',
        'I need to renew my passport before the trip to Japan.',
        'The library is closed for renovations until March.',
        'Grandpa still grows tomatoes and beans in his garden.',
        'The new bridge over the river took four years to build.',
        'I spilled coffee on my keyboard during the meeting.',
        'Our team lost the chess tournament in the final round.',
        'She is writing a thesis about medieval trade routes.',
        'The bakery on the corner sells the best croissants.',
        'I forgot my umbrella on the bus yesterday.',
        'The concert tickets sold out in ten minutes.',
        'My cousin works night shifts as a nurse.',
        'We are planting an apple tree in the backyard.',
        'The car needs new tyres before winter.',
        'I have started reading a mystery novel set in Venice.',
        'The heating in the apartment broke during the cold snap.',
        'He collects old postcards from flea markets.',
        'Our flight was delayed because of fog.',
        'I signed up for a pottery class on Thursday evenings.',
        'The supermarket changed where it keeps the rice.',
    ),
    "zh": (
        '周六去体育场的公交车挤满了人。',
        '我周日终于修好了厨房漏水的水龙头。',
        '我姐姐明年春天要搬到海边的小镇。',
        '我们昨晚看了一部关于火山的纪录片。',
        '办公室的打印机没纸了。',
        '他学大提琴已经两年了。',
        '邻居把篱笆刷成了亮黄色。',
        '旧鞋穿坏了，我买了一双新跑鞋。',
        '市中心的博物馆周五开恐龙展。',
        '她为学校募捐烤了一个柠檬蛋糕。',
        '雨下得太大，足球比赛取消了。',
        '我的手机电池每天不到中午就没电了。',
        '他们从动物收容所领养了一只灰色小猫。',
        '去日本之前我得先换护照。',
        '图书馆装修，要到三月才开门。',
        '爷爷还在菜园里种西红柿和豆角。',
        '河上的新桥修了四年。',
        '开会时我把咖啡洒在了键盘上。',
        '我们队在象棋比赛决赛中输了。',
        '她的论文写的是中世纪的贸易路线。',
        '街角那家面包店的羊角面包最好吃。',
        '我昨天把伞忘在公交车上了。',
        '音乐会的票十分钟就卖完了。',
        '我表哥在医院上夜班。',
        '我们在后院种了一棵苹果树。',
        '冬天之前车得换新轮胎。',
        '我开始读一本以威尼斯为背景的侦探小说。',
        '寒潮期间公寓的暖气坏了。',
        '他喜欢在跳蚤市场收集旧明信片。',
        '我们的航班因为大雾延误了。',
        '我报名了周四晚上的陶艺课。',
        '超市把大米换了个地方放。',
    ),
}


def chance_level(vectors: np.ndarray) -> tuple[float, float]:
    """(mean, standard deviation) of the cosines of every pair of distinct rows of unit ``vectors``.

    Three unit vectors whose pairwise cosines are 0, 0.6 and 0.8: mean 1.4 / 3, standard
    deviation sqrt(((0 - m)^2 + (0.6 - m)^2 + (0.8 - m)^2) / 3):

    >>> chance_level(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]))
    (0.466667, 0.339935)
    """
    v = np.asarray(vectors, dtype=float)
    cosines = (v @ v.T)[np.triu_indices(len(v), 1)]
    return round(float(cosines.mean()), 6), round(float(cosines.std()), 6)


def measure(embedder: Embedder, language: str = "en") -> tuple[float, float]:
    """(mean, sd) of ``embedder``'s cosines of unrelated texts: the ``CHANCE_TEXTS`` of
    ``language`` (``zh`` for Chinese, ``en`` for every other language).

    >>> from mtsbench.embed.hashing import Hashing
    >>> measure(Hashing())
    (0.026436, 0.047005)
    """
    return chance_level(embedder.embed(list(CHANCE_TEXTS["zh" if language == "zh" else "en"])))

