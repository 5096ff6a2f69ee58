"""Every example of Zaniolo's Streamlog slides, with outputs checked by hand."""
from __future__ import annotations

import pytest

from srtopo.errors import ProgramError
from srtopo.streamlog import Streamlog, explain, parse_program
from srtopo.streamlog.program import EARLIER, EQUAL, NOT_LATER, SEQUENTIAL, STRICT, WARPING

REPEATED = "repeated(T,X) :- msg(T,X), msg(T0,X), T0 < T.\n"
WARPED = "repeated(T0,X) :- msg(T,X), msg(T0,X), T > T0.\n"
FIRST = ("first(T,X) :- msg(T,X), not previous(T,X).\n"
         "previous(T,X) :- msg(T,_), msg(T0,X), T0 < T.\n#show first/2.\n")
LAST = ("last(T,Z) :- msg(T,Z), not next(T,Z).\n"
        "next(T,Z) :- msg(T,Z), msg(T1,Z), T1 > T.\n")
MINPATH = ("path(T,X,Y,D) :- arc(T,X,Y,D).\n"
           "path(T,X,Z,D) :- path(T1,X,Y,D1), path(T2,Y,Z,D2), lgr(T1,T2,T), D = D1+D2.\n"
           "shorter(T,X,Z,D) :- path(T,X,Z,D), path(T1,X,Z,D1), T1 <= T, D1 < D.\n"
           "minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D).\n#show minpath/4.\n")
TC = ("sarc(T,X,Y) :- darc(X,Y), uts(T).\n"
      "tc(T,X,Y) :- sarc(T,X,Y).\n"
      "tc(T,X,Z) :- sarc(T,X,Y), tc(T1,Y,Z), T1 < T.\n"
      "tc(T,X,Z) :- tc(T1,X,Y), sarc(T,Y,Z), T1 < T.\n"
      "tc(T,X,Z) :- tc(T1,X,Y), sarc(T,Y,W), tc(T2,W,Z), T1 < T, T2 < T.\n#show tc/3.\n")
UNION = "msg(T,S) :- sensr1(T,S).\nmsg(T,S) :- sensr2(T,S).\n"
SORT_MERGE = ("msg(T1,S1) :- sensr1(T1,S1), sensr2(T2,_), T2 >= T1.\n"
              "msg(T2,S2) :- sensr2(T2,S2), sensr1(T1,_), T1 >= T2.\n")


def run(text: str, lines, streams=("s",), union="synchronized") -> list[tuple[int, tuple]]:
    """Lines are text (stream 0) or (stream index, text); the result is [(time, atoms)] in output order."""
    streamlog = Streamlog(parse_program(text, "slides.sl").check(), streams, union)
    out = []
    for number, line in enumerate(lines, start=1):
        k, text_line = line if isinstance(line, tuple) else (0, line)
        out += streamlog.push(k, text_line, number)
    out += streamlog.finish()
    assert not streamlog.rejected, streamlog.rejected
    return [(m.time, m.atoms) for m in out]


MSGS = ["msg(1,red).", "msg(2,blue).", "msg(4,red).", "msg(4,green).", "msg(6,red).", "msg(7,blue)."]


def test_repeated_red_alarms_are_reported_when_the_repetition_arrives():
    assert run(REPEATED, MSGS) == [(4, ("repeated(4,red)",)), (6, ("repeated(6,red)",)),
                                   (7, ("repeated(7,blue)",))]
    program = parse_program(REPEATED)
    assert [g.order for g in program.rules[0].goals] == [EQUAL, EARLIER]
    assert program.rules[0].kind == SEQUENTIAL


def test_the_time_warping_repeated_is_flagged_with_its_later_goal():
    program = parse_program(WARPED, "warp.sl")
    assert program.rules[0].kind == WARPING
    with pytest.raises(ProgramError, match=r"warp.sl:1:1: time-warping: .*'msg\(T,X\)' that may be later"):
        program.check()


def test_first_occurrence_uses_negation_on_the_past_and_answers_at_once():
    assert run(FIRST, MSGS) == [(1, ("first(1,red)",)), (2, ("first(2,blue)",)), (4, ("first(4,green)",))]


def test_last_occurrence_is_rejected_as_blocking_naming_the_rule_and_the_goal():
    with pytest.raises(ProgramError) as caught:
        parse_program(LAST, "last.sl").check()
    message = str(caught.value)
    assert message.startswith("last.sl:1:1: blocking: the negated goal 'not next(T,Z)'")
    assert "last.sl:2:1" in message and "\n" not in message


def test_minpath_with_shorter_keeps_only_the_paths_shorter_than_every_earlier_one():
    arcs = ["arc(1,a,b,1).", "arc(2,b,c,1).", "arc(3,a,c,5).", "arc(4,c,d,1).", "arc(5,a,d,1)."]
    assert run(MINPATH, arcs) == [
        (1, ("minpath(1,a,b,1)",)),
        (2, ("minpath(2,a,c,2)", "minpath(2,b,c,1)")),       # a->c by b
        # 3: a->c of length 5 is not shorter than the path of length 2 found at 2
        (4, ("minpath(4,a,d,3)", "minpath(4,b,d,2)", "minpath(4,c,d,1)")),
        (5, ("minpath(5,a,d,1)",)),                          # the direct arc beats the path of length 3
    ]
    program = parse_program(MINPATH)
    # lgr(T1,T2,T) is T = max(T1,T2): the rule is split in two, each anchored on one goal
    split = [r for r in program.rules if r.text.startswith("path(T,X,Z,D)")]
    assert len(split) == 2 and {tuple(g.order for g in r.goals) for r in split} == {(EQUAL, NOT_LATER),
                                                                                    (NOT_LATER, EQUAL)}


