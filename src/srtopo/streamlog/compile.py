"""A Streamlog program as a topology of the IR: one stage holding the program and its analysis (the rule and
predicate classes, the predicates kept across timestamps, the partition key, the bistate version and the blocking
analysis), fed by timestamped facts and writing one model per timestamp with derived facts."""
from __future__ import annotations

from srtopo.ir.topology import FactSource, ModelOutput, StreamlogNotes, StreamlogStage, Topology
from srtopo.streamlog.keys import partition_key
from srtopo.streamlog.program import Program, bistate_rules, load_program


def _signature(sig: tuple) -> str:
    return f"{sig[0]}/{sig[1]}"


def compile_program(program: Program, *, union: str = "synchronized", retain: int | None = None,
                    name: str = "") -> Topology:
    """The topology of a parsed program; a program with findings (blocking, time-warping, not XY-stratified,
    ...) is refused with its first finding as a located ProgramError."""
    program.check()
    uts = {(name_, arity + 1) for name_, arity in program.uts}
    predicates = tuple((_signature(sig), program.predicate_kinds[sig] + (
        " (timestamp-free in the stream, stamped by uts)" if sig in uts else "")) for sig in sorted(program.predicate_kinds))
    stage = StreamlogStage(
        id="streamlog", key=partition_key(program), program=program.source_text, file=program.file, retain=retain,
        rules=tuple((r.text, r.kind if r.temporal else "background") for r in program.rules),
        heads=tuple(sorted(_signature(s) for s in program.derived)),
        history=tuple(sorted(_signature(s) for s in program.history)))
    notes = StreamlogNotes(program=program.file, predicates=predicates, bistate=tuple(bistate_rules(program)))
    return Topology(source=FactSource(inputs=tuple(sorted(_signature(s) for s in program.inputs)), union=union),
                    stages=(stage,), output=ModelOutput(shows=tuple(sorted(_signature(s) for s in program.shown))),
                    name=name or program.file, label="streamlog", notes=notes).validate()


def topology_from_file(path: str, *, union: str = "synchronized", retain: int | None = None) -> Topology:
    """Load a Streamlog program (``.sl``) and compile its topology (``srtopo.kinds``)."""
    return compile_program(load_program(path), union=union, retain=retain)
