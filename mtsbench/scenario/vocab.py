"""Words and sentence templates for generated dialogue and pre-loaded stores (en, zh).

A *field* is a topic with its own vocabulary: turns about one field draw their content
words from the same list, so the hashing embedder (words and character n-grams) puts
them near each other and regional arousal has something to spread through. Templates
hold the function words; ``{a}``, ``{b}``, ``{c}`` take three field words.

A *needle* is a fact about a person (relation + a generated name): ``state`` plants the
fact with its answer (``{value}``), ``ask`` asks for it without the answer, ``mention``
talks about the person and the attribute without the answer (a re-mention that wakes the
needle up), and ``other`` gives a distracting value for the same attribute.
"""

from __future__ import annotations

FIELDS = {
    "en": {
        "cooking": "recipe pasta risotto sauce garlic basil oven simmer skillet onions broth dough bake "
                   "noodles spices tomato kitchen dumplings curry roast flour butter lentils stew",
        "travel": "flight airport luggage hotel passport itinerary train ticket beach museum map "
                  "suitcase visa tour hostel island journey backpack cruise border layover",
        "work": "meeting deadline project manager report budget client slides office colleague "
                "promotion schedule spreadsheet quarterly presentation contract review agenda",
        "health": "doctor appointment blood pressure vitamins headache clinic prescription sleep "
                  "fever checkup pharmacy symptoms knee therapy dentist cough",
        "garden": "tomatoes compost seedlings soil roses watering hose pruning shears weeds tulips "
                  "greenhouse mulch fertilizer lawn hedge sunflowers herbs",
        "music": "guitar piano chords concert playlist album melody rehearsal violin drums singer "
                 "lyrics band tuning orchestra vinyl chorus",
        "sport": "running marathon football match gym cycling training stretching swimming coach "
                 "tennis league sneakers stamina race yoga",
        "books": "novel chapter author library poetry bookshop mystery paperback reading series "
                 "biography plot characters bookmark trilogy",
        "money": "savings mortgage bank invoice taxes pension interest loan receipts budgeting "
                 "insurance salary stocks rent bills",
        "tech": "laptop phone battery charger update software router password screen keyboard "
                "printer backup cloud app tablet",
        "home": "apartment furniture sofa curtains painting plumber leak heating repairs shelves "
                "carpet landlord balcony laundry vacuum",
        "film": "movie cinema director trailer actors sequel documentary subtitles premiere "
                "thriller comedy popcorn streaming episode",
    },
    "zh": {
        "cooking": "做饭 炒菜 米饭 面条 饺子 酱油 厨房 炖汤 蒸鱼 火锅 辣椒 豆腐 红烧 包子 馒头 调料 烤箱 食谱 葱花 米粉",
        "travel": "旅行 机场 行李 酒店 护照 火车 车票 海边 博物馆 地图 签证 景点 行程 导游 背包 海岛 高铁 航班",
        "work": "开会 截止 项目 经理 报告 预算 客户 加班 办公室 同事 升职 日程 表格 季度 合同 汇报",
        "health": "医生 预约 血压 维生素 头疼 诊所 处方 失眠 发烧 体检 药店 症状 膝盖 理疗 咳嗽 牙医",
        "garden": "番茄 堆肥 幼苗 泥土 玫瑰 浇水 修剪 杂草 郁金香 温室 肥料 草坪 向日葵 花盆 种子",
        "music": "吉他 钢琴 和弦 音乐会 歌单 专辑 旋律 排练 小提琴 架子鼓 歌手 歌词 乐队 唱片 合唱",
        "sport": "跑步 马拉松 足球 健身房 骑车 训练 拉伸 游泳 教练 网球 联赛 球鞋 体力 比赛 瑜伽",
        "books": "小说 章节 作者 图书馆 诗歌 书店 推理 平装 阅读 系列 传记 情节 人物 书签 三部曲",
        "money": "存款 房贷 银行 发票 交税 养老金 利息 贷款 收据 记账 保险 工资 股票 房租 账单",
        "tech": "电脑 手机 电池 充电器 更新 软件 路由器 密码 屏幕 键盘 打印机 备份 云盘 平板",
        "home": "公寓 家具 沙发 窗帘 刷墙 水管 漏水 暖气 维修 书架 地毯 房东 阳台 洗衣 吸尘器",
        "film": "电影 影院 导演 预告片 演员 续集 纪录片 字幕 首映 惊悚片 喜剧 爆米花 剧集 追剧",
    },
}

# What the user says about a field (say), what the agent answers (reply), what is seen (perceive).
SAY = {
    "en": ["I spent the evening on {a} and {b}, and now I keep thinking about {c}.",
           "Today was all about {a}; the {b} took longer than the {c}.",
           "Do you think {a} goes well with {b}? I want to try it with {c}.",
           "My plan for the weekend: {a}, some {b}, maybe {c} if there is time.",
           "I read something about {a} and {b} that changed how I see {c}.",
           "The {a} was fine but the {b} was a mess, and the {c} did not help."],
    "zh": ["今天晚上一直在弄{a}和{b}，现在还在想{c}的事。",
           "今天全是{a}，{b}比{c}花的时间还多。",
           "你觉得{a}和{b}搭不搭？我想配上{c}试试。",
           "周末的计划：{a}，再来点{b}，有空的话弄一下{c}。",
           "我看到一篇讲{a}和{b}的文章，对{c}有了新的看法。",
           "{a}还行，可是{b}一团糟，{c}也没帮上忙。"],
}
REPLY = {
    "en": ["That sounds good; how did the {a} turn out?",
           "Noted. Is the {a} more important to you than the {b}?",
           "I can help you plan the {a} and the {b}."],
    "zh": ["听起来不错，{a}最后怎么样了？",
           "记下了。对你来说{a}比{b}更重要吗？",
           "我可以帮你安排{a}和{b}。"],
}
PERCEIVE = {
    "en": ["A note about {a} and {b} is lying on the desk.",
           "The screen shows a reminder about {a}."],
    "zh": ["桌上放着一张关于{a}和{b}的便条。",
           "屏幕上显示着一条关于{a}的提醒。"],
}

