"""A number answered as the expectation over its tokens' probabilities, where the server
returns them (OpenAI's ``logprobs``/``top_logprobs``; llama.cpp's server does too).

A small model asked for a score 0-10 answers a few integers (Qwen2.5-Coder-1.5B: 0, 5, 8 or
10), though its probabilities spread over several: the expectation over them is a
continuous score that ranks items the integer ties. ``expected_number`` reads it from the
answer's tokens, each ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}``:

- the number is found in the text the tokens join to (``"key": <number>``), at a token
  boundary (else None: the answer as parsed stands);
- at the number's first token, every alternative digit token is a branch with its
  probability; a branch the model did generate goes on to the next token's alternatives
  (a digit there continues the number, anything else ends it), so a two-token ``10`` is
  weighed as P(1) x [P(0 | 1) x 10 + P(end | 1) x 1];
- an alternative the model did not generate is read as its digits when the number cannot
  go on (``5``: ``50`` is out of range), and is left out when it could (``1`` might have
  been ``1`` or ``10``: that was not observed), as are non-digit tokens where the number
  starts and digits out of range or with a leading zero;
- the expectation is taken over the branches kept (their probabilities renormalised), and a
  fraction the model generated (``7.5``) is kept on its own branch.

None when the tokens hold no such number or no branch; the caller keeps the parsed answer.
"""

from __future__ import annotations

import math
import re
from typing import Sequence


def _number(key: str) -> re.Pattern:
    return re.compile(rf'"{re.escape(key)}"\s*:\s*(\d+(?:\.\d+)?)')


def expected_number(tokens: Sequence[dict], key: str, low: float, high: float) -> float | None:
    """The expectation of the number answered under ``key`` (within ``low``..``high``) over
    the tokens' probabilities (module docstring), rounded to 3 decimals; None if unreadable.

    >>> ln = math.log
    >>> toks = [{"token": '{"score": ', "logprob": 0.0, "top_logprobs": []},
    ...         {"token": "5", "logprob": ln(0.6), "top_logprobs": [{"token": "8", "logprob": ln(0.3)}]},
    ...         {"token": "}", "logprob": 0.0, "top_logprobs": []}]
    >>> expected_number(toks, "score", 0, 10)       # (0.6 x 5 + 0.3 x 8) / 0.9
    6.0
    """
    text = "".join(str(t.get("token", "")) for t in tokens)
    m = _number(key).search(text)
    if m is None:
        return None
    start, generated = m.start(1), float(m.group(1))
    offset = 0
    for i, t in enumerate(tokens):
        end = offset + len(t["token"])
        if offset <= start < end:
            if t["token"][:start - offset].strip():
                return None                       # the number shares its first token with other text
            value = _expect(tokens, i, "", generated, low, high)
            return None if value is None else round(min(max(value, low), high), 3)
        offset = end
    return None


def _alternatives(token: dict) -> dict[str, float]:
    """Probability per stripped token text at one position, the generated token included."""
    out: dict[str, float] = {}
    for alt in token.get("top_logprobs", []):
        text = str(alt.get("token", "")).strip()
        out[text] = max(out.get(text, 0.0), math.exp(float(alt["logprob"])))
    out.setdefault(token["token"].strip(), math.exp(float(token["logprob"])))
    return out


def _expect(tokens: Sequence[dict], i: int, prefix: str, generated: float, low: float, high: float) -> float | None:
    """The expectation of the number from position ``i`` on, given the digits ``prefix``
    chosen so far (all of them the generated ones)."""
    if i >= len(tokens):
        return generated
    gen = tokens[i]["token"].strip()
    total = weight = 0.0
    for text, p in _alternatives(tokens[i]).items():
        if text.isdigit():
            number = prefix + text
            if (len(number) > 1 and number[0] == "0") or not low <= float(number) <= high:
                continue                          # not a JSON number, or out of range
            if text == gen:
                value = _expect(tokens, i + 1, number, generated, low, high)
            elif number == "0" or float(number + "0") > high:
                value = float(number)             # it cannot go on: its value is known
            else:
                continue                          # it could go on ("1" -> "10"): not observed
        elif prefix:
            value = generated if (text == gen and not gen.isdigit()) else float(prefix)
        else:
            continue                              # no number starts with this token
        if value is None:
            continue
        total += p * value
        weight += p
    return total / weight if weight > 0 else None
