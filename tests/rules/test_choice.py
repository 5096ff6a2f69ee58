"""The choice part of a program (choices, disjunctions, constraints, weak constraints, unstratified negation):
one answer set per time point, an optimal one under weak constraints, or an explicit unsatisfiable record.
Every answer is validated independently: by the problem's own checker (n-Queens Completion, Partner Units),
by brute force over the candidate sets, and unsatisfiable time points by a fresh clingo."""
from __future__ import annotations

import itertools

import clingo
import pytest

from experiments.reconfig import pup, queens
from experiments.reconfig.validate import pairs, satisfiable  # noqa: F401 (tests.spark uses them from here)
from srtopo.errors import ProgramError
from srtopo.io.sources import AtomLog
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalOptions, LocalRunner, RunConfig, SparkRunner
from tests.rules.conftest import reason_cli


def run(tmp_path, program: str, lines: list[str]):
    log = tmp_path / "s.log"
    log.write_text("\n".join(lines) + "\n")
    topology = compile_program(parse_program(program, "p.idlvsr"))
    return LocalRunner().run(topology, [AtomLog(str(log))], RunConfig(lateness=0)).models


@pytest.mark.parametrize("n,seed", [(8, 1), (10, 5)])
def test_queens_completion_stream_every_answer_checked(tmp_path, n, seed):
    stream = queens.qc_stream(n, steps=32, seed=seed)
    models = run(tmp_path, queens.program(n), queens.log_lines(stream))
    assert [m.time for m in models] == list(range(32))
    for model, given in zip(models, stream):
        assert model.satisfiable
        assert queens.check(n, given, pairs(model.atoms, "queen")) == []


@pytest.mark.parametrize("n", [4, 6])
def test_partner_units_stream_every_answer_checked(tmp_path, n):
    instance = pup.double_instance(n)
    stream = pup.pup_stream(n, steps=24, seed=n, alpha=0.7)
    models = run(tmp_path, pup.program(n), pup.log_lines(stream))
    for model, off in zip(models, stream):
        assert model.satisfiable
        assert pup.check(instance, off, pairs(model.atoms, "zone2unit"), pairs(model.atoms, "sensor2unit")) == []


def test_an_unsatisfiable_time_point_is_an_explicit_record_and_the_stream_goes_on(tmp_path):
    n = 8                       # (6 queens have no completion with a corner queen: the verdicts below are clingo's)
    lines = ["0 given(1,1)", "1 given(1,1); given(2,2)", "2 given(1,1); given(1,3)", "3 given(3,1)"]
    models = run(tmp_path, queens.program(n), lines)
    verdicts = [m.satisfiable for m in models]
    assert verdicts == [True, False, False, True]
    for model, line in zip(models, lines):
        facts = [a.strip() for a in line.split(" ", 1)[1].split(";")]
        assert satisfiable(queens.program(n), facts) == model.satisfiable
        if not model.satisfiable:
            assert model.atoms == () and model.to_dict()["unsatisfiable"] is True
        else:
            assert queens.check(n, [tuple(map(int, f[6:-1].split(","))) for f in facts],
                                pairs(model.atoms, "queen")) == []


def test_weak_constraints_give_an_optimal_answer(tmp_path):
    """Pick at least two items, at most one per group, at the least cost: against brute force per time point."""
    program = """
    { pick(X) : item(X,G,C) }.
    :- not 2 { pick(X) }.
    :- pick(X), pick(Y), X < Y, item(X,G,_), item(Y,G,_).
    :~ pick(X), item(X,G,C). [C@1,X]
    #show pick/1.
    """
    lines = ["0 item(1,a,5); item(2,a,3); item(3,b,4); item(4,c,9)",
             "1 item(1,a,2); item(2,b,2); item(3,b,1); item(4,c,1)",
             "2 item(1,a,1); item(2,a,1)"]
    models = run(tmp_path, program, lines)
    for model, line in zip(models, lines):
        items = [clingo.parse_term(a.strip()) for a in line.split(" ", 1)[1].split(";")]
        table = {i.arguments[0].number: (str(i.arguments[1]), i.arguments[2].number) for i in items}
        best = None
        for size in range(2, len(table) + 1):
            for subset in itertools.combinations(table, size):
                if len({table[x][0] for x in subset}) == size:
                    cost = sum(table[x][1] for x in subset)
                    best = cost if best is None else min(best, cost)
        if best is None:
            assert not model.satisfiable
            continue
        chosen = {p[0] for p in pairs(model.atoms, "pick")}
        assert len({table[x][0] for x in chosen}) == len(chosen) >= 2
        assert sum(table[x][1] for x in chosen) == best


