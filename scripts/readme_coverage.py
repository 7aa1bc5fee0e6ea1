"""Check that moving text out of a README lost nothing: every block of the old file is still somewhere.

    python scripts/readme_coverage.py OLD_README [ROOT]      # ROOT default: this repository

A block is a heading, a paragraph, a list item, a table row or a fenced code block of the
old file. Each must occur, after normalising (links reduced to their text, whitespace
collapsed, heading marks and bold stripped), in ROOT/README.md or a page of ROOT/docs/.
A block not found as it was is looked up among the new blocks by similarity (difflib): one at
least ``EDITED`` alike is reported as edited, with where it is now; the others as missing.
Exits 1 if any block is missing, else 0.
Used once for the README → docs move of issue 29 (``git show REV:README.md > old.md``).
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

EDITED = 0.8


def normalise(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)        # [text](url) -> text
    text = re.sub(r"^#{1,6}\s+", "", text, flags=re.M)            # heading marks
    text = text.replace("**", "")
    return re.sub(r"\s+", " ", text).strip()


def blocks(text: str) -> list[str]:
    """Headings, paragraphs, list items, table rows and fenced blocks of a markdown text."""
    out: list[str] = []
    lines = text.splitlines()
    i, para = 0, []

    def flush():
        if para:
            out.append("\n".join(para))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("\n".join(lines[i + 1:j]))
            i = j + 1
            continue
        if not line.strip():
            flush()
        elif line.startswith("#") or line.startswith("|"):
            flush()
            out.append(line)
        elif re.match(r"^\s*[-*] ", line) and not line.startswith("  "):
            flush()
            para.append(line)
        else:
            para.append(line)
        i += 1
    flush()
    return [b for b in out if normalise(b) and not re.fullmatch(r"\|[-| ]*\|", b.strip())]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    old = blocks(Path(argv[0]).read_text(encoding="utf-8"))
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    new = {f: [normalise(b) for b in blocks(f.read_text(encoding="utf-8"))] for f in files}
    everything = " ".join(b for bs in new.values() for b in bs)
    edited = missing = 0
    for block in old:
        text = normalise(block)
        if text in everything:
            continue
        ratio, where = max(((m.ratio() if m.quick_ratio() >= EDITED else m.quick_ratio() / 2), f.relative_to(root).as_posix())
                           for f, bs in new.items() for b in bs
                           for m in [difflib.SequenceMatcher(None, text, b, autojunk=False)])
        if ratio >= EDITED:
            edited += 1
            print(f"edited ({ratio:.2f} alike, now in {where}): {text[:120]}")
        else:
            missing += 1
            print(f"missing (no block {EDITED:.0%} alike): {text[:160]}")
    print(f"{len(old)} blocks of {argv[0]}: {len(old) - edited - missing} found as they were, {edited} edited, "
          f"{missing} missing, in README.md and docs/")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
