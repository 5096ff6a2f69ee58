"""The process where ``auto`` measures its challengers (``solving.auto.AutoChoiceSolver``).

A probe solved on a thread of the stream's own process slowed the stream's steps by about 40% on this machine
(both threads' clingo calls take and give back the interpreter lock around every call), so the challengers
live here, in a process of their own started with ``python -m srtopo.solving.probes``. It reads JSON lines on
stdin: first the subprogram (its rules, input and shown signatures, background facts, external-atom scripts),
then one request per probed time point (the arm and the time point's input atoms, each as the text clingo
prints for its parsed Symbol, parsed back here with ``clingo.parse_term``: no stream text reaches a program),
and answers each with one JSON line: the arm's step time, or the error it raised. It ends at the end of stdin.
"""
from __future__ import annotations

import json
import os
import sys
import time

from clingo import parse_term

from srtopo.errors import SrtopoError
from srtopo.solving.externals import ExternalFunctions
from srtopo.solving.spec import SubprogramSpec
from srtopo.solving.strategies import make_fixed_choice_solver


def _atoms(rows) -> dict:
    return {(name, arity): frozenset(parse_term(text) for text in atoms) for name, arity, atoms in rows}


def serve(requests, reply) -> None:
    """Answer ``requests`` (an iterable of JSON lines, the first one the subprogram) through ``reply``."""
    lines = iter(requests)
    setup = json.loads(next(lines))
    spec = SubprogramSpec(setup["rules"], tuple(map(tuple, setup["inputs"])), tuple(map(tuple, setup["shown"])),
                          tuple(setup["match"]), tuple(setup["domains"]))
    static = _atoms(setup["static"])
    externals = None if setup["scripts"] is None else ExternalFunctions(setup["scripts"], setup["where"])
    solvers: dict = {}
    try:
        for line in lines:
            request = json.loads(line)
            arm = request["arm"]
            out = {"step": request["step"], "arm": arm}
            try:
                inputs = _atoms(request["inputs"])
                solver = solvers.get(arm)
                if solver is None:
                    solver = solvers[arm] = make_fixed_choice_solver(arm, spec, static, externals, adaptive=False)
                started = time.perf_counter()
                solver.solve(inputs)
                out["seconds"] = time.perf_counter() - started
                out["solves"] = solver.stats.get("solves", 0)
                out["groundings"] = solver.stats.get("groundings", 0)
            except (SrtopoError, RuntimeError, ValueError) as error:
                out["error"] = f"{type(error).__name__}: {error}"
            reply(json.dumps(out))
    finally:
        for solver in solvers.values():
            close = getattr(solver, "close", None)
            if close is not None:
                close()


def main() -> int:
    # replies go to the original stdout; anything else printed here (an external-atom script's print, a
    # library's message) goes to stderr, so it cannot be taken for a reply
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(text: str) -> None:
        replies.write(text + "\n")
        replies.flush()
    requests = (line for line in sys.stdin if line.strip())
    try:
        serve(requests, reply)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
