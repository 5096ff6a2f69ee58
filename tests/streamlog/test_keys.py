"""The partition key of Streamlog stages: hand-checked programs, the key of the compiled stage (validated, printed
by ``srtopo compile``), and soundness against the oracle of
``tests.streamlog.test_differential`` (the whole program and every fact solved once by clingo) on random programs:
evaluated in key partitions, each on the facts with its key value, a keyed program gives the oracle's output."""
from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from clingo import parse_term

from srtopo.cli import main
from srtopo.errors import TopologyError
from srtopo.ir.topology import ONE_PARTITION, PartitionKey, Topology
from srtopo.streamlog import parse_program
from srtopo.streamlog.compile import compile_program
from srtopo.streamlog.keys import partition_key
from tests.streamlog.test_differential import oracle, program_of, random_case

ROOT = Path(__file__).resolve().parents[2]


def key_of(text: str) -> PartitionKey:
    return partition_key(parse_program(text, "case.sl").check())


# --- hand-checked programs --------------------------------------------------------------------------------------

def test_shortest_paths_join_on_different_positions_and_run_in_one_partition():
    text = (ROOT / "examples" / "shortest-paths.sl").read_text()
    assert key_of(text) == ONE_PARTITION


def test_a_per_sensor_aggregate_is_keyed_by_the_sensor():
    text = "avg(T,S,A) :- reading(T,S,_), A = #sum{ V,T0 : reading(T0,S,V), T0 <= T, T0 >= T - 3 }.\n"
    assert key_of(text) == PartitionKey("S", (("avg/3", 1), ("reading/3", 1)))


def test_negation_and_an_aggregate_over_the_key_are_keyed():
    text = ("first(T,X,V) :- msg(T,X,V), not seen(T,X,V).\n"
            "seen(T,X,V) :- msg(T,X,_), msg(T0,X,V), T0 < T.\n"
            "busy(T,X) :- msg(T,X,_), #count{ V,T0 : msg(T0,X,V), T0 < T, T0 >= T - 5 } >= 3.\n"
            "quiet(T,X) :- first(T,X,_), not busy(T,X), ok(T0,X) : msg(T0,X,_), T0 < T.\n")
    assert key_of(text) == PartitionKey("X", (("busy/2", 1), ("first/3", 1), ("msg/3", 1), ("ok/2", 1),
                                              ("quiet/2", 1), ("seen/3", 1)))


def test_a_join_on_different_positions_runs_in_one_partition():
    assert key_of("link(T,X,Z) :- edge(T,X,Y), edge(T,Y,Z).\n") == ONE_PARTITION
    # edge holds Y at argument 3 in one goal and at argument 2 in the other
    assert key_of("hop(T,Y) :- edge(T,X,Y), edge(T,Y,Z).\n") == ONE_PARTITION


def test_a_key_position_that_is_not_argument_2_is_found():
    text = "out(T,B,A) :- pair(T,A,B), not blocked(T,B).\n"
    assert key_of(text) == PartitionKey("B", (("blocked/2", 1), ("out/3", 1), ("pair/3", 2)))


def test_a_key_bound_only_by_a_background_predicate_is_not_keyed():
    text = ("sensor(s1). sensor(s2). slot(1..4).\n"
            "missing(T,S) :- sensor(S), slot(T), not reading(T,S,_).\n"
            "alarm(T,S) :- missing(T,S), missing(T0,S), T0 = T - 1.\n")
    assert key_of(text) == ONE_PARTITION
    # without that rule every atom carries S at argument 2, bound by reading: keyed
    assert key_of("sensor(s1).\nhigh(T,S) :- reading(T,S,V), sensor(S), V > 30.\n") == \
        PartitionKey("S", (("high/2", 1), ("reading/3", 1)))


def test_a_wildcard_or_a_term_at_the_key_position_is_not_a_key():
    assert key_of("any(T,X) :- a(T,X), not b(T,_).\n") == ONE_PARTITION
    assert key_of("next(T,X) :- a(T,X), not a(T,X+1).\n") == ONE_PARTITION


def test_a_predicate_with_the_timestamp_only_has_no_key():
    assert key_of("tick(T) :- a(T,X).\n") == ONE_PARTITION
    assert key_of("b(T,X) :- a(T,X), tick(T).\n") == ONE_PARTITION


