"""Dot export of the stream dependency, stream component and macro-node graphs (I-DLV-sr's --export-graphs)."""
from __future__ import annotations

import dataclasses
import re

from srtopo.rules.analysis import analyse
from srtopo.rules.graphs import export_graphs, macro_node_dot, stream_component_dot, stream_dependency_dot
from srtopo.rules.parse import parse_program

# Example 5/6 of the paper (P4), as in test_paper_examples.py
P4 = """a(X) :- b(X) always in [2].
b(Y) :- a(X) in [1], Y=X+1, c(Y).
d(X) :- b(X) at least 2 in [4].
e(X,Y) :- a(X), b(Y).
"""

# Example 3 of the paper (P2)
P2 = "c(X) :- b(X).\nd(X) :- c(X) in [1]."

_ID = r'"((?:[^"\\]|\\.)*)"'
_ARC = re.compile(rf'^\s*{_ID}\s*->\s*{_ID}(?:\s*\[label={_ID}\])?;$')
_NODE = re.compile(rf'^\s*{_ID}(?:\s*\[label={_ID}\])?;$')


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def arcs(dot: str) -> set[tuple[str, str, str]]:
    """(source, target, label) of every line ``"a" -> "b" [label="<"];`` or ``"a" -> "b";`` (label "")."""
    out = set()
    for line in dot.splitlines():
        m = _ARC.match(line)
        if m:
            out.add((_unescape(m[1]), _unescape(m[2]), _unescape(m[3] or "")))
    return out


def nodes(dot: str) -> dict[str, str]:
    """Node ID -> raw label text (the ID itself when there is no label) of every node statement."""
    out = {}
    for line in dot.splitlines():
        m = _NODE.match(line)
        if m:
            out[_unescape(m[1])] = m[2] if m[2] is not None else m[1]
    return out


def sd_arcs(analysis) -> set[tuple[str, str, str]]:
    return {(p, q, d["label"]) for p, q, d in analysis.sd.edges(data=True)}


def test_stream_dependency_graph_of_example_6():
    an = analyse(parse_program(P4))
    dot = stream_dependency_dot(an)
    assert dot.startswith("digraph stream_dependency {\n") and dot.endswith("}\n")
    # worked out by hand: r1, r2 and r3 use non-degenerate streaming literals, r4 plain atoms; c is no head
    expected = {("a/1", "b/1", "<"), ("b/1", "a/1", "<"), ("b/1", "d/1", "<"), ("a/1", "e/2", ""),
                ("b/1", "e/2", "")}
    assert arcs(dot) == expected == sd_arcs(an)
    assert set(nodes(dot)) == {"a/1", "b/1", "d/1", "e/2"} == set(an.sd.nodes)
    assert '  "b/1" -> "d/1" [label="<"];' in dot.splitlines()
    assert '  "a/1" -> "e/2";' in dot.splitlines()


def test_stream_component_graph_of_example_6():
    an = analyse(parse_program(P4))
    dot = stream_component_dot(an)
    assert dot.startswith("digraph stream_component {\n")
    assert set(nodes(dot)) == {"{a/1, b/1}", "{d/1}", "{e/2}"}
    assert arcs(dot) == {("{a/1, b/1}", "{d/1}", "<"), ("{a/1, b/1}", "{e/2}", "")}


def test_macro_node_graph_of_example_6():
    an = analyse(parse_program(P4))
    dot = macro_node_dot(an)
    assert dot.startswith("digraph macro_nodes {\n")
    # {a,b} first (e and d depend on it); e is alongside {a,b} and joins it; d is preceded by {a,b}
    assert len(an.order) == 2
    labels = nodes(dot)
    assert list(labels) == ["M1", "M2"]
    assert labels["M1"].split("\\n") == ["M1", "{a/1, b/1}", "{e/2}"]
    assert labels["M2"].split("\\n") == ["M2", "{d/1}"]
    assert arcs(dot) == {("M1", "M2", "<")}


def test_example_3_gives_two_single_component_macro_nodes():
    an = analyse(parse_program(P2))
    # b is no head predicate; c(X) in [1] is a non-degenerate streaming literal
    assert arcs(stream_dependency_dot(an)) == {("c/1", "d/1", "<")} == sd_arcs(an)
    assert arcs(stream_component_dot(an)) == {("{c/1}", "{d/1}", "<")}
    dot = macro_node_dot(an)
    assert [label.split("\\n") for label in nodes(dot).values()] == [["M1", "{c/1}"], ["M2", "{d/1}"]]
    assert arcs(dot) == {("M1", "M2", "<")}


def test_program_without_arcs():
    an = analyse(parse_program("a(X) :- b(X)."))
    assert arcs(stream_dependency_dot(an)) == set() and set(nodes(stream_dependency_dot(an))) == {"a/1"}
    assert arcs(stream_component_dot(an)) == set() and set(nodes(stream_component_dot(an))) == {"{a/1}"}
    dot = macro_node_dot(an)
    assert arcs(dot) == set() and list(nodes(dot)) == ["M1"]


def test_export_graphs_writes_the_three_files(tmp_path):
    an = analyse(parse_program(P4))
    target = tmp_path / "out" / "graphs"
    paths = export_graphs(an, target)
    assert [p.name for p in paths] == ["stream_dependency.gv", "stream_component.gv", "macro_nodes.gv"]
    assert all(p.parent == target and p.is_file() for p in paths)
    texts = [p.read_text(encoding="utf-8") for p in paths]
    assert texts == [stream_dependency_dot(an), stream_component_dot(an), macro_node_dot(an)]
    assert arcs(texts[0]) == sd_arcs(an)
    # an existing directory is reused
    assert export_graphs(an, str(target)) == paths


def test_output_is_deterministic():
    an = analyse(parse_program(P4))
    renders = (stream_dependency_dot, stream_component_dot, macro_node_dot)
    first = [render(an) for render in renders]
    assert first == [render(an) for render in renders]
    # a fresh analysis, and one of the same rules in reverse order, give the same text
    assert first == [render(analyse(parse_program(P4))) for render in renders]
    reversed_program = "\n".join(reversed(P4.strip().splitlines()))
    assert first == [render(analyse(parse_program(reversed_program))) for render in renders]


def test_quotes_and_backslashes_are_escaped():
    an = analyse(parse_program(P2))
    odd = 'say "hi"\\/1'
    sd = type(an.sd)()                      # predicate names cannot hold quotes: build the graph by hand
    sd.add_edge(odd, "d/1", label="<")
    dot = stream_dependency_dot(dataclasses.replace(an, sd=sd))
    assert '  "say \\"hi\\"\\\\/1" -> "d/1" [label="<"];' in dot.splitlines()
    assert arcs(dot) == {(odd, "d/1", "<")}
