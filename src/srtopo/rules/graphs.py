"""Graphviz dot export of the graphs I-DLV-sr writes with ``--export-graphs`` ("I-DLV-sr: A Stream Reasoning
System based on I-DLV", section 4.1): the stream dependency graph, the stream component graph and the
macro-node graph.

Plain dot text is produced from the networkx graphs of :func:`srtopo.rules.analysis.analyse`, so no Graphviz
binding is needed. Nodes and arcs are sorted, so the same program always gives the same files and they can be
compared or kept under version control.
"""
from __future__ import annotations

from pathlib import Path

from srtopo.rules.analysis import Analysis

_FILE_NAMES = ("stream_dependency.gv", "stream_component.gv", "macro_nodes.gv")


def _quote(text: str) -> str:
    """Dot ID for any text: backslashes and quotes escaped, so names never break the file."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _multiline(lines) -> str:
    """Quoted label with one line per entry (dot's ``\\n`` escape, added after quoting each line)."""
    return '"' + "\\n".join(_quote(line)[1:-1] for line in lines) + '"'


def _component_name(component) -> str:
    return "{" + ", ".join(sorted(component)) + "}"


def _component_key(component) -> tuple:
    return tuple(sorted(component))


def _arc(source: str, target: str, label: str) -> str:
    attrs = f" [label={_quote(label)}]" if label else ""
    return f"  {_quote(source)} -> {_quote(target)}{attrs};"


def _digraph(name: str, body: list[str]) -> str:
    return "\n".join([f"digraph {name} {{", *body, "}"]) + "\n"


def stream_dependency_dot(analysis: Analysis) -> str:
    """G^SD: one node per head predicate ``p/n``; arcs labelled '<' come from non-degenerate streaming literals."""
    sd = analysis.sd
    body = [f"  {_quote(n)};" for n in sorted(sd.nodes)]
    body += [_arc(p, q, d.get("label", "")) for p, q, d in sorted(sd.edges(data=True), key=lambda e: e[:2])]
    return _digraph("stream_dependency", body)


def stream_component_dot(analysis: Analysis) -> str:
    """G^SC: one node per strongly connected component of G^SD, named by its sorted predicates."""
    sc = analysis.sc
    body = [f"  {_quote(_component_name(c))};" for c in sorted(sc.nodes, key=_component_key)]
    edges = sorted(sc.edges(data=True), key=lambda e: (_component_key(e[0]), _component_key(e[1])))
    body += [_arc(_component_name(a), _component_name(b), d.get("label", "")) for a, b, d in edges]
    return _digraph("stream_component", body)


def macro_node_dot(analysis: Analysis) -> str:
    """Macro-nodes ``M1..Mk`` in processing order, chained by arcs in that order.

    Each label lists the macro-node's components (one per line, in evaluation order), so the reader sees both
    the predicates evaluated together and how they group into components. A chain arc is labelled '<' when
    a component of the earlier macro-node precedes one of the later, i.e. when the split was forced."""
    body = []
    for i, macro in enumerate(analysis.order, start=1):
        label = _multiline([f"M{i}", *(_component_name(c) for c in macro)])
        body.append(f"  {_quote(f'M{i}')} [label={label}];")
    for i in range(1, len(analysis.order)):
        earlier, later = analysis.order[i - 1], analysis.order[i]
        forced = any((a, b) in analysis.prec for a in earlier for b in later)
        body.append(_arc(f"M{i}", f"M{i + 1}", "<" if forced else ""))
    return _digraph("macro_nodes", body)


def export_graphs(analysis: Analysis, directory: str | Path) -> list[Path]:
    """Write the three graphs as UTF-8 dot files into ``directory`` (created if missing), as I-DLV-sr does."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, render in zip(_FILE_NAMES, (stream_dependency_dot, stream_component_dot, macro_node_dot)):
        path = out / name
        path.write_text(render(analysis), encoding="utf-8")
        paths.append(path)
    return paths