def test_maximize_and_priorities(tmp_path):
    program = """
    { on(X) : light(X) }.
    :- on(X), on(Y), X != Y, clash(X,Y).
    #maximize { 1@2,X : on(X) }.
    #minimize { X@1,X : on(X) }.
    """
    models = run(tmp_path, program, ["0 light(1); light(2); light(3); clash(1,2); clash(2,3)"])
    # most lights first (two: 1 and 3), then the smallest sum among those: only {1,3}
    assert pairs(models[0].atoms, "on") == {(1,), (3,)}


def test_disjunction_and_unstratified_negation_give_one_minimal_answer(tmp_path):
    program = """
    a(X) | b(X) :- c(X).
    p(X) :- c(X), not q(X).
    q(X) :- c(X), not p(X).
    both(X) :- a(X), b(X).
    """
    models = run(tmp_path, program, ["0 c(1); c(2)", "1 c(3)"])
    for model, domain in zip(models, ([1, 2], [3])):
        for x in domain:
            assert len(pairs(model.atoms, "a") & {(x,)}) + len(pairs(model.atoms, "b") & {(x,)}) == 1
            assert len(pairs(model.atoms, "p") & {(x,)}) + len(pairs(model.atoms, "q") & {(x,)}) == 1
        assert not pairs(model.atoms, "both")


def test_constraints_over_a_stratified_program_mark_violating_time_points(tmp_path):
    program = """
    alarm(S) :- high(S) always in [2 sec].
    :- alarm(S), not acknowledged(S).
    """
    models = run(tmp_path, program, ["0 high(1)", "1 high(1)", "2 high(1); acknowledged(1)", "3 high(2)"])
    # 'always' over a window reaching before time point 0 holds on what it sees (I-DLV-sr without
    # --complete-windows), so time point 0 raises the alarm too
    assert [m.satisfiable for m in models] == [False, False, True, True]
    assert "alarm(1)" in models[2].atoms


def test_a_window_over_chosen_atoms_reads_earlier_time_points(tmp_path):
    """A sticky choice: one server per time point among those up, changed only when the previous one is down."""
    program = """
    1 { use(S) : up(S) } 1.
    before(S) :- use(S) in {1}.
    :~ use(S), not before(S). [1@1,S]
    #show use/1.
    """
    models = run(tmp_path, program, ["0 up(1); up(2)", "1 up(1); up(2); up(3)", "2 up(2); up(3)",
                                     "3 up(1); up(2); up(3)", "4 up(3)"])
    used = [pairs(m.atoms, "use") for m in models]
    assert all(len(u) == 1 for u in used)
    assert used[1] == used[0]                        # no reason to move
    if used[1] == {(1,)}:
        assert used[2] in ({(2,)}, {(3,)})           # forced to move
    assert used[3] == used[2]                        # and stays where it went
    assert used[4] == {(3,)}


def test_choice_part_errors_are_located_and_say_what_to_do():
    with pytest.raises(ProgramError, match="reads the current time point"):
        compile_program(parse_program("1 { use(S) : up(S) } 1.\nbad(S) :- use(S) in [1 sec].\n", "p.lp"))
    with pytest.raises(ProgramError, match="not to choices") as error:
        parse_program("a.\n#temp { b } :- a.\n", "p.lp")
    assert error.value.line == 2
    for text in (":~ a.\nb.\n", "{ a }.\n:~ a.\n"):        # followed by a statement, or last
        with pytest.raises(ProgramError, match="weak constraint without"):
            parse_program(text, "p.lp")
    with pytest.raises(ProgramError, match="streaming literal inside #minimize"):
        parse_program("#minimize { 1,X : p(X) in [2] }.\n", "p.lp")
    with pytest.raises(ProgramError, match="which the program derives") as error:
        parse_program("a(1).\nb(X) :- a(X).\n#external b(X) : a(X).\n", "p.lp")
    assert error.value.line == 3
    with pytest.raises(ProgramError, match="streaming literal inside #external"):
        parse_program("#external b(X) : a(X) in [2].\n", "p.lp")
    with pytest.raises(ProgramError, match="not stratified"):   # negation through a window stays stratified only
        compile_program(parse_program("p(X) :- q(X), not p(X) in [1 sec].\n", "p.lp"))


def test_the_spark_runner_takes_the_choice_part_in_one_partition():
    topology = compile_program(parse_program(queens.program(6), "qc.lp"))
    assert topology.stages[-1].choice and topology.stages[-1].key.name == ""
    SparkRunner().check(topology, [], RunConfig())


