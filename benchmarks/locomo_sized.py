"""Write a synthetic file in LoCoMo's format at the real data set's size, for timing.

    python benchmarks/locomo_sized.py OUT.json [--conversations 1] [--turns 600] [--questions 200]

Each conversation has ``turns`` turns in sessions of 15-30 turns, 1-58 days apart, about
one turn in five with an image caption; ``questions`` questions in LoCoMo's category mix
(about 1/5 adversarial), each citing 1-4 turns whose words it reuses, with a little of the
public file's dirt (joined ids, a malformed id, an empty evidence list). Seeded: the same
arguments give the same file. Not a data set: its text is random words.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timedelta

from mtsbench.core.seeding import generator

WORDS = ("garden pottery violin camping adoption marathon painting museum beach hiking bakery guitar school "
         "conference puppy kitten novel poetry studio festival recipe soup lake mountain bicycle library "
         "dance piano chess yoga parade concert project startup interview promotion wedding birthday").split()
FILLER = "I think that was really nice and we should talk about it again soon with everyone".split()
CATEGORIES = (1, 2, 3, 4, 5)
WEIGHTS = (0.15, 0.16, 0.05, 0.44, 0.20)


def conversation(rng, index: int, turns: int, questions: int) -> dict:
    speakers = ("Avery", "Blake")
    conv = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    when = datetime(2023, 1, 1, 9, 0)
    ids: list[tuple[str, list[str]]] = []
    n, done = 0, 0
    while done < turns:
        n += 1
        size = min(int(rng.integers(15, 31)), turns - done)
        conv[f"session_{n}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y").lstrip("0").lower()
        session = []
        for t in range(size):
            topic = list(rng.choice(WORDS, size=3, replace=False))
            words = topic + list(rng.choice(FILLER, size=int(rng.integers(6, 16))))
            rng.shuffle(words)
            turn = {"speaker": speakers[t % 2], "dia_id": f"D{n}:{t + 1}", "text": " ".join(words) + "."}
            if rng.random() < 0.2:
                turn["blip_caption"] = f"a photo of a {rng.choice(WORDS)}"
            session.append(turn)
            ids.append((turn["dia_id"], topic))
        conv[f"session_{n}"] = session
        done += size
        when += timedelta(days=int(rng.integers(1, 59)), hours=int(rng.integers(-3, 4)))
    qa = []
    for q in range(questions):
        cited = [ids[int(i)] for i in rng.choice(len(ids), size=int(rng.integers(1, 5)), replace=False)]
        category = int(rng.choice(CATEGORIES, p=WEIGHTS))
        evidence = [c[0] for c in cited]
        if q % 50 == 7 and len(evidence) > 1:
            evidence = [f"{evidence[0]}; {evidence[1]}", *evidence[2:]]
        if q % 50 == 13:
            evidence.append("D")
        if q % 50 == 29:
            evidence = []
        topic = " and ".join(w for c in cited for w in c[1][:2])
        item = {"question": f"What did {speakers[q % 2]} say about {topic}?", "evidence": evidence,
                "category": category}
        item["adversarial_answer" if category == 5 else "answer"] = topic
        qa.append(item)
    return {"sample_id": f"synthetic-{index}", "conversation": conv, "qa": qa}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    rng = generator(ns.seed)
    data = [conversation(rng, i, ns.turns, ns.questions) for i in range(ns.conversations)]
    with open(ns.out, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
