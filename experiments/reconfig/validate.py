"""Answers of a QC or PUP stream checked without trusting the reasoner: each answer by the problem's own checker
(``queens.check``, ``pup.check``: no solver), each time point without an answer by a fresh clingo on the time
point's facts, and every time point answered exactly once. Used by the Spark benchmark and the kill campaign,
which read answers back from an out directory (``batch=N/*.json``, one JSON object per time point)."""
from __future__ import annotations

import os

import clingo

from experiments.reconfig import pup, queens


def line_atoms(line: str) -> list[str]:
    """The atoms of an I-DLV-sr log line ``T a; b; ...`` (none for a line with a timestamp alone)."""
    parts = line.strip().split(" ", 1)
    return [a.strip() for a in parts[1].split(";") if a.strip()] if len(parts) > 1 else []


def pairs(atoms, name: str) -> set:
    """The integer arguments of the atoms named ``name`` (atoms as clingo symbols or as text)."""
    out = set()
    for atom in atoms:
        symbol = clingo.parse_term(atom) if isinstance(atom, str) else atom
        if symbol.name == name:
            out.add(tuple(a.number for a in symbol.arguments))
    return out


def satisfiable(program: str, facts: list[str]) -> bool:
    """A fresh clingo's verdict on the program with the facts."""
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], program + "".join(f"{f}.\n" for f in facts))
    ctl.ground([("base", [])])
    return bool(ctl.solve().satisfiable)


def check_answer(problem: str, size: int, line: str, atoms) -> list[str]:
    """What is wrong with ``atoms`` as an answer to the time point of log line ``line``; [] when valid."""
    facts = line_atoms(line)
    if problem == "qc":
        return queens.check(size, pairs(facts, "given"), pairs(atoms, "queen"))
    off = (frozenset(z for (z,) in pairs(facts, "zone_off")), frozenset(s for (s,) in pairs(facts, "sensor_off")))
    return pup.check(pup.double_instance(size), off, pairs(atoms, "zone2unit"), pairs(atoms, "sensor2unit"))


def program_of(problem: str, size: int) -> str:
    return queens.program(size) if problem == "qc" else pup.program(size)


def validate(problem: str, size: int, lines: list[str], answers: list[dict]) -> list[str]:
    """Every problem with the answers (``{"time", "atoms", "unsatisfiable"?}``) to the log ``lines`` (time point
    t is line t): a time point missing or answered twice, an invalid answer, a missing answer where a fresh clingo
    finds one. [] when all hold."""
    problems = []
    seen: dict = {}
    for row in answers:
        seen.setdefault(row["time"], []).append(row)
    for t, rows in sorted(seen.items()):
        if len(rows) > 1:
            problems.append(f"time point {t} answered {len(rows)} times")
        if not 0 <= t < len(lines):
            problems.append(f"time point {t} is not in the stream")
    program = program_of(problem, size)
    for t, line in enumerate(lines):
        if t not in seen:
            problems.append(f"time point {t} has no answer")
            continue
        row = seen[t][0]
        if row.get("unsatisfiable"):
            if row["atoms"]:
                problems.append(f"time point {t}: unsatisfiable with atoms {row['atoms']}")
            if satisfiable(program, line_atoms(line)):
                problems.append(f"time point {t}: no answer, but a fresh clingo finds one")
        else:
            problems += [f"time point {t}: {p}" for p in check_answer(problem, size, line, row["atoms"])]
    return problems


def committed(checkpoint: str) -> list[int]:
    """The micro-batches Spark committed on a checkpoint (its query's commit log)."""
    folder = os.path.join(checkpoint, "query", "commits")
    return sorted(int(x) for x in os.listdir(folder) if x.isdigit()) if os.path.isdir(folder) else []
