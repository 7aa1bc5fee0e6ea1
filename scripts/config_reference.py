"""Write docs/config-reference.md: every config group, option and key of configs/, from the YAML itself.

    python scripts/config_reference.py [OUT]     # OUT default docs/config-reference.md; '-' = stdout

The page lists, for each group (in the order of configs/config.yaml's defaults list, then any
other group folder), its default and every option: the option file's leading comment, its
``_target_``, the groups it overrides (``defaults``) and each key with its value and the
comment on its line (or the comment lines just above it). Then the plain nodes of
config.yaml. Nothing is imported but PyYAML, so the page is the same wherever it is built.
``make docs`` runs it before building the site; tests/test_docs_site.py fails when the
committed page differs from what this prints, so the page cannot go stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs"
OUT = REPO / "docs" / "config-reference.md"
KEY = re.compile(r"^(?P<indent>\s*)(?:-\s+)?(?P<key>[A-Za-z_][\w]*|'[^']*'|\"[^\"]*\"):(?P<rest>.*)$")
SKIP_NODES = {"defaults", "hydra"}   # config.yaml's defaults list is the group table; hydra's own nodes are Hydra's


def _comment_of(rest: str) -> str:
    """The comment of a ``key: value  # comment`` line's rest (quotes respected), or ''."""
    quote = None
    for i, ch in enumerate(rest):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1].isspace()):
            return rest[i + 1:].strip()
    return ""


def _comments(text: str) -> tuple[list[str], dict[str, str]]:
    """(the file's leading comment lines, dotted key -> its comment) of one YAML file."""
    header: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        line = lines[i]
        if line.startswith("#") and not line.startswith("# @package"):
            header.append(line[1:].rstrip()[1:] if line[1:2] == " " else line[1:].rstrip())
        i += 1
    notes: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    above: list[str] = []
    for line in lines[i:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("#").strip())
            continue
        m = KEY.match(line)
        if not m or line.lstrip().startswith("- "):
            above = []
            continue
        indent = len(m.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [m.group("key").strip("'\"")])
        stack.append((indent, m.group("key").strip("'\"")))
        note = " ".join(above + ([_comment_of(m.group("rest"))] if _comment_of(m.group("rest")) else []))
        if note:
            notes[path] = note
        above = []
    return header, notes


def _md(text: str) -> str:
    """Prose from a YAML comment, safe in markdown: ``*``, ``_``, ``<`` and ``|`` escaped outside code spans."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else
                   p.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")
                   .replace("|", "\\|") for p in parts)


def _value(v) -> str:
    """A value as YAML writes it inline."""
    if isinstance(v, (dict, list)) or v is None or isinstance(v, bool):
        text = yaml.safe_dump(v, default_flow_style=True, allow_unicode=True, width=10**6).strip()
        return text[:-4].strip() if text.endswith("\n...") or text.endswith(" ...") else text.removesuffix("...").strip()
    return str(v)


def _flatten(node, prefix: str = ""):
    """(dotted key, value) of every leaf of a mapping; lists and empty mappings are leaves."""
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _flatten(value, path + ".")
        else:
            yield path, value


def _key_table(data: dict, notes: dict[str, str], prefix: str = "") -> list[str]:
    rows = [(k, v) for k, v in _flatten(data) if k not in ("_target_", "defaults")]
    if not rows:
        return []
    out = ["| key | value | note |", "|---|---|---|"]
    for key, value in rows:
        cell = _value(value).replace("|", "\\|")
        out.append(f"| `{prefix}{key}` | `{cell}` | {_md(notes.get(key, ''))} |")
    return out + [""]


def _defaults_line(defaults: list) -> str:
    items = []
    for entry in defaults:
        if isinstance(entry, dict):
            for k, v in entry.items():
                items.append(f"`{k.replace('override ', '').lstrip('/')}={_value(v)}`")
        else:
            items.append(f"`{entry}`")
    return "Defaults list: " + ", ".join(items) + "."


def _groups(primary: dict) -> list[tuple[str, str | None]]:
    """(group, default option) in the order of config.yaml's defaults, then the other folders."""
    order: list[tuple[str, str | None]] = []
    for entry in primary.get("defaults", []):
        if isinstance(entry, dict):
            for k, v in entry.items():
                order.append((k.replace("override ", ""), v))
        elif isinstance(entry, str) and (CONFIGS / f"{entry}.yaml").is_file():   # a config choosing options itself
            inner = yaml.safe_load((CONFIGS / f"{entry}.yaml").read_text(encoding="utf-8")) or {}
            order += [(k.replace("override ", "").lstrip("/"), v) for d in inner.get("defaults", [])
                      if isinstance(d, dict) for k, v in d.items()]
    seen = {g for g, _ in order}
    for folder in sorted(p for p in CONFIGS.rglob("*") if p.is_dir() and any(p.glob("*.yaml"))):
        group = folder.relative_to(CONFIGS).as_posix()
        if group not in seen:
            order.append((group, None))
    return [(g, d) for g, d in order if (CONFIGS / g).is_dir()]


