"""``mtsbench calibrate``'s command line: compare two runs (``mtsbench.calibration.calibrate``) or, with
``--fit``, fit an error profile from them (``mtsbench.calibration.profile_fit``). Above both, so neither
imports the other's command."""

from __future__ import annotations

import argparse
from pathlib import Path

from .calibrate import markdown, write
from ..errors import ReportError


def calibrate_main(argv: list[str]) -> int:
    from ..errors import fail as _fail

    parser = argparse.ArgumentParser(prog="mtsbench calibrate", description="Compare two runs of the same scenarios "
                                     "task by task (e.g. llm=mock against llm=local): attention, facts, events, "
                                     "impressions, conjectures, expectations.")
    parser.add_argument("a", help="the reference run folder (e.g. the mock's)")
    parser.add_argument("b", help="the run folder compared with it (e.g. a real model's)")
    parser.add_argument("--out", default="calibration", help="report folder (default: ./calibration)")
    parser.add_argument("--same-text", type=float, default=0.75, help="text cosine that matches two keyless facts")
    parser.add_argument("--fit", action="store_true", help="fit an error profile of B's model against A's mock "
                        "instead (mtsbench.calibration.profile_fit): write it to -o, for llm=mock llm.profile=FILE")
    parser.add_argument("-o", "--output", help="with --fit: the profile file to write (YAML)")
    parser.add_argument("--scenarios", help="with --fit: fit on these scenarios only (comma-separated)")
    parser.add_argument("--model", help="with --fit: the model's name, written into the profile")
    ns = parser.parse_args(argv)
    if ns.fit:
        return _fit(ns)
    try:
        c = write(Path(ns.a), Path(ns.b), Path(ns.out), ns.same_text)
    except ReportError as e:
        return _fail(str(e))
    except OSError as e:
        return _fail(f"{getattr(e, 'filename', None) or ns.out}: {e.strerror or e}")
    print(markdown(c).split("\n\n| count")[0])
    print(f"report: {Path(ns.out) / 'calibration.md'}")
    return 0


def _fit(ns) -> int:
    from ..errors import fail as _fail
    from ..errors import ConfigError
    from .profile_fit import fit_main

    if not ns.output:
        return _fail("calibrate --fit: give the profile file to write with -o PROFILE.yaml")
    scenarios = [s.strip() for s in ns.scenarios.split(",") if s.strip()] if ns.scenarios else None
    try:
        p = fit_main(Path(ns.a), Path(ns.b), Path(ns.output), scenarios, ns.same_text, ns.model)
    except (ReportError, ConfigError) as e:
        return _fail(str(e))
    except OSError as e:
        return _fail(f"{getattr(e, 'filename', None) or ns.output}: {e.strerror or e}")
    f, im = p["facts"], p["impressions"]
    print(f"profile: {ns.output} (scenarios: {', '.join(p['fitted_from']['scenarios'])}; "
          f"{p['attention']['pairs']} attention pairs, fact recall {f['recall']}, "
          f"impression recall {im['recall']}, extra impressions per call {im['extra_per_call']})")
    return 0