RELATIONS = {
    "en": ["sister", "brother", "cousin", "neighbour", "colleague", "friend", "aunt", "uncle", "boss",
           "roommate", "teacher", "nephew"],
    "zh": ["姐姐", "哥哥", "表妹", "邻居", "同事", "朋友", "阿姨", "叔叔", "老板", "室友", "老师", "侄子"],
}

# Syllables for generated names (people, pets, places): unique per scenario, never a real word.
SYLLABLES = {
    "en": ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "bri", "nu", "zan", "fe", "quo", "lin", "har",
           "ob", "ess", "tam", "ul", "pim", "ras", "wen", "gil", "yor"],
    "zh": list("林芳伟娜静磊洋婷杰雪晨涛悦昊琳宇欣然浩楠彤轩萌朵"),
}

PETS = {"en": ["dog", "cat", "parrot", "rabbit", "horse", "tortoise"], "zh": ["狗", "猫", "鹦鹉", "兔子", "马", "乌龟"]}

# attribute -> (state, ask, mention, values); {rel} {name} {pet} {value} are filled in.
# Values of None are generated names (pets) or places.
NEEDLES = {
    "en": {
        "pet": ("My {rel} {name}'s {pet} is called {value}.", "What is my {rel} {name}'s {pet} called?",
                "My {rel} {name} came over with the {pet} yesterday.", None),
        "hometown": ("My {rel} {name} grew up in {value}.", "Where did my {rel} {name} grow up?",
                     "My {rel} {name} was talking about growing up again.", None),
        "job": ("My {rel} {name} works as a {value}.", "What does my {rel} {name} work as?",
                "My {rel} {name} had a tiring week at work.",
                ["surgeon", "pilot", "carpenter", "librarian", "chemist", "firefighter", "baker", "translator"]),
        "allergy": ("My {rel} {name} is allergic to {value}.", "What is my {rel} {name} allergic to?",
                    "My {rel} {name} had an allergic reaction at dinner.",
                    ["peanuts", "shellfish", "penicillin", "pollen", "wasps", "sesame", "latex", "mangoes"]),
        "birthday": ("My {rel} {name}'s birthday is in {value}.", "When is my {rel} {name}'s birthday?",
                     "I still need a birthday present for my {rel} {name}.",
                     ["January", "March", "April", "June", "August", "October", "November", "December"]),
        "car": ("My {rel} {name} drives a {value}.", "What car does my {rel} {name} drive?",
                "My {rel} {name} picked me up by car this morning.",
                ["red pickup", "blue minivan", "silver hatchback", "black convertible", "white van",
                 "green jeep"]),
    },
    "zh": {
        "pet": ("我{rel}{name}的{pet}叫{value}。", "我{rel}{name}的{pet}叫什么名字？",
                "昨天{rel}{name}带着{pet}来我家了。", None),
        "hometown": ("我{rel}{name}是在{value}长大的。", "我{rel}{name}是在哪里长大的？",
                     "我{rel}{name}又聊起了小时候长大的地方。",
                     ["杭州", "成都", "大连", "昆明", "洛阳", "厦门", "兰州", "桂林"]),
        "job": ("我{rel}{name}的工作是{value}。", "我{rel}{name}是做什么工作的？",
                "我{rel}{name}这周工作特别累。",
                ["外科医生", "飞行员", "木匠", "图书管理员", "化学家", "消防员", "面包师", "翻译"]),
        "allergy": ("我{rel}{name}对{value}过敏。", "我{rel}{name}对什么过敏？",
                    "我{rel}{name}吃饭的时候又过敏了。",
                    ["花生", "海鲜", "青霉素", "花粉", "芒果", "芝麻", "乳胶", "猫毛"]),
        "birthday": ("我{rel}{name}的生日在{value}。", "我{rel}{name}的生日是什么时候？",
                     "我还得给{rel}{name}准备生日礼物。",
                     ["一月", "三月", "四月", "六月", "八月", "十月", "十一月", "十二月"]),
        "car": ("我{rel}{name}开的是一辆{value}。", "我{rel}{name}开的是什么车？",
                "今天早上{rel}{name}开车来接我。",
                ["红色皮卡", "蓝色面包车", "银色两厢车", "黑色敞篷车", "白色货车", "绿色吉普"]),
    },
}


def join_words(words: list[str], language: str) -> str:
    """Words as one text: spaced in English, run together in Chinese.

    >>> join_words(["a", "b"], "en"), join_words(["做饭", "米饭"], "zh")
    ('a b', '做饭米饭')
    """
    return ("" if language == "zh" else " ").join(words)


def field_words(language: str) -> dict[str, list[str]]:
    """Each field's content words.

    >>> len(field_words("en")) == len(field_words("zh")) == 12
    True
    """
    return {name: words.split() for name, words in FIELDS[language].items()}
