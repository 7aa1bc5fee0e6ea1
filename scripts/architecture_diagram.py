"""Draw mtsbench's architecture from its code: which top-level package or module imports which.

    python scripts/architecture_diagram.py [PAGE]    # PAGE default docs/architecture.md; '-' = the block on stdout

The import graph is grimp's (``grimp.build_graph``, the library import-linter checks the
contracts with), built from this repository's ``mtsbench/`` (not whatever copy is installed).
Every module below a top-level package counts as that package: package A depends on B when
some module of A imports some module of B directly (``find_modules_directly_imported_by``).
TYPE_CHECKING imports count, as they do for the contracts.

The drawing is a mermaid ``flowchart TD``, an arrow from importer to imported, so the top
layers come out on top. It is transitively reduced: an arrow already implied by a longer path
of arrows is left out (the caption says how many); the table below it lists every
package-level import, so nothing is lost. An import against the layers of
``[tool.importlinter]`` in pyproject.toml (from a package to one in its own or a higher
layer) is never left out: it is drawn dotted and red, and the caption names it.

The block goes between the page's two marker comments (``START``, ``END``); the rest of the
page is left as it is. Nodes and arrows are sorted, so the same code gives the same bytes.
``make docs`` runs this before building the site; tests/test_architecture_page.py fails when
the committed diagram differs from what this prints, so the diagram cannot go stale.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "architecture.md"
ROOT = "mtsbench"
START = "<!-- diagram:start (scripts/architecture_diagram.py writes what is between these lines) -->"
END = "<!-- diagram:end -->"
AGAINST = "stroke:#d32f2f,stroke-width:2px,color:#d32f2f"


def import_graph():
    """grimp's import graph of this repository's package (no cache written)."""
    sys.path.insert(0, str(REPO))          # this checkout's mtsbench/, before an installed copy
    import grimp

    return grimp.build_graph(ROOT, cache_dir=None)


def layer_ranks(pyproject: Path = REPO / "pyproject.toml") -> dict[str, int]:
    """Top-level name -> its layer's index (0 = top) in the ``layers`` contract; names in one
    layer (``a | b``) share it."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            return {name.strip().removeprefix(f"{ROOT}."): rank
                    for rank, layer in enumerate(contract["layers"])
                    for name in layer.replace(":", "|").split("|")}
    return {}


def dependencies(graph) -> tuple[dict[str, bool], set[tuple[str, str]]]:
    """(top-level name -> whether it is a package, {(importer, imported)}) of the package."""
    children = sorted(graph.find_children(ROOT))
    nodes = {c.removeprefix(f"{ROOT}."): _is_package(c) for c in children}
    edges = set()
    for child in children:
        name = child.removeprefix(f"{ROOT}.")
        for module in {child, *graph.find_descendants(child)}:
            for imported in graph.find_modules_directly_imported_by(module):
                parts = imported.split(".")
                if len(parts) > 1 and parts[0] == ROOT and parts[1] != name and parts[1] in nodes:
                    edges.add((name, parts[1]))
    return nodes, edges


def _is_package(module: str) -> bool:
    """A package without subpackages or modules still has its folder (``mtsbench/NAME/__init__.py``)."""
    return (REPO / Path(*module.split("."))).is_dir()


def reduce(edges: set[tuple[str, str]], ranks: dict[str, int]) -> tuple[list, list]:
    """(the arrows drawn down the layers, the arrows against them), each sorted. An arrow down
    the layers is dropped when another path of such arrows leads to the same place."""
    def down(a: str, b: str) -> bool:
        return a not in ranks or b not in ranks or ranks[a] < ranks[b]

    against = sorted(e for e in edges if not down(*e))
    clean = {e for e in edges if down(*e)}
    after: dict[str, set[str]] = {}
    for a, b in clean:
        after.setdefault(a, set()).add(b)
    reach: dict[str, set[str]] = {}

    def reachable(a: str, seen: frozenset = frozenset()) -> set[str]:
        if a not in reach:
            found: set[str] = set()
            for b in after.get(a, ()):
                if b not in seen:            # a cycle among unranked names: stop there
                    found |= {b} | reachable(b, seen | {a})
            reach[a] = found
        return reach[a]

    drawn = sorted((a, b) for a, b in clean if not any(b in reachable(c) for c in after[a] if c != b))
    return drawn, against


def _label(name: str, package: bool) -> str:
    return f"{name}/" if package else f"{name}.py"


def _node(name: str, package: bool) -> str:
    return f'    {name}["{_label(name, package)}"]' if package else f'    {name}(["{_label(name, package)}"])'


def block(graph=None, ranks: dict[str, int] | None = None) -> str:
    """What goes between the markers: the mermaid block and its caption."""
    nodes, edges = dependencies(graph if graph is not None else import_graph())
    ranks = layer_ranks() if ranks is None else ranks
    drawn, against = reduce(edges, ranks)
    order = sorted(nodes, key=lambda n: (ranks.get(n, len(ranks)), n))
    lines = ["```mermaid", "flowchart TD"]
    lines += [_node(n, nodes[n]) for n in order]
    lines += [f"    {a} --> {b}" for a, b in drawn]
    lines += [f"    {a} -. against the layers .-> {b}" for a, b in against]
    if against:
        lines.append(f"    linkStyle {','.join(str(len(drawn) + i) for i in range(len(against)))} {AGAINST}")
    lines.append("```")
    packages = sum(nodes.values())
    caption = (f"*{len(nodes)} top-level names ({packages} packages, {len(nodes) - packages} modules) and "
               f"{len(edges)} package-level imports; the {len(edges) - len(drawn) - len(against)} that a longer path "
               f"of arrows already implies are left out, {len(drawn) + len(against)} drawn.*")
    if against:
        caption += (f" **{len(against)} against the layers** (dotted, red): "
                    + ", ".join(f"`{a}` → `{b}`" for a, b in against) + ".")
    else:
        caption += " None goes against the layers."
    table = ["| package or module | imports directly (every package-level import, top to bottom) |", "|---|---|"]
    for n in order:
        imported = sorted({b for a, b in edges if a == n}, key=lambda b: (ranks.get(b, len(ranks)), b))
        table.append(f"| `{_label(n, nodes[n])}` | " + (", ".join(f"`{b}`" for b in imported) or "nothing") + " |")
    return "\n".join(lines) + "\n\n" + caption + "\n\n" + "\n".join(table) + "\n"


def write(page: Path, text: str) -> bool:
    """Put ``text`` between the markers of ``page``; returns whether the page changed."""
    old = page.read_text(encoding="utf-8")
    if old.count(START) != 1 or old.count(END) != 1 or old.index(START) > old.index(END):
        raise SystemExit(f"{page}: expected one line {START!r} and, after it, one {END!r}")
    head, rest = old.split(START)
    new = f"{head}{START}\n{text}{END}{rest.split(END, 1)[1]}"
    if new != old:
        page.write_text(new, encoding="utf-8")
    return new != old


def committed(page: Path = PAGE) -> str:
    """What is between the markers of ``page`` now."""
    return page.read_text(encoding="utf-8").split(START, 1)[1].split(END, 1)[0].removeprefix("\n")


def main(argv: list[str]) -> int:
    out = argv[0] if argv else str(PAGE)
    text = block()
    if out == "-":
        sys.stdout.write(text)
    else:
        changed = write(Path(out), text)
        print(f"{out}: diagram {'updated' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