def test_reason_cli_writes_the_unsatisfiable_record(tmp_path):
    code, lines = reason_cli(tmp_path, queens.program(5), "0 given(1,1)\n1 given(1,1); given(2,2)\n")
    assert code == 0
    assert lines[0]["time"] == 0 and "unsatisfiable" not in lines[0] and len(lines[0]["atoms"]) == 5
    assert lines[1] == {"time": 1, "atoms": [], "unsatisfiable": True} or \
        {k: v for k, v in lines[1].items() if k != "timestamp"} == {"time": 1, "atoms": [], "unsatisfiable": True}


STRATEGIES = ("restart", "incremental", "forget", "forget-lemmas", "forget-signs", "forget-scores", "progress",
              "auto", "rl", "rl:lambda=1,store=6,active=3,lbd=8")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_answers_every_time_point_validly(tmp_path, strategy):
    """Each strategy on a QC stream with unsatisfiable time points mixed in: every answer checked, and all
    strategies agree on satisfiability (a fresh clingo's verdict)."""
    n = 8
    stream = queens.qc_stream(n, steps=24, seed=3)
    lines = queens.log_lines(stream)
    lines[5] = "5 given(1,1); given(2,2)"                   # two queens on a diagonal
    lines[11] = "11 given(1,1); given(8,8)"                 # no completion keeps both corners of a diagonal
    log = tmp_path / "qc.log"
    log.write_text("\n".join(lines) + "\n")
    topology = compile_program(parse_program(queens.program(n), "qc.lp"))
    result = LocalRunner().run(topology, [AtomLog(str(log))], RunConfig(lateness=0,
                                                                         options=LocalOptions(strategy=strategy)))
    for model, line in zip(result.models, lines):
        given = {tuple(int(x) for x in a.strip()[6:-1].split(",")) for a in line.split(" ", 1)[1].split(";")}
        facts = [f"given({r},{c})" for r, c in sorted(given)]
        assert model.satisfiable == satisfiable(queens.program(n), facts), (strategy, line)
        if model.satisfiable:
            assert queens.check(n, given, pairs(model.atoms, "queen")) == []


def test_reason_cli_takes_the_choice_strategies(tmp_path, capsys):
    for strategy in (("forget",), ("progress",), ("rl",), ("rl", "--rl-lambda", "0.5", "--rl-store", "20",
                                                           "--rl-active", "5", "--rl-lbd", "6")):
        code, lines = reason_cli(tmp_path, queens.program(5), "0 given(1,1)\n1 given(3,1)\n",
                                 "--strategy", *strategy)
        assert code == 0 and [len(x["atoms"]) for x in lines] == [5, 5]
    capsys.readouterr()
    code, _lines = reason_cli(tmp_path, queens.program(5), "0 given(1,1)\n", "--rl-lambda", "0.5")
    assert code == 2 and "add --strategy rl" in capsys.readouterr().err
    code, _lines = reason_cli(tmp_path, queens.program(5), "0 given(1,1)\n", "--strategy", "rl", "--rl-active", "9",
                              "--rl-store", "3")
    assert code == 2 and "active <= store" in capsys.readouterr().err


@pytest.mark.parametrize("strategy,groundings", [("restart", 12), ("incremental", 2), ("forget", 2),
                                                 ("progress", 2), ("rl", 2)])
@pytest.mark.parametrize("declared", [False, True])
def test_kept_strategies_ground_once_per_input_domain(tmp_path, strategy, groundings, declared):
    """Over a settled input domain a kept Control is grounded once and only its externals change; a restart
    grounds every time point. Declared with #external, the domain is known from the start."""
    n = 8
    lines = [f"{t} given(1,1); given(2,5)" if t % 2 else f"{t} given(1,1)" for t in range(12)]
    log = tmp_path / "qc.log"
    log.write_text("\n".join(lines) + "\n")
    program = queens.program(n)
    if declared:
        assert "#external given" in program
        groundings = 1 if strategy != "restart" else groundings
    else:
        program = "\n".join(line for line in program.splitlines() if not line.startswith("#external"))
    topology = compile_program(parse_program(program, "qc.lp"))
    result = LocalRunner().run(topology, [AtomLog(str(log))], RunConfig(lateness=0,
                                                                         options=LocalOptions(strategy=strategy)))
    choice = result.counters.stages[-1]
    assert choice.groundings == groundings      # undeclared: once more when given(2,5) widens the domain
    assert all(queens.check(n, {(1, 1), (2, 5)} if m.time % 2 else {(1, 1)}, pairs(m.atoms, "queen")) == []
               for m in result.models)


