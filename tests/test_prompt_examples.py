"""The prompts show no concrete example a small model copies into its answers (issue 27, item 6).

Qwen2.5-Coder-1.5B copied "muddy boots by the door" into 6 of 20 infer answers and gave event
categories the ``course.`` prefix of the summarize example; the templates now show the form of a
key or category (``user.<area>.<detail>``, ``<kind>.<detail>``), not an instance of one. And
the infer prompt says a listed open key is only for an impression stating the same thing: the
model filed an unrelated remark (a lunch) under a listed ``illness`` key.
"""

from __future__ import annotations

import pytest

from mtsbench.llm.base import Item, Known
from mtsbench.llm.tasks import REGISTRY

RETIRED = ("muddy", "boots", "course.sailing", "renovation.bathroom", "user.skill.chess", "沾泥", "靴子")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_template_shows_a_retired_example(name):
    for language, template in REGISTRY[name].templates.items():
        shown = [r for r in RETIRED if r in template.lower()]
        assert not shown, f"{name}.{language} still shows {shown}"


@pytest.mark.parametrize("language, says", [("en", "about anything else needs a new key"), ("zh", "关于其他事情的印象需要一个新 key")])
def test_infer_keeps_unrelated_information_off_a_listed_key(language, says):
    prompt = REGISTRY["infer"].prompt(Item("Lunch was a bowl of noodles.", "say", "s1", language), [],
                                      [Known("illness", "The user is getting ill", 0.7)])
    assert "- illness" in prompt and says in prompt
    assert prompt.index("Lunch was a bowl") < prompt.index("- illness")    # the item first, then the keys in use


@pytest.mark.parametrize("language", ["en", "zh"])
def test_summarize_shows_the_form_of_a_category_not_an_instance(language):
    template = REGISTRY["summarize"].templates[language]
    assert "user.<" in template and ".<" in template.split("user.<", 1)[1]
