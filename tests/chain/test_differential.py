"""A chain on every runner against the existing pieces run apart, on random TBoxes, programs and streams (fixed
seeds): ``check`` gives the reports (the consistency topology alone on the local runner), a saturation written
here from the TBox's axioms (a fixpoint of one rule per axiom kind, knowing nothing of the product's tables)
withholds and saturates the statements the check accepted, and the program alone reads the kept and entailed
statements as a ``.tnt`` stream (``srtopo reason --stream-format tnt``)."""
from __future__ import annotations

import random
import re

import pytest

from srtopo.chain import chain
from srtopo.concepts import RDF_TYPE
from srtopo.consistency import choose_topology, load_tbox
from srtopo.io.sources import AtomLog, Lines
from srtopo.io.tnt import format_tnt
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalOptions, RunConfig, SparkOptions, get_runner
from srtopo.testing import unsupported
from tests.conftest import RUNNER_VARIANTS
from tests.randomgen import RX, random_owl_tbox, random_statements
from tests.rules.conftest import random_case

SEEDS = range(24)
#: the Spark variants run every fourth seed (a Spark query costs seconds), and one variant takes the executors'
#: paths on every batch (no close on the driver, the program in key-partitioned tasks). A chain's check runs the
#: fused plan when the columnar one is asked for (``ChainOnSpark.options_for``), so the columnar variant (fused,
#: every batch closed in the executors) is the executors' variant's consistency part: it is not run twice.
SPARK_SEEDS = range(0, 24, 4)
VARIANTS = {**{k: v for k, v in RUNNER_VARIANTS.items() if k != "spark-columnar"},
            "spark-executors": ("spark", SparkOptions(driver_lines=0, driver_tuples=0, partitions=2), ("spark",))}
CASES = [(variant, seed) for variant in VARIANTS
         for seed in (SEEDS if VARIANTS[variant][0] == "local" else SPARK_SEEDS
                      if variant != "spark-executors" else SPARK_SEEDS[:4])]
_LINE = re.compile(r"^(-?\d+)\t(<[^>]*>|_:\S+) <([^>]*)> (<[^>]*>|_:\S+|\".*\") \.$")


# --- the saturation, from the axioms alone ---------------------------------------------------------------------

def saturate(statement, ax: dict) -> set[tuple]:
    """Everything the axioms entail from one statement alone, by fixpoint: facts ("type", x, C), ("rel", a, p, b)
    and ("some", x, p, inverse?) for an anonymous successor (what C ⊑ ∃p and the property axioms say about it)."""
    s, p, o, literal = statement
    if literal is not None or o is None:
        return set()
    local = p[len(RX):] if p.startswith(RX) else None
    if p == RDF_TYPE:
        facts = {("type", s, o[len(RX):])} if o.startswith(RX) else set()
    elif local in ax["properties"]:
        facts = {("rel", s, local, o)}
    else:
        return set()
    inverse_of = {(a, b) for a, b in ax["inverse"]} | {(b, a) for a, b in ax["inverse"]}
    while True:
        new = set()
        for fact in facts:
            if fact[0] == "type":
                _, x, c = fact
                new |= {("type", x, d) for a, d in ax["sub"] if a == c}
                new |= {("some", x, q, False) for a, q in ax["some"] if a == c}
            elif fact[0] == "rel":
                _, a, q, b = fact
                new |= {("some", a, q, False), ("some", b, q, True)}
                new |= {("rel", a, r, b) for x, r in ax["subprop"] if x == q}
                new |= {("rel", b, r, a) for x, r in inverse_of if x == q}
                if q in ax["symmetric"]:
                    new.add(("rel", b, q, a))
            else:
                _, x, q, inv = fact
                new |= {("type", x, c) for r, c in (ax["range"] if inv else ax["domain"]) if r == q}
                new |= {("some", x, r, inv) for y, r in ax["subprop"] if y == q}
                new |= {("some", x, r, not inv) for y, r in inverse_of if y == q}
                if q in ax["symmetric"]:
                    new.add(("some", x, q, not inv))
        if new <= facts:
            break
        facts |= new
    out = set()
    for fact in facts:
        if fact[0] == "type":
            out.add((fact[1], RDF_TYPE, RX + fact[2]))
        elif fact[0] == "rel":
            out.add((fact[1], RX + fact[2], fact[3]))
    return out


