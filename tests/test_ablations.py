"""Each bundled scenario passes under the defaults and fails under the ablation it is about."""

from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# scenario, ablation override, the (step, check) that must fail
ABLATIONS = [
    ("milk_allergy", "attention=common_sense", ("milk", "attention")),
    ("milk_allergy_zh", "attention=common_sense", ("milk", "attention")),
    ("field_warmup", "arousal=none", ("warm", "tier")),
    ("deep_memory", "depth=full", ("casual", "absent")),
    ("deep_memory_zh", "depth=full", ("casual", "absent")),
    ("second_thought", "depth=fixed", ("second_try", "recall")),
]


@pytest.mark.parametrize("scenario,override,failing", ABLATIONS, ids=[f"{s}:{o}" for s, o, _ in ABLATIONS])
def test_scenario_fails_under_its_ablation(cli, scenario, override, failing):
    path = SCENARIOS / f"{scenario}.yaml"
    assert cli("check", path).returncode == 0
    r = cli("check", path, override)
    assert r.returncode == 1, r.stdout + r.stderr
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in r.stdout.splitlines()
            if line.startswith(f"| {scenario} ")]
    assert (failing[0], failing[1]) in {(row[2], row[3]) for row in rows}, r.stdout
