"""The package's layering, read from its imports with ``ast`` (issue 26, item 6): no import
circle anywhere (imports inside functions count too), and no import upward — memory takes
nothing from the processes or the LLM layer, the mechanisms nothing from scenarios, the
run writer nothing from the evaluator or the reports, the commands the CLI dispatches to
nothing from the CLI, and the bottom modules nothing of mtsbench at all."""

from __future__ import annotations

import ast
from pathlib import Path

import mtsbench

ROOT = Path(mtsbench.__file__).parent

# importer (a module, or every module of a package) -> what it must not import, and why
UPWARD = {
    "mtsbench.memory": (("mtsbench.processes", "mtsbench.llm", "mtsbench.agent", "mtsbench.systems"),
                        "memory is below the processes and the LLM layer"),
    "mtsbench.mechanisms": (("mtsbench.scenario", "mtsbench.memory", "mtsbench.processes", "mtsbench.llm"),
                            "mechanisms are pure math below everything that uses them"),
    "mtsbench.stream": (("mtsbench.outputs", "mtsbench.evaluate", "mtsbench.report"),
                        "the run writer only writes; its caller evaluates"),
    "mtsbench.calibrate": (("mtsbench.cli",), "a command is below the CLI that dispatches to it"),
    "mtsbench.completion": (("mtsbench.cli",), "a command is below the CLI that dispatches to it"),
}
BOTTOM = ("mtsbench.errors", "mtsbench.units", "mtsbench.costs", "mtsbench.facts")


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ("mtsbench", *path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The mtsbench modules ``name`` imports, anywhere in its file (a name imported from a
    package counts as its submodule when there is one)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith("mtsbench") and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_package_is_found_and_read():
    edges = graph()
    assert len(edges) > 50 and "mtsbench.memory.memory" in edges
    assert "mtsbench.memory.store" in edges["mtsbench.memory.memory"]    # the reader sees imports


def test_no_import_goes_upward():
    wrong = [f"{m} imports {t}: {why}" for m, targets in graph().items() for t in sorted(targets)
             for importer, (forbidden, why) in UPWARD.items()
             if _within(m, importer) and any(_within(t, f) for f in forbidden)]
    assert not wrong, "\n".join(wrong)


def test_the_bottom_modules_import_nothing_of_mtsbench():
    edges = graph()
    assert [m for m in BOTTOM if m not in edges] == []
    assert {m: sorted(edges[m]) for m in BOTTOM if edges[m]} == {}


def test_the_agent_reads_no_private_state_of_its_parts():
    """Issue 26, item 5: state a part keeps for itself (``name_``) is read only by that
    part; the agent reads its own (``self.x_``) and its parts' public methods and values."""
    tree = ast.parse((ROOT / "agent.py").read_text(encoding="utf-8"))
    private = [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
               if isinstance(n, ast.Attribute) and n.attr.endswith("_") and not n.attr.startswith("__")
               and not (isinstance(n.value, ast.Name) and n.value.id == "self")]
    assert not private, private


def test_no_import_circle():
    edges = graph()
    circles, index, low, stack, on = [], {}, {}, [], set()

    def visit(v):        # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on.discard(group[-1])
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, circles