def test_a_uts_predicate_is_keyed_in_its_stamped_form():
    """``darc(X,Y)`` read with ``uts(T)`` is stored ``darc(T,X,Y)``: argument 2 of darc/3 is the written X."""
    text = ("single(T,X,Y) :- darc(X,Y), uts(T).\n"
            "fresh(T,X,Y) :- single(T,X,Y), not single(T0,X,Y) : single(T0,X,_), T0 < T.\n")
    program = parse_program(text, "uts.sl").check()
    assert program.uts == {("darc", 2)} and ("darc", 3) in program.inputs
    assert partition_key(program) == PartitionKey("X", (("darc/3", 1), ("fresh/3", 1), ("single/3", 1)))
    swapped = "single(T,Y,X) :- darc(X,Y), uts(T).\nback(T,Y) :- single(T,Y,_).\n"
    assert key_of(swapped) == PartitionKey("Y", (("back/2", 1), ("darc/3", 2), ("single/3", 1)))


def test_a_program_fact_of_a_temporal_predicate_is_routed_by_its_key_and_keys_nothing():
    text = "seen(T,X) :- msg(T,X).\nseen(0,boot).\nagain(T,X) :- msg(T,X), seen(T0,X), T0 < T.\n"
    program = parse_program(text, "facts.sl").check()
    assert [str(f) for f in program.timed_facts] == ["seen(0,boot)"]
    assert partition_key(program) == PartitionKey("X", (("again/2", 1), ("msg/2", 1), ("seen/2", 1)))


def test_the_first_key_in_sorted_order_is_taken():
    # both arguments of pair/3 carry one variable in every atom: the lowest position wins
    text = "same(T,A,B) :- pair(T,A,B), not other(T,A,B).\n"
    assert key_of(text) == PartitionKey("A", (("other/3", 1), ("pair/3", 1), ("same/3", 1)))
    # the key's name is the first rule's variable, positions as found
    text = "b(T,Y) :- a(T,Y).\nc(T,Z) :- b(T,Z).\n"
    assert key_of(text) == PartitionKey("Y", (("a/2", 1), ("b/2", 1), ("c/2", 1)))


# --- the topology: compile, validate, print -------------------------------------------------------------------------

def test_the_compiled_stage_carries_the_key_and_validation_refuses_a_wrong_one():
    topology = compile_program(parse_program((ROOT / "examples" / "sensors.sl").read_text(), "sensors.sl"))
    stage = topology.stages[0]
    assert stage.key == PartitionKey("S", (("earlier/2", 1), ("reading/3", 1), ("record/3", 1)))
    assert Topology.from_dict(json.loads(topology.to_json())) == topology

    def with_key(*positions):
        return replace(topology, stages=(replace(stage, key=PartitionKey("S", positions)),))
    with pytest.raises(TopologyError, match="stage 'streamlog': key position on msg/2, which it does not read"):
        with_key(("earlier/2", 1), ("msg/2", 1), ("reading/3", 1), ("record/3", 1)).validate()
    with pytest.raises(TopologyError, match="stage 'streamlog': key position 0 on reading/3"):
        with_key(("earlier/2", 1), ("reading/3", 0), ("record/3", 1)).validate()
    with pytest.raises(TopologyError, match="stage 'streamlog': key position 2 on earlier/2"):
        with_key(("earlier/2", 2), ("reading/3", 1), ("record/3", 1)).validate()
    with pytest.raises(TopologyError, match=r"stage 'streamlog': .*one key position for each .*\(record/3\)"):
        with_key(("earlier/2", 1), ("reading/3", 1)).validate()
    # validation checks the key's form (the analysis says which key is sound)
    with_key(("earlier/2", 1), ("reading/3", 2), ("record/3", 2)).validate()