def parse(text: str):
    time, s, p, o = _LINE.match(text).groups()
    term = (lambda x: x[1:-1] if x.startswith("<") else x)
    return int(time), (term(s), p, None if o.startswith('"') else term(o), o if o.startswith('"') else None)


def oracle(ax, consistency, rules, stream, window, lateness, inconsistent):
    """(reports, models) of the pieces run apart."""
    local = get_runner("local")
    check = local.run(consistency, [Lines(tuple(stream), 1, "s")], RunConfig(window=window, lateness=lateness))
    rejected = {r.line for r in check.rejected}
    reported = {r.key for r in check.reports}
    points: dict[int, list] = {}
    for number, text in enumerate(stream, 1):
        if number in rejected:
            continue
        time, statement = parse(text)
        points.setdefault(time, [])
        s, p, o, _literal = statement
        if inconsistent == "drop" and ((s, time) in reported or (o is not None and p != RDF_TYPE
                                                                  and (o, time) in reported)):
            continue
        points[time].append(format_tnt(time, s, p, o if o is not None else statement[3]))
        points[time] += [format_tnt(time, *triple) for triple in saturate(statement, ax)]
    tnt = []
    for time in sorted(points):         # a time point with statements, all withheld, is still one
        tnt += [f'{{"time": {time}, "atoms": []}}'] + points[time]
    program = local.run(rules, [AtomLog(_write(tnt), "detect")],
                        RunConfig(lateness=0, max_gap=None, print_empty=False))
    return check.reports, program.models


_FILES: list = []


def _write(lines: list[str]) -> str:
    import tempfile
    handle = tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, encoding="utf-8")
    handle.write("\n".join(lines) + "\n")
    handle.close()
    _FILES.append(handle.name)
    return handle.name


def program_text(rng: random.Random, ax: dict, seed: int) -> str:
    """A random stratified program (``tests.rules.conftest.random_case``) whose inputs read triples: e(X) a class
    (or a property's subject), f(X) a property's object (or a class)."""
    body, _stream = random_case(seed)
    cls = RX + rng.choice(ax["classes"])
    prop = RX + rng.choice(ax["properties"])
    head = [f'e(X) :- triple(X, "{RDF_TYPE}", "{cls}").',
            f'e(X) :- triple(X, "{prop}", Y).' if rng.random() < 0.5 else "",
            f'f(Y) :- triple(X, "{RX + rng.choice(ax["properties"])}", Y).',
            f'g(S, P, O) :- triple(S, P, O).']
    return "\n".join(h for h in head if h) + "\n" + body + "\n"


@pytest.mark.parametrize("variant,seed", CASES)
def test_chain_equals_the_pieces_run_apart(request, variant, seed, tmp_path):
    name, options, needs = VARIANTS[variant]
    for fixture in needs:
        request.getfixturevalue(fixture)
    runner = get_runner(name)
    rng = random.Random(seed)
    turtle, ax = random_owl_tbox(rng)
    path = tmp_path / "t.ttl"
    path.write_text(turtle, encoding="utf-8")
    tbox = load_tbox(str(path))
    window = rng.choice([0, 1, 3, 6, None])
    lateness = rng.choice([0, 0, 1, 2, None])
    inconsistent = rng.choice(["drop", "drop", "keep"])
    stream = random_statements(rng, ax, n=rng.randint(15, 45), lateness=lateness or 0)
    consistency = choose_topology(tbox, method=rng.choice(["ntm", "ltm"]))
    rules = compile_program(parse_program(program_text(rng, ax, seed)))
    topology = chain(consistency, rules, tbox, inconsistent)
    source = Lines(tuple(stream), rng.randint(1, 3), "s")
    why = unsupported(runner, topology, [source])
    if why:
        pytest.skip(why)
    config = RunConfig(window=window, lateness=lateness, options=options, print_empty=False,
                       checkpoint=str(tmp_path / "ckpt"))
    result = runner.run(topology, [source], config)
    reports, models = oracle(ax, consistency, rules, stream, window, lateness, inconsistent)
    assert sorted(r.key for r in result.reports) == sorted(r.key for r in reports)
    if isinstance(options, LocalOptions) and options.physical_plan == "indexed":
        assert sorted(result.reports, key=lambda r: r.key) == sorted(reports, key=lambda r: r.key)
    assert [(m.time, m.atoms) for m in result.models] == [(m.time, m.atoms) for m in models]
