"""Draw the import graph of the package from its source, read statically (``ast``): one node per folder of
``src/srtopo`` (``srtopo.testing`` one of its own), an arrow from a folder to each folder it imports, labelled
with the number of (module, imported module) pairs. The bottom modules at the root (errors, concepts, ...), which
every folder imports, are not drawn: each node says how many pairs point at them.

    .venv/bin/python scripts/import_graph.py                # writes docs/import-graph.png, prints the arrows
    .venv/bin/python scripts/import_graph.py --out FILE.png

``tests/test_structure.py`` reads the same graph (``modules``, ``imports``, ``folder_graph``) to check that it has
no cycle."""
from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "srtopo"
#: the modules at the package's root that the picture draws as one node: the bottom every folder may import
ROOT_MODULES = ("srtopo.errors", "srtopo.concepts", "srtopo.interrupt", "srtopo.measure", "srtopo.environment",
                "srtopo.terms")


def modules(top: Path = PACKAGE) -> dict[str, Path]:
    """Module name -> file of every module of the package folder ``top``."""
    out = {}
    for path in sorted(top.rglob("*.py")):
        parts = path.relative_to(top.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(path: Path, name: str) -> set[str]:
    """Every module named by an import statement anywhere in the file (functions included), relative ones
    resolved; ``from a import b`` names both ``a`` and ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def module_graph(mods: dict[str, Path] | None = None) -> nx.DiGraph:
    """Module -> the package's modules it imports (a name imported from a module counts as that module)."""
    mods = modules() if mods is None else mods
    graph = nx.DiGraph()
    graph.add_nodes_from(mods)
    for name, path in mods.items():
        for target in imports(path, name):
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                graph.add_edge(name, target)
    return graph


def folder(module: str) -> str:
    """The node of the folder-level graph: ``srtopo.<subpackage>``, or the module itself at the root."""
    return ".".join(module.split(".")[:2])


def folder_graph(graph: nx.DiGraph | None = None, key=folder) -> nx.DiGraph:
    """The folder-level graph: an arrow per pair of folders, ``imports`` = how many module pairs it stands for."""
    graph = module_graph() if graph is None else graph
    counts = Counter((key(a), key(b)) for a, b in graph.edges if key(a) != key(b))
    out = nx.DiGraph()
    out.add_nodes_from({key(m) for m in graph})
    for (a, b), n in counts.items():
        out.add_edge(a, b, imports=n)
    return out


def picture_node(module: str) -> str | None:
    """The picture's node: the bottom modules are one node; the package's __init__ and __main__ are left out."""
    if module in ("srtopo", "srtopo.__main__"):
        return None
    if module in ROOT_MODULES:
        return "srtopo (root)"
    return folder(module).removeprefix("srtopo.")


def draw(out: Path) -> nx.DiGraph:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graph = module_graph()
    graph.remove_nodes_from([m for m in list(graph) if picture_node(m) is None])
    folders = folder_graph(graph, key=picture_node)
    sizes = Counter(picture_node(m) for m in graph)
    lines = Counter()
    for m in graph:
        lines[picture_node(m)] += len(modules()[m].read_text(encoding="utf-8").splitlines())
    bottom = "srtopo (root)"                 # every folder imports it: its arrows are counts in the labels
    to_bottom = {a: folders.edges[a, b]["imports"] for a, b in folders.edges if b == bottom}
    folders.remove_node(bottom)
    # layers from the bottom: a folder sits one above the highest folder it imports
    layer = {}
    for node in reversed(list(nx.topological_sort(folders))):
        layer[node] = 1 + max((layer[t] for t in folders.successors(node)), default=-1)
    pos = {}
    for level in set(layer.values()):          # one row per layer; rows zigzag so long arrows miss the nodes
        row = sorted(n for n in folders if layer[n] == level)
        for i, node in enumerate(row):
            pos[node] = ((i - (len(row) - 1) / 2) * 2.6 + (1.0 if level % 2 else -1.0), level)
    fig, ax = plt.subplots(figsize=(12, 10))
    nx.draw_networkx_nodes(folders, pos, ax=ax, node_size=5200, node_color="#dfe9f5", edgecolors="#3a5f8a")
    nx.draw_networkx_labels(folders, pos, ax=ax, font_size=9, labels={
        n: f"{n}\n{sizes[n]} modules\n{lines[n]:,} lines" + (f"\n(root: {to_bottom[n]})" if n in to_bottom else "")
        for n in folders})
    for a, b in folders.edges:       # a longer arrow bends more, so that it passes beside the rows between
        rad = 0.08 + 0.07 * (abs(layer[a] - layer[b]) - 1)
        color, style = "#333333", "solid"
        nx.draw_networkx_edges(folders, pos, ax=ax, edgelist=[(a, b)], node_size=5200, arrowsize=14,
                               edge_color=color, style=style, connectionstyle=f"arc3,rad={rad}",
                               width=0.7 + 0.12 * folders.edges[a, b]["imports"])
        nx.draw_networkx_edge_labels(folders, pos, ax=ax, font_size=8, connectionstyle=f"arc3,rad={rad}",
                                     font_color=color, label_pos=0.4,
                                     edge_labels={(a, b): folders.edges[a, b]["imports"]})
    ax.set_title("src/srtopo: folders and their imports (arrow: imports; label: module pairs). "
                 "Imports point down; no cycle.\n"
                 "(root: N): N module pairs into the modules at the root "
                 f"({sizes[bottom]} modules, {lines[bottom]:,} lines: "
                 + ", ".join(m.removeprefix("srtopo.") for m in ROOT_MODULES) + ")",
                 fontsize=10)
    ax.axis("off")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "import-graph.png"), help="the PNG to write")
    args = parser.parse_args(argv)
    folders = draw(Path(args.out))
    for a, b in sorted(folders.edges):
        print(f"{a:16} -> {b:16} {folders.edges[a, b]['imports']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