@pytest.mark.parametrize("strategy", [("auto",), ("rl", "--rl-lambda", "0.1")])
def test_the_bundled_example_runs_as_the_readme_says(tmp_path, strategy):
    from srtopo.cli import main
    root = __file__.rsplit("/tests/", 1)[0]
    out = tmp_path / "out.jsonl"
    assert main(["reason", "--program", f"{root}/examples/queens.idlvsr", "--stream", f"{root}/examples/queens.log",
                 "--strategy", *strategy, "--out", str(out)]) == 0
    import json
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    given = [line.split(" ", 1)[1] for line in open(f"{root}/examples/queens.log").read().splitlines()]
    assert len(lines) == len(given) == 12
    for record, text in zip(lines, given):
        facts = [a.strip() for a in text.split(";")]
        assert ("unsatisfiable" not in record) == satisfiable(queens.program(8), facts)
        if "unsatisfiable" not in record:
            queens_given = {tuple(int(x) for x in f[6:-1].split(",")) for f in facts}
            assert queens.check(8, queens_given, pairs(record["atoms"], "queen")) == []


@pytest.mark.parametrize("strategy", ["restart", "incremental", "auto"])
def test_a_choice_part_of_constraints_only_shows_nothing_of_its_own(tmp_path, strategy):
    program = "q(X) :- p(X).\n:- q(1).\n:~ q(X). [X@1]\n"
    log = tmp_path / "s.log"
    log.write_text("0 p(2)\n1 p(1)\n2 p(3)\n")
    topology = compile_program(parse_program(program, "p.lp"))
    models = LocalRunner().run(topology, [AtomLog(str(log))],
                               RunConfig(lateness=0, options=LocalOptions(strategy=strategy))).models
    assert [(m.atoms, m.satisfiable) for m in models] == [(("p(2)", "q(2)"), True), ((), False),
                                                          (("p(3)", "q(3)"), True)]


def test_an_empty_stretch_keeps_its_time_points_unsatisfiable():
    from srtopo.rules.evaluate import Reasoner
    reasoner = Reasoner(parse_program("s.\na :- not a, s.\n", "p.lp"))
    assert not reasoner.step([]).satisfiable
    assert [r.satisfiable for r in reasoner.advance(9)] == [False] * 9


def test_kept_choice_solvers_restart_when_their_input_domain_keeps_growing():
    from srtopo.rules.evaluate import Reasoner
    reasoner = Reasoner(parse_program("{ pick(X) : item(X) } 1.\n:- not 1 { pick(X) }.\n", "p.lp"),
                        strategy="incremental")
    for t in range(10):
        assert reasoner.step([clingo.Function("item", [clingo.Number(t)])]).satisfiable
    assert reasoner.subprograms[-1].solver.inner.kind == "choice"      # fell back to a new Control per step


def test_choice_heads_bind_through_conditions_and_levels_may_be_variables(tmp_path):
    models = run(tmp_path, "{ a(X) : X = 1..3 } :- b.\nc(X) : X = 4..5 | d :- b.\n"
                           ":~ p(X,P). [1@P, X]\n{ p(X,P) : w(X,P) }.\n:- not 1 { p(X,P) }.\n",
                 ["0 b; w(1,1); w(2,2)"])
    atoms = set(models[0].atoms)
    assert {a for a in atoms if a.startswith("a(")} <= {"a(1)", "a(2)", "a(3)"}
    assert len({a for a in atoms if a.startswith(("c(", "d"))}) == 1
    assert {a for a in atoms if a.startswith("p(")} == {"p(1,1)"}        # the lower level costs less


def test_more_choice_part_errors_are_located():
    with pytest.raises(ProgramError, match="unbound variable"):
        parse_program("#external p(X).\n{ a(X) } :- p(X).\n", "p.lp")
    with pytest.raises(ProgramError, match="not to choices") as error:
        parse_program("p(1).\nq.\n#temp a(X) : p(X) :- q.\n", "p.lp")
    assert error.value.line == 3
    with pytest.raises(ProgramError, match="@now inside #minimize"):
        parse_program("p(1).\n#minimize { @now,X : p(X) }.\n", "p.lp")
    # a cycle of negation through a window that reads only earlier time points is a choice part
    topology = compile_program(parse_program("a :- not b.\nb :- not a.\nb :- a in {1}.\n", "p.lp"))
    assert topology.stages[-1].choice