def test_the_bistate_version_renames_goals_new_and_old_and_is_stratified():
    text = explain(parse_program(MINPATH, "minpath.sl"))
    assert "minpath_new(X,Z,D) :- path_new(X,Z,D); not shorter_new(X,Z,D)." in text
    assert "path_old(T2,Y,Z,D2); T2 < now" in text            # an earlier path joined with a new one
    assert "accepted" in text and "XY-stratified" in text
    program = parse_program("p(T,X) :- a(T,X), not p(T,X).\n", "loop.sl")
    with pytest.raises(ProgramError, match="not XY-stratified"):
        program.check()
    # the same recursion through negation to an earlier timestamp is XY-stratified
    parse_program("p(T,X) :- a(T,X), a(T0,X), T0 < T, not p(T0,X).\n").check()


def test_the_iteration_free_transitive_closure_over_uts_stamped_arcs():
    out = run(TC, ["darc(a,b).", "darc(c,d).", "darc(b,c)."])
    assert out == [(1, ("tc(1,a,b)",)), (2, ("tc(2,c,d)",)),
                   (3, ("tc(3,a,c)", "tc(3,a,d)", "tc(3,b,c)", "tc(3,b,d)"))]
    program = parse_program(TC)
    assert program.uts == {("darc", 2)} and ("darc", 3) in program.inputs


SENSORS = [(0, "sensr1(1,a)."), (0, "sensr1(5,b)."), (1, "sensr2(2,c)."), (0, "sensr1(6,d)."),
           (1, "sensr2(6,e)."), (1, "sensr2(9,f).")]


def test_the_synchronized_union_of_two_sensors_is_ordered():
    out = run(UNION, SENSORS, ("s1", "s2"))
    assert out == [(1, ("msg(1,a)",)), (2, ("msg(2,c)",)), (5, ("msg(5,b)",)), (6, ("msg(6,d)", "msg(6,e)")),
                   (9, ("msg(9,f)",))]


def test_the_slides_sort_merge_rules_look_at_a_later_fact_and_are_flagged():
    # msg at T1 waits for a fact of the other stream at T2 >= T1 (the slides: "partially blocking"); as rules
    # that is a later goal, so the union is a run option instead (--union sort-merge)
    with pytest.raises(ProgramError, match=r"slides.sl:1:1: time-warping: .*'sensr2\(T2,_\)'"):
        parse_program(SORT_MERGE, "slides.sl").check()


def test_punctuation_releases_a_timestamp_that_a_silent_stream_holds_back():
    streamlog = Streamlog(parse_program(UNION).check(), ("s1", "s2"))
    assert streamlog.push(0, "sensr1(1,a).") == [] and streamlog.push(0, "sensr1(3,b).") == []
    # stream 2 is silent: nothing is complete, until its punctuation says it sends nothing below 3
    released = streamlog.push(1, "#punctuation 3.")
    assert [(m.time, m.atoms) for m in released] == [(1, ("msg(1,a)",))]
    assert streamlog.punctuate(1, 10) == []     # stream 1 itself may still send facts at 3
    assert [m.time for m in streamlog.close(0)] == [3]


def test_sort_merge_ignores_punctuation_and_plain_union_does_not_wait():
    lines = [(0, "sensr1(1,a)."), (0, "sensr1(3,b)."), (1, "#punctuation 2."), (0, "sensr1(4,c)."),
             (1, "sensr2(2,x).")]
    sort_merge = Streamlog(parse_program(UNION).check(), ("s1", "s2"), "sort-merge")
    got = [m.time for k, text in lines for m in sort_merge.push(k, text)]
    assert got == [1]          # the fact at 2 released 1; the punctuation alone released nothing
    plain = Streamlog(parse_program(UNION).check(), ("s1", "s2"), "plain")
    got = [m.time for k, text in lines for m in plain.push(k, text)]
    assert got == [1, 3]       # stream 1 alone decides, so the fact at 2 of stream 2 comes too late
    assert [(r.source, r.reason) for r in plain.rejected] == [
        ("s2", "timestamp 2 was already evaluated (the plain union does not wait for the slower streams)")]


def test_a_strictly_sequential_rule_visits_a_timestamp_no_input_reached():
    program = parse_program("tick(T) :- msg(T0,_), T = T0 + 3.\nalarm(T) :- tick(T), not msg(T,ok).\n")
    assert program.rules[0].kind == STRICT
    assert run(program.source_text, ["msg(1,a).", "msg(4,ok).", "msg(10,b)."]) == [
        (4, ("tick(4)",)), (7, ("alarm(7)", "tick(7)")), (13, ("alarm(13)", "tick(13)"))]