def _option(group: str, path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    header, notes = _comments(text)
    global_pkg = "# @package _global_" in text
    out = [f"### `{group}={path.stem}`", "", f"`configs/{group}/{path.name}`"
           + (" (keys at the top level of the config: `@package _global_`)" if global_pkg else ""), ""]
    if header:
        out += ["  \n".join(_md(line.strip()) for line in header), ""]
    if "_target_" in data:
        out += [f"Target: `{data['_target_']}`", ""]
    if data.get("defaults"):
        out += [_defaults_line(data["defaults"]), ""]
    return out + _key_table(data, notes)


def render() -> str:
    primary_text = (CONFIGS / "config.yaml").read_text(encoding="utf-8")
    primary = yaml.safe_load(primary_text)
    _, primary_notes = _comments(primary_text)
    groups = _groups(primary)
    out = ["# Every option",
           "",
           "<!-- Generated by scripts/config_reference.py from configs/ (make docs); do not edit by hand:",
           "     tests/test_docs_site.py fails when this page differs from the script's output. -->",
           "",
           "Every config group, option and key, read from the YAML files of `configs/`: each option's",
           "own comment, its `_target_` class, what it overrides, and each key with its default and",
           "the comment beside it. Choose an option with `GROUP=OPTION`, set a key with",
           "`GROUP.KEY=VALUE` (`mtsbench run arousal=knn arousal.k=10`); every override is checked",
           "before anything runs. What each group is for: [Config groups](configuration.md).",
           "",
           "| group | default | options |",
           "|---|---|---|"]
    for group, default in groups:
        options = sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))
        anchor = "group-" + group.replace("/", "")
        out.append(f"| [`{group}`](#{anchor}) | {f'`{default}`' if default else '(none)'} | "
                   + ", ".join(options) + " |")
    out += ["", "Plain nodes of `configs/config.yaml` (no options, only keys): "
            + ", ".join(f"[`{k}`](#node-{k})" for k in primary if k not in SKIP_NODES) + ".", ""]
    for group, default in groups:
        out += [f"## Group `{group}`", "",
                f"Default: `{default}`." if default else "Default: none (chosen only when named).", ""]
        files = sorted((CONFIGS / group).glob("*.yaml"), key=lambda p: (p.stem != default, p.stem))
        for path in files:
            out += _option(group, path)
    out += ["## Plain nodes of `configs/config.yaml`", ""]
    for key, value in primary.items():
        if key in SKIP_NODES:
            continue
        out += [f"### Node `{key}`", ""]
        if primary_notes.get(key):
            out += [_md(primary_notes[key]), ""]
        if isinstance(value, dict):
            sub = {k: v for k, v in value.items()}
            if "_target_" in sub:
                out += [f"Target: `{sub['_target_']}`", ""]
            notes = {k[len(key) + 1:]: v for k, v in primary_notes.items() if k.startswith(key + ".")}
            out += _key_table(sub, notes, prefix=key + ".")
        else:
            out += [f"Default: `{_value(value)}`", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    target = argv[0] if argv else str(OUT)
    text = render()
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