def test_rl_caches_learned_constraints_within_its_bounds_and_every_answer_is_valid():
    """``rl`` on a hard enough PUP stream: clasp hands over lemmas, the store keeps at most ``store`` of them,
    at most ``active`` are switched on per time point, and a store that keeps turning lemmas away starts its
    Control over (switches of dropped lemmas cannot be removed) without changing any answer."""
    from srtopo.solving import RlParams, SubprogramSpec, make_choice_solver
    from srtopo.solving.rl import RlChoiceSolver
    n = 6
    instance = pup.double_instance(n)
    stream = pup.pup_stream(n, steps=40, seed=2, alpha=0.7)
    topology = compile_program(parse_program(pup.program(n), "pup.lp"))
    stage = topology.stages[-1]
    assert stage.choice
    from srtopo.rules.evaluate import Reasoner
    reasoner = Reasoner(topology, strategy="rl:lambda=0.5,store=5,active=2,lbd=16")
    solver = reasoner.subprograms[-1].solver.inner
    assert isinstance(solver, RlChoiceSolver) and solver.params == RlParams(0.5, 5, 2, 16)
    seen, actives = 0, []
    from srtopo.rules.log import read_records
    for record, off in zip(read_records(pup.log_lines(stream)), stream):
        result = reasoner.step(record.atoms)
        assert result.satisfiable
        atoms = [str(a) for a in reasoner.shown(result)]
        assert pup.check(instance, off, pairs(atoms, "zone2unit"), pairs(atoms, "sensor2unit")) == []
        assert len(solver.lemmas) <= 5
        actives.append(sum(1 for c in solver.lemmas.values() if c.on))
        seen = max(seen, solver.stats.get("lemmas", 0))
    assert seen > 0 and max(actives) <= 2
    assert solver.stats["groundings"] >= 2          # dropped lemmas' switches piled up: the Control started over
    solver.close()
    with pytest.raises(ProgramError, match="rl parameter"):
        make_choice_solver("rl:lambda=x", SubprogramSpec("a.", (), ()))
    with pytest.raises(ProgramError, match="unknown rl parameter"):
        make_choice_solver("rl:k=3", SubprogramSpec("a.", (), ()))


def test_auto_probes_its_challengers_in_a_process_of_its_own_that_keeps_their_controls():
    """``auto``'s challengers solve in the probe process, on the same time points as the incumbent; an arm runs
    on some time points only, so its input domain grows between its calls, and it keeps its Control (rebuilt
    when needed) instead of falling back to restarting, which is an arm of its own. A probe process that dies
    leaves the stream to the incumbent."""
    from srtopo.rules.evaluate import Reasoner
    from srtopo.rules.log import read_records
    from srtopo.solving.auto import AutoChoiceSolver
    n = 6
    instance = pup.double_instance(n)
    stream = pup.pup_stream(n, steps=64, seed=4, alpha=0.7)
    reasoner = Reasoner(compile_program(parse_program(pup.program(n), "pup.lp")), strategy="auto")
    auto = reasoner.subprograms[-1].solver
    assert isinstance(auto, AutoChoiceSolver)
    # no block is cut short: a challenger measured slower than give_up times the incumbent would end its block,
    # and how many probes run would then depend on this machine's timing
    auto.bandit.give_up = float("inf")
    records = list(read_records(pup.log_lines(stream)))
    for step, (record, off) in enumerate(zip(records, stream)):
        if step == 48:
            auto._probes.process.kill()
        result = reasoner.step(record.atoms)
        assert result.satisfiable
        atoms = [str(a) for a in reasoner.shown(result)]
        assert pup.check(instance, off, pairs(atoms, "zone2unit"), pairs(atoms, "sensor2unit")) == []
        auto.settle()
    assert not auto.probe_errors and not auto.probing          # the killed process ended the probing only
    probed = sum(pulls for arm, pulls in auto.bandit.pulls.items()) - len(records)
    assert probed >= 8
    kept = [s for arm, s in auto.probe_stats.items() if arm != "restart"]
    assert kept and sum(s["groundings"] for s in kept) < sum(s["solves"] for s in kept)
    auto.close()
    assert auto._probes is None


def test_clasp_lemma_lines_become_literals_of_parsed_atoms():
    from clingo import Function, Number, String

    from srtopo.solving.rl import _parse_lemma
    literals, lbd = _parse_lemma(':- not a(4), b("x,%y",(1,2)), not c.  %lbd = 3')
    assert lbd == 3
    assert set(literals) == {(False, Function("a", [Number(4)])), (False, Function("c")),
                             (True, Function("b", [String("x,%y"), Function("", [Number(1), Number(2)])]))}
    assert _parse_lemma("% a comment") is None and _parse_lemma(":- p(.") is None