def test_compile_prints_the_key(capsys):
    assert main(["compile", "--program", str(ROOT / "examples" / "shortest-paths.sl"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["stages"][0]["key"] == {"name": "", "positions": []}
    assert main(["compile", "--program", str(ROOT / "examples" / "sensors.sl"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["stages"][0]["key"] == {"name": "S", "positions": [["earlier/2", 1], ["reading/3", 1],
                                                                    ["record/3", 1]]}
    assert main(["compile", "--program", str(ROOT / "examples" / "sensors.sl")]) == 0
    assert "stage streamlog: key S (earlier/2 arg 2, reading/3 arg 2, record/3 arg 2), parallelism 1" \
        in capsys.readouterr().out


def test_the_sensors_example_gives_its_records(capsys):
    """Hand-checked: s1 reads 20, 22, 21, 25 and s2 31, 30, 33, 32; a record beats every earlier reading."""
    assert main(["streamlog", "--program", str(ROOT / "examples" / "sensors.sl"),
                 "--stream", str(ROOT / "examples" / "sensors.txt")]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out == [{"time": 2, "atoms": ["record(2,s1,22)"]}, {"time": 3, "atoms": ["record(3,s2,33)"]},
                   {"time": 5, "atoms": ["record(5,s1,25)"]}]


# --- soundness against the oracle ------------------------------------------------------------------------------------

KEYS = (1, 2, 3)
VALUES = (1, 2, 3)
INPUTS = (("a", 2), ("b", 3), ("e", 4))
LIMIT = 12


class KeyedGenerator:
    """A random Streamlog program that tends to keep one variable K at argument 2 of every atom: rules over inputs
    ``a(T,K)``, ``b(T,K,Y)``, ``e(T,K,X,Y)`` and the predicates defined before them (and themselves at earlier
    timestamps), with negation, aggregates, conditions and recursion; now and then a rule breaks the key (the key
    at another argument, ``_`` there, a join across key values, an aggregate over every key, a key bound only by
    a background predicate). ``facts`` are the program's facts of temporal predicates."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.background: set[str] = set()
        self.facts: list[str] = []
        self.broken = False

    def goal(self, rel, t: str, key: str, rest=()) -> str:
        """``rel(t,key,...)``: the rest filled from ``rest`` then with ``_``."""
        fill = list(rest)[:rel[1] - 2]
        fill += ["_"] * (rel[1] - 2 - len(fill))
        return f"{rel[0]}({','.join([t, key] + fill)})"

    def anchor(self, t: str, head, pool) -> list[str]:
        """Positive goals at ``t`` binding K (and Y for a head of arity 3)."""
        rng = self.rng
        if head[1] == 2:
            return [self.goal(rng.choice(pool), t, "K")]
        wide = [r for r in pool if r[1] >= 3]
        rel = rng.choice(wide)
        rest = ("Y",) if rel[1] == 3 else rng.choice([("Y", "_"), ("_", "Y")])
        return [self.goal(rel, t, "K", rest)]

    def filter(self, head, pool) -> list[str]:
        rng = self.rng
        choice = rng.random()
        if choice < 0.4:
            return []
        if choice < 0.65:
            return [self.goal(rng.choice(pool), "T", "K")]
        if choice < 0.8 and head[1] == 3:
            return [rng.choice(["Y != K", "Y < 3", "K < 3"])]
        self.background.add("small(1). small(2).")
        return [rng.choice(["small(K)", "small(Y)" if head[1] == 3 else "small(K)"])]

    def closed(self, rel, t: str, head) -> str:
        """``rel(t,K,...)`` over the head's variables only (``_`` for the rest), safe under ``not``."""
        return self.goal(rel, t, "K", ("Y",) if head[1] == 3 and self.rng.random() < 0.5 else ())

    def rule(self, head, pool, recursive: bool) -> list[str]:
        rng = self.rng
        h = self.goal(head, "T", "K", ("Y",))
        kinds = ["plain", "earlier", "neg-now", "neg-earlier", "agg-threshold", "strict", "conditional"]
        if head[1] == 3:
            kinds.append("agg-value")
        if recursive:
            kinds += ["earlier-self", "step-self"]
        kind = rng.choice(kinds)
        if kind == "plain":
            body = self.anchor("T", head, pool) + self.filter(head, pool)
        elif kind in ("earlier", "earlier-self"):
            other = head if kind == "earlier-self" else rng.choice(pool)
            cmp = rng.choice(["T0 < T", "T0 < T, T0 >= T - 3", "T0 = T - 1"] + ([] if recursive else ["T0 <= T"]))
            body = self.anchor("T", head, pool) + [self.goal(other, "T0", "K"), cmp]
        elif kind == "neg-now":
            body = self.anchor("T", head, pool) + ["not " + self.closed(rng.choice(pool), "T", head)]
        elif kind == "neg-earlier":
            q = head if recursive and rng.random() < 0.4 else rng.choice(pool)
            body = self.anchor("T", head, pool) + ["not " + self.closed(q, "T0", head)]
            if rng.random() < 0.6:
                body += [self.goal(rng.choice(pool), "T0", "K"), "T0 < T"]
            else:
                body += ["T0 = T - 1"]
        elif kind == "agg-value":
            rel = rng.choice([r for r in pool if r[1] >= 3])
            func = rng.choice(["count", "sum"])
            cmp = rng.choice(["T0 <= T", "T0 < T", "T0 = T"])
            h = self.goal(head, "T", "K", ("N",))
            body = [self.goal(rng.choice(pool), "T", "K"),
                    f"N = #{func}{{ Z,T0 : {self.goal(rel, 'T0', 'K', ('Z',))}, {cmp} }}"]
        elif kind == "agg-threshold":
            r = head if recursive and rng.random() < 0.4 else rng.choice(pool)
            bound = rng.choice([">= 2", "<= 1", "= 0", "> 2"])
            body = self.anchor("T", head, pool) + [
                f"#count{{ T0 : {self.goal(r, 'T0', 'K')}, T0 < T, T0 >= T - 4 }} {bound}"]
        elif kind == "strict":
            body = self.anchor("T0", head, pool) + [rng.choice(["T = T0 + 1", "T = T0 + 2"])]
            if rng.random() < 0.3:
                body.append("not " + self.closed(rng.choice(pool), "T0", head))
        elif kind == "step-self":
            body = [self.goal(head, "T0", "K", ("Y",)), "T = T0 + 1", f"T <= {LIMIT}"]
            if rng.random() < 0.5:
                body.append("not " + self.closed(rng.choice(pool), "T0", head))
        else:  # conditional
            r = rng.choice(pool + ([head] if recursive else []))
            lit = self.closed(r, "T0", head)
            if r != head and rng.random() < 0.4:
                lit = f"not {lit}"
            cmp = "T0 < T" if r == head else rng.choice(["T0 < T", "T0 <= T"])
            body = self.anchor("T", head, pool) + [f"{lit} : {self.goal(rng.choice(pool), 'T0', 'K')}, {cmp}"]
        return [f"{h} :- {', '.join(body)}."]

    def breaking(self, head, pool) -> list[str]:
        """A rule with no key at argument 2 (some of them keyed elsewhere)."""
        rng = self.rng
        self.broken = True
        h = self.goal(head, "T", "K", ("Y",))
        wide = [r for r in pool if r[1] >= 3]
        kinds = ["swapped", "wildcard", "cross", "everyone"] + (["background"] if head[1] == 2 else [])
        kind = rng.choice(kinds)
        if kind == "swapped":
            rel = rng.choice(wide)
            body = [self.goal(rel, "T", "Y" if head[1] == 3 else "_", ("K",))]
        elif kind == "wildcard":
            body = self.anchor("T", head, pool) + [rng.choice([
                "not " + self.goal(rng.choice(pool), "T", "_"),
                f"#count{{ T0 : {self.goal(rng.choice(pool), 'T0', '_')}, T0 < T }} >= 2"])]
        elif kind == "cross":
            rel = rng.choice(wide)
            body = [self.goal(rel, "T", "K", ("J",) if rel[1] == 3 else rng.choice([("J", "_"), ("_", "J")])),
                    self.goal(rng.choice(pool), "T", "J")]
            if head[1] == 3:
                body.append(self.goal(rng.choice(wide), "T", "K", ("Y",)))
            if head[1] == 3:
                body[-1] = self.goal(rng.choice(wide), "T", "K", ("Y",))
        elif kind == "everyone":
            h = self.goal(head, "T", "K", ("N",))
            body = [self.goal(rng.choice(pool), "T", "K")]
            if head[1] == 3:
                body.append(f"N = #count{{ J : {self.goal(rng.choice(pool), 'T', 'J')} }}")
            else:
                body.append(f"#count{{ J : {self.goal(rng.choice(pool), 'T', 'J')} }} >= 2")
        else:
            self.background.add("key(1..3). slot(0..8).")
            body = ["key(K)", "slot(T)", "not " + self.goal(rng.choice(pool), "T", "K")]
        return [f"{h} :- {', '.join(body)}."]

    def program(self, breaking: float) -> str:
        rng = self.rng
        pool = [r for r in INPUTS if r[1] < 4 or rng.random() < 0.5]
        rules = []
        derived = []
        if rng.random() < 0.3:
            rules += ["r(T,K,X,Y) :- e(T,K,X,Y).", "r(T,K,X,Z) :- r(T,K,X,Y), e(T,K,Y,Z)."]
            pool.append(("r", 4))
            derived.append(("r", 4))
        for i in range(rng.randint(2, 4)):
            head = (f"p{i}", rng.choice((2, 3)))
            rules += self.breaking(head, pool) if rng.random() < breaking else self.rule(head, pool, False)
            for _ in range(rng.randint(0, 2)):
                rules += self.rule(head, pool, recursive=True)
            pool.append(head)
            derived.append(head)
        if rng.random() < 0.25:
            name, k = rng.choice(derived)
            fact = f"{name}({rng.randint(0, 6)},{','.join(str(rng.choice(KEYS)) for _ in range(k - 1))})."
            self.facts.append(fact)
        if rng.random() < 0.3:
            rules += [f"#show {name}/{k}." for name, k in rng.sample(derived, rng.randint(1, len(derived)))]
        return "\n".join(sorted(self.background) + rules) + "\n"


def random_facts(rng: random.Random) -> list[str]:
    facts = []
    for t in range(rng.randint(4, 9)):
        for _ in range(rng.randint(1, 4)):
            name, k = rng.choice(INPUTS)
            args = [t, rng.choice(KEYS)] + [rng.choice(VALUES) for _ in range(k - 2)]
            facts.append(f"{name}({','.join(map(str, args))}).")
    return facts


def keyed_case(seed: int) -> tuple[str, list[str], list[str]]:
    """(rules, the program's timed facts, stream facts) of one random program."""
    rng = random.Random(seed)
    gen = KeyedGenerator(rng)
    text = gen.program(breaking=0.2)
    return text, gen.facts, random_facts(rng)


def by_time(result) -> dict:
    return {t: set(atoms) for t, atoms in result}


def split_evaluation(text: str, timed: list[str], facts: list[str], positions: dict) -> dict:
    """The union per timestamp of the oracle on each key partition: the rules with the program's timed facts and
    the stream facts whose key value (at their predicate's key position) is the partition's; facts of predicates
    the program does not read reach no partition."""
    parts: dict = {}
    for fact in timed + facts:
        sym = parse_term(fact.strip()[:-1])
        sig = f"{sym.name}/{len(sym.arguments)}"
        if sig in positions:
            parts.setdefault(str(sym.arguments[positions[sig]]), ([], []))[fact in timed].append(fact)
    union: dict = {}
    for stream, program_facts in parts.values():
        for t, atoms in oracle(text + "".join(f + "\n" for f in program_facts), stream):
            union.setdefault(t, set()).update(atoms)
    return union


SEEDS = range(160)


@pytest.mark.slow
def test_keyed_random_programs_evaluated_per_key_give_the_oracles_output():
    keyed = unkeyed = differs = spans = 0
    for seed in SEEDS:
        text, timed, facts = keyed_case(seed)
        program = parse_program(text + "".join(f + "\n" for f in timed), "rand.sl").check()
        key = partition_key(program)
        whole = by_time(oracle(text + "".join(f + "\n" for f in timed), facts))
        if key.keyed:
            keyed += 1
            positions = dict(key.positions)
            assert set(positions) == {f"{n}/{k}" for n, k in program.temporal}
            assert compile_program(program).stages[0].key == key        # and the IR's validation accepts it
            split = split_evaluation(text, timed, facts, positions)
            assert split == whole, f"seed {seed}: keyed by {key}\n{text}{timed}\nfacts {facts}\n" \
                                   f"split {split}\nwhole {whole}"
            derived_keys = {parse_term(atom).arguments[positions[f"{parse_term(atom).name}/"
                                                                 f"{len(parse_term(atom).arguments)}"]]
                            for atoms in whole.values() for atom in atoms}
            spans += len(derived_keys) >= 2
        else:
            unkeyed += 1
            # split by argument 2 anyway: the analysis is not vacuous when that often goes wrong
            positions = {f"{n}/{k}": 1 for n, k in program.temporal}
            differs += split_evaluation(text, timed, facts, positions) != whole
    assert keyed >= 60 and unkeyed >= 20, (keyed, unkeyed)
    assert spans >= 0.6 * keyed, f"only {spans} of {keyed} keyed programs derive atoms of two key values or more"
    assert differs >= 5, f"splitting an unkeyed program by argument 2 changed the output only {differs} times"


@pytest.mark.slow
def test_the_differential_suites_programs_that_come_out_keyed_are_sound_too():
    """The evaluator's random programs (``random_case``), made with no key in mind: those the analysis keys (often
    at another argument than 2) evaluated per key give the oracle's output."""
    keyed = 0
    for seed in range(240):
        text, _features, feeds = random_case(seed)
        program = program_of(text)
        key = partition_key(program)
        if not key.keyed:
            continue
        keyed += 1
        timed = [f"{f}." for f in program.timed_facts]
        rules = "".join(line + "\n" for line in text.splitlines() if line not in timed)
        facts = [line for _s, _n, line in feeds[1] if not line.startswith("#")]
        whole = by_time(oracle(text, facts))
        split = split_evaluation(rules, timed, facts, dict(key.positions))
        assert split == whole, f"seed {seed}: keyed by {key}\n{text}\nfacts {facts}"
    assert keyed >= 10, keyed
