"""The topology IR: one frozen form for every kind of topology, with no Spark or clingo imports.

A topology is a source, a chain of stages and an output. Every stage has a kind, a partition key and a
parallelism (the balancer's tasks for it):

* a **consistency stage** (DL-Lite consistency checking) is keyed by subject. Its conjunction ops cache
  the tuples of their concepts in a window; a tuple (x, X, t) conflicts with a tuple (x, Y, t') of the
  window when {X, Y} is an op and |t - t'| <= w, and the report is due at max(t, t'). What it passes on
  is stated once, by :meth:`Topology.outputs` and :meth:`Topology.route`;
* a **rule stage** (an I-DLV-sr subprogram) evaluates flat ASP rules over its window operators' atoms,
  the stream and the stages before it, one time point at a time; unkeyed stages run in one partition;
* a **Streamlog stage** evaluates a Streamlog program over explicitly timestamped facts, one complete timestamp
  at a time (one stage; keyed when every temporal predicate carries one variable at one argument, else in one
  partition);
* a **saturation stage** sits in a **chain** (a DL-Lite consistency check, then an I-DLV-sr program over what
  the TBox entails from the statements the check did not reject): between the consistency stages and the rule
  stages, it withholds the statements of individuals with a report at their time point and adds what the TBox
  entails from each kept statement, by lookup tables (``Topology.parts`` gives a chain's three parts).

Runners honour the key and the parallelism or say, up front, that they cannot (``UnsupportedByRunner``).
Concepts are strings (``srtopo.concepts``); rule predicates are written ``name/arity``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import ClassVar, Union

from srtopo.concepts import NOTHING, display
from srtopo.errors import TopologyError

SUBJECT = "subject"


# --- partition keys --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PartitionKey:
    """What a stage's input is partitioned by: records with equal key values meet in one partition.

    ``name`` is ``subject`` for concept tuples, a program variable for rule and Streamlog stages, ``""`` for a
    stage that runs in one partition. ``positions`` says, for rule stages, which argument (zero-based) of each
    predicate it reads (and of each head that carries the key) holds the key: ``(("b/2", 1), ("c/2", 0))``; for
    Streamlog stages, of each predicate it reads or derives, never the timestamp (0)."""
    name: str = ""
    positions: tuple[tuple[str, int], ...] = ()

    @property
    def keyed(self) -> bool:
        return bool(self.name)

    def __str__(self) -> str:
        if not self.keyed:
            return "one partition"
        if not self.positions:
            return self.name
        return f"{self.name} (" + ", ".join(f"{p} arg {i + 1}" for p, i in self.positions) + ")"


BY_SUBJECT = PartitionKey(SUBJECT)
ONE_PARTITION = PartitionKey()


# --- operations ------------------------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class InferenceOp:
    """sub -> sup: re-emit a tuple of ``sub`` as a tuple of its superclass ``sup`` for later stages."""
    sub: str
    sup: str


@dataclass(frozen=True, order=True)
class ConjunctionOp:
    """left ∧ right -> inconsistent: ``ni`` is the TBox axiom (as stated) the pair violates."""
    left: str
    right: str
    ni: tuple[str, str] = ("", "")

    @property
    def pair(self) -> tuple[str, str]:
        return (self.left, self.right)


#: owl:Nothing with itself: every consistency topology's first stage evaluates it (``Topology.conjunctions``)
NOTHING_OP = ConjunctionOp(NOTHING, NOTHING, (NOTHING, NOTHING))


#: what a window operator computes (``at most c`` is ``not at_least c+1``; ``count N`` with a variable is count_var)
WINDOW_MODES = ("at_least", "always", "count_eq", "count_var")


@dataclass(frozen=True)
class WindowOp:
    """A window operator of a rule stage: the atoms of ``name`` that hold at a time point, computed from the
    atoms of ``observed`` at the given distances (0 = the time point itself, d = d time points back)."""
    name: str                       # a generated predicate (reserved prefix)
    observed: str                   # "p/n"
    mode: str                       # one of WINDOW_MODES
    count: int | None               # c of at_least / count_eq
    distances: tuple[int, ...]
    written: str = ""               # the window as in the program, e.g. "[3 sec]"
    complete: bool = False          # ``always`` does not hold over a window that reaches before time point 0

    @property
    def arity(self) -> int:
        return predicate_arity(self.observed) + (1 if self.mode == "count_var" else 0)

    @property
    def signature(self) -> str:
        return f"{self.name}/{self.arity}"


def predicate_arity(signature: str) -> int:
    return int(signature.rsplit("/", 1)[1])


def predicate_name(signature: str) -> str:
    return signature.rsplit("/", 1)[0]


# --- stages ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Stage:
    """What every stage has; the kinds below add what they compute."""
    kind: ClassVar[str] = ""
    id: str
    key: PartitionKey = ONE_PARTITION
    parallelism: int = 1


@dataclass(frozen=True, kw_only=True)
class ConsistencyStage(Stage):
    kind: ClassVar[str] = "consistency"
    key: PartitionKey = BY_SUBJECT
    inference_ops: tuple[InferenceOp, ...] = ()
    conjunction_ops: tuple[ConjunctionOp, ...] = ()
    forwards: tuple[str, ...] = ()

    @property
    def cached_concepts(self) -> frozenset[str]:
        """Concepts whose tuples this stage keeps in its window."""
        return frozenset(c for op in self.conjunction_ops for c in op.pair)


@dataclass(frozen=True, kw_only=True)
class RuleStage(Stage):
    """A subprogram: flat rules (the program with every streaming literal replaced by its window operator's
    atom) over the atoms of ``inputs``; ``heads`` are what it derives (``shown`` adds the marker predicate that
    says which atoms of a ``#temp`` predicate persist)."""
    kind: ClassVar[str] = "rules"
    rules: str = ""
    inputs: tuple[str, ...] = ()
    heads: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    windows: tuple[WindowOp, ...] = ()
    recursive: bool = False
    components: tuple[tuple[str, ...], ...] = ()
    choice: bool = False        # the program's choice part: one answer set per time point, or none
    domains: tuple[str, ...] = ()   # ``#external p(t) : body.`` of the inputs it reads (kept solvers' domain)


@dataclass(frozen=True, kw_only=True)
class StreamlogStage(Stage):
    """A Streamlog program ("A Logic-Based Language for Data Streams"), evaluated timestamp by timestamp once
    its timestamp is complete. ``program`` is its text as written (what runners evaluate, parsed again from the
    text); ``rules`` each rule as written with its class (sequential, strictly sequential, forward, background);
    ``heads`` what it derives; ``history`` the predicates some rule reads at an earlier timestamp (the only facts
    of past timestamps evaluation needs); ``retain``: only the last N timestamps of facts are kept (None: all)."""
    kind: ClassVar[str] = "streamlog"
    program: str = ""
    file: str = ""
    rules: tuple[tuple[str, str], ...] = ()
    heads: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    retain: int | None = None


#: what a saturation stage does with a statement at a time point that has a report for one of its individuals
INCONSISTENT = ("drop", "keep")


@dataclass(frozen=True, kw_only=True)
class SaturationStage(Stage):
    """Between the consistency stages and the rule stages of a chain: it withholds the statements of a closed
    time point whose individuals have a report there (``inconsistent`` drop; keep withholds nothing), and gives
    each kept statement with what the TBox entails from it alone, as lookup tables (never one operation per
    axiom): ``types`` maps a named class C to the named classes D with C ⊑* D (D ≠ C); ``properties`` maps an
    object property P to (the named Q with P ⊑* Q, Q ≠ P; the named Q with P ⊑* Q⁻; the named classes D with
    ∃P ⊑* D, its domains; those with ∃P⁻ ⊑* D, its ranges)."""
    kind: ClassVar[str] = "saturation"
    key: PartitionKey = BY_SUBJECT
    inconsistent: str = "drop"
    types: tuple[tuple[str, tuple[str, ...]], ...] = ()
    properties: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = ()


STAGE_KINDS: dict[str, type[Stage]] = {ConsistencyStage.kind: ConsistencyStage, RuleStage.kind: RuleStage,
                                       StreamlogStage.kind: StreamlogStage, SaturationStage.kind: SaturationStage}


# --- sources and outputs ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConceptSource:
    """Stream tuples (subject, concept, time). ``concepts`` are the representatives stage 1 receives;
    ``aliases`` maps an asserted concept collapsed by an equivalence to its representative. Tuples of other
    concepts cannot take part in any conflict and are dropped at the source (counted as irrelevant)."""
    kind: ClassVar[str] = "concepts"
    concepts: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AtomSource:
    """Ground atoms, one set per time point (a time point lasts one ``unit``); ``background`` holds the
    program's ground facts (as text), true at every time point. ``number_unit``: the unit of numeric
    timestamps (None: they count time points). What the evaluator provides at every time point: ``@now`` in
    ``now_format`` (sec, min, hrs or datetime), and the ``#trigger_frequency`` ticks (``triggers``: frequencies
    in time points, counted from time point 0). ``scripts``: the Python files that define the external atoms."""
    kind: ClassVar[str] = "atoms"
    unit: str = "sec"
    background: tuple[str, ...] = ()
    number_unit: str | None = None
    now_format: str = "datetime"
    triggers: tuple[int, ...] = ()
    scripts: tuple[str, ...] = ()
    externals: tuple[tuple[str, str], ...] = ()     # (clingo function, the external atom as written and where)


@dataclass(frozen=True)
class FactSource:
    """Facts with an explicit timestamp (their first argument) from one or more streams; ``inputs`` are the
    predicates ("p/n", timestamp included) the streams may give. ``union`` says when a timestamp is complete:
    synchronized (every stream has passed it, by a later fact or punctuation), sort-merge (by a later fact) or
    plain (some stream has)."""
    kind: ClassVar[str] = "facts"
    inputs: tuple[str, ...] = ()
    union: str = "synchronized"


@dataclass(frozen=True)
class ReportOutput:
    """One report per (subject, time) at which some NI is violated."""
    kind: ClassVar[str] = "reports"
    #: the kinds of records the output holds; an output of several writes each apart (``RunConfig.reports_out``)
    records: ClassVar[tuple[str, ...]] = ("reports",)


@dataclass(frozen=True)
class ModelOutput:
    """One model per time point: its atoms (``shows``: only these predicates; None: all). Atoms of a
    ``temporary`` (``#temp``) predicate enter the history only with a ``keep`` atom or as stream atoms."""
    kind: ClassVar[str] = "models"
    records: ClassVar[tuple[str, ...]] = ("models",)
    shows: tuple[str, ...] | None = None
    temporary: tuple[str, ...] = ()
    keep: str = ""


@dataclass(frozen=True)
class StatementSource:
    """RDF statements with an event time (a chain): their tuples feed the consistency stages (``consistency``),
    and the statements a saturation stage keeps and entails reach the rule stages as ``triple/3`` atoms, the
    time point being the event time (``rules``)."""
    kind: ClassVar[str] = "statements"
    NESTED: ClassVar[dict] = {"consistency": ConceptSource, "rules": AtomSource}    # fields of these types (JSON)
    consistency: ConceptSource
    rules: AtomSource


@dataclass(frozen=True)
class ChainOutput:
    """A chain's two outputs: the consistency stages' reports and the rule stages' models."""
    kind: ClassVar[str] = "reports and models"
    records: ClassVar[tuple[str, ...]] = ("reports", "models")
    NESTED: ClassVar[dict] = {"reports": ReportOutput, "models": ModelOutput}
    reports: ReportOutput = ReportOutput()
    models: ModelOutput = ModelOutput()


Source = Union[ConceptSource, AtomSource, FactSource, StatementSource]
Output = Union[ReportOutput, ModelOutput, ChainOutput]
#: the source and output each kind of topology reads and writes
KIND_IO = {"consistency": (ConceptSource, ReportOutput), "rules": (AtomSource, ModelOutput),
           "streamlog": (FactSource, ModelOutput), "chain": (StatementSource, ChainOutput)}
SOURCE_KINDS = {ConceptSource: "consistency", AtomSource: "rules", FactSource: "streamlog",
                StatementSource: "chain"}


# --- what the compilers found (printed, not executed) -----------------------------------------------------

@dataclass(frozen=True)
class ConsistencyNotes:
    """What the NI analysis found; ``unchecked``: pairs of the NI closure no stage checks (a topology declared by
    hand and accepted as partial; 0 for every compiled one)."""
    ni_closure_size: int
    ni_roots: tuple[tuple[str, str], ...] = ()
    ni_groups: tuple[tuple[tuple[str, str], ...], ...] = ()
    unchecked: int = 0


@dataclass(frozen=True)
class RulesNotes:
    program: str = ""
    order: tuple[tuple[tuple[str, ...], ...], ...] = ()    # macro-nodes: components of "p/n"
    tau: tuple[tuple[str, str], ...] = ()                   # streaming atom -> window operator atom
    grouping: str = ""                                      # which strategy the stages were cut for


@dataclass(frozen=True)
class StreamlogNotes:
    """The analysis of a Streamlog program: each predicate's class (input, static, sequential, strictly
    sequential, forward), the bistate version whose stratification makes it XY-stratified, and the blocking
    analysis (``findings``: what rejects it; empty for a program that runs)."""
    program: str = ""
    predicates: tuple[tuple[str, str], ...] = ()
    bistate: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChainNotes:
    """What the compilers of a chain's parts found, and the TBox its saturation stage's tables come from."""
    NESTED: ClassVar[dict] = {"consistency": ConsistencyNotes, "rules": RulesNotes}
    tbox: str = ""
    consistency: ConsistencyNotes | None = None
    rules: RulesNotes | None = None


Notes = Union[ConsistencyNotes, RulesNotes, StreamlogNotes, ChainNotes, None]
NOTES_KINDS = {"consistency": ConsistencyNotes, "rules": RulesNotes, "streamlog": StreamlogNotes,
               "chain": ChainNotes}


# --- the topology ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Topology:
    source: Source
    stages: tuple[Stage, ...]
    output: Output = ReportOutput()
    name: str = field(default="topology", compare=False)
    label: str = field(default="", compare=False)       # how it was made: ntm, ltm-1,2, hand, rules
    notes: Notes = field(default=None, compare=False)

    @property
    def kind(self) -> str:
        """``consistency``, ``rules``, ``streamlog`` or ``chain``: what the source feeds (every stage is of this
        kind, but for a chain's: ``parts``)."""
        return SOURCE_KINDS[type(self.source)]

    def stage(self, stage_id: str) -> Stage:
        for stage in self.stages:
            if stage.id == stage_id:
                return stage
        raise KeyError(stage_id)

    @property
    def partial(self) -> str:
        """What a partial consistency topology leaves unchecked, in words; empty when it checks the whole NI closure
        (as far as its notes know: ``consistency.coverage.check_coverage`` measures it against a TBox)."""
        if isinstance(self.notes, ChainNotes):
            return self.parts()[0].partial
        unchecked = getattr(self.notes, "unchecked", 0)
        if not unchecked:
            return ""
        return f"partial topology: {unchecked} of the {self.notes.ni_closure_size} pairs of the NI closure are " \
               "checked by no stage"

    @property
    def conjunction_counts(self) -> list[int]:
        return [len(s.conjunction_ops) for s in self.stages]

    # --- the routing rule of consistency stages ----------------------------------------------------------
    def conjunctions(self, index: int) -> tuple[ConjunctionOp, ...]:
        """The conjunction ops runners evaluate at consistency stage ``index``: the stage's own and, at the first
        stage, owl:Nothing with itself. An assertion of owl:Nothing is inconsistent whatever the TBox states; it is
        no pair of the TBox's NI closure, so the stage's ops (and the counts the papers give) leave it out."""
        ops = self.stages[index].conjunction_ops
        return ops + (NOTHING_OP,) if index == 0 and NOTHING_OP not in ops else ops

    def accepted(self) -> tuple[str, ...]:
        """Every concept a source tuple may assert and some stage reads (the source's concepts, their aliases and
        owl:Nothing), sorted; tuples of any other concept are irrelevant."""
        source = self.source
        return tuple(sorted(set(source.concepts) | {a for a, _ in source.aliases} | {NOTHING}))

    def outputs(self, index: int) -> dict[str, tuple[tuple[str, bool], ...]]:
        """What stage ``index`` passes on, per concept it receives: (concept, inferred?) pairs: the concept
        itself if forwarded, the superclass of each of its inference ops. The last stage passes nothing on
        (what reaches it has been checked against every NI)."""
        if index == len(self.stages) - 1:
            return {}
        stage = self.stages[index]
        out: dict[str, list[tuple[str, bool]]] = {}
        for concept in stage.forwards:
            out.setdefault(concept, []).append((concept, False))
        for op in stage.inference_ops:
            out.setdefault(op.sub, []).append((op.sup, True))
        return {c: tuple(v) for c, v in out.items()}

    def _routing_tables(self) -> tuple:
        """Per stage, once per topology: what it passes on (``outputs``), how many of its conjunction ops touch
        each concept, and the concepts it caches. NPD's one-stage closure has 32,342 ops: derived per concept,
        these took seconds before the first tuple."""
        tables = self.__dict__.get("_routing")
        if tables is None:
            tables = []
            for index in range(len(self.stages)):
                touch: dict[str, int] = {}
                ops = self.conjunctions(index)
                for op in ops:
                    touch[op.left] = touch.get(op.left, 0) + 1
                    if op.right != op.left:
                        touch[op.right] = touch.get(op.right, 0) + 1
                tables.append((self.outputs(index), touch, frozenset(c for op in ops for c in op.pair)))
            tables = tuple(tables)
            object.__setattr__(self, "_routing", tables)      # a cache, not a field: equality and JSON ignore it
        return tables

    def route(self, asserted: str) -> tuple[tuple[str, ...], ...]:
        """The concepts a tuple asserting ``asserted`` is at each stage (sorted sets, one per stage up to the
        last it reaches; empty when the source drops it). Every runner routes tuples by this."""
        source = self.source
        concept = dict(source.aliases).get(asserted, asserted)
        if concept not in source.concepts and concept != NOTHING:
            return ()
        frontier = {concept}
        route = []
        for outputs, _, _ in self._routing_tables():
            if not frontier:
                break
            route.append(tuple(sorted(frontier)))
            frontier = {target for c in frontier for target, _ in outputs.get(c, ())}
        return tuple(route)

    def route_counts(self, asserted: str) -> tuple[tuple[int, int, int, int, int], ...]:
        """Per stage a tuple asserting ``asserted`` reaches, what it adds to the stage's counters: (tuples in,
        cached in its window, forwarded, inferred, conjunction ops evaluated). Every runner counts by this."""
        out = []
        tables = self._routing_tables()
        for index, frontier in enumerate(self.route(asserted)):
            outputs, touch, cached = tables[index]
            passed = [inferred for c in frontier for _, inferred in outputs.get(c, ())]
            out.append((len(frontier), sum(1 for c in frontier if c in cached),
                        passed.count(False), passed.count(True), sum(touch.get(c, 0) for c in frontier)))
        return tuple(out)

    # --- validation --------------------------------------------------------------------------------------
    def validate(self) -> "Topology":
        """Raise TopologyError naming the stage and what is wrong; return the topology when it is sound."""
        if type(self.source) not in SOURCE_KINDS:
            raise TopologyError(f"unknown source {self.source!r}")
        if not self.stages and self.kind == "consistency":
            raise TopologyError("a consistency topology needs at least one stage", hint="compile one, or add stages")
        seen: set[str] = set()
        for stage in self.stages:
            if stage.id in seen:
                raise TopologyError(f"stage '{stage.id}' already exists",
                                    hint="do you have two stages with the same id?")
            seen.add(stage.id)
            if not isinstance(stage.parallelism, int) or stage.parallelism < 1:
                raise TopologyError(f"stage '{stage.id}': parallelism must be a whole number >= 1, "
                                    f"got {stage.parallelism!r}")
        output_type = KIND_IO[self.kind][1]
        if not isinstance(self.output, output_type):
            raise TopologyError(f"a {self.kind} topology writes {output_type.kind}, not {self.output.kind}")
        if self.kind == "chain":
            self._validate_chain()
            return self
        for stage in self.stages:
            if stage.kind != self.kind:
                raise TopologyError(f"stage '{stage.id}' is a {stage.kind} stage in a {self.kind} topology",
                                    hint="a topology has stages of one kind")
        {"consistency": self._validate_consistency, "rules": self._validate_rules,
         "streamlog": self._validate_streamlog}[self.kind]()
        return self

    # --- a chain: consistency stages, one saturation stage, rule stages ----------------------------------
    def parts(self) -> tuple["Topology", SaturationStage, "Topology"]:
        """A chain's consistency topology, its saturation stage and its rules topology (each part as the
        topology of its own kind, so that each kind's executor runs it as it runs a topology of that kind)."""
        if self.kind != "chain":
            raise TopologyError(f"a {self.kind} topology is no chain")
        kinds = [stage.kind for stage in self.stages]
        if kinds.count(SaturationStage.kind) != 1:
            raise TopologyError(f"a chain has one saturation stage, not {kinds.count(SaturationStage.kind)}",
                                hint="build it with srtopo.chain.chain(consistency, rules, tbox)")
        at = kinds.index(SaturationStage.kind)
        notes = self.notes if isinstance(self.notes, ChainNotes) else ChainNotes()
        label, _, rules_label = self.label.partition("+")
        consistency = Topology(self.source.consistency, self.stages[:at], self.output.reports,
                               name=self.name, label=label, notes=notes.consistency)
        rules = Topology(self.source.rules, self.stages[at + 1:], self.output.models, name=self.name,
                         label=rules_label or "rules", notes=notes.rules)
        return consistency, self.stages[at], rules

    def _validate_chain(self) -> None:
        consistency, saturation, rules = self.parts()
        for part, kind in ((consistency, "consistency"), (rules, "rules")):
            for stage in part.stages:
                if stage.kind != kind:
                    raise TopologyError(f"stage '{stage.id}' is a {stage.kind} stage where a chain has its "
                                        f"{kind} stages", hint="a chain is consistency stages, one saturation "
                                                               "stage, then rule stages")
        if not rules.stages:
            raise TopologyError("a chain needs at least one rule stage", hint="give a program that derives something")
        if saturation.inconsistent not in INCONSISTENT:
            raise TopologyError(f"stage '{saturation.id}': inconsistent must be drop or keep, not "
                                f"{saturation.inconsistent!r}")
        ids = [s.id for s in self.stages]
        consistency.validate()
        rules.validate()
        if len(set(ids)) != len(ids):
            raise TopologyError("a chain's stage ids must differ", hint="do you have two stages with the same id?")

    def _validate_consistency(self) -> None:
        received = frozenset(self.source.concepts)
        for index, stage in enumerate(self.stages):
            if stage.key != BY_SUBJECT:
                raise TopologyError(f"stage '{stage.id}' is keyed by {stage.key}: consistency stages are keyed by "
                                    "subject", hint="a conflict is between tuples of one subject")
            for op in stage.conjunction_ops:
                for concept in op.pair:
                    if concept not in received:
                        raise TopologyError(
                            f"stage '{stage.id}': conjunction {display(op.left)} ∧ {display(op.right)} reads "
                            f"{display(concept)}, which no earlier stage emits",
                            hint="add an inference op or forward it in the previous stage, or move the op earlier")
            for op in stage.inference_ops:
                if op.sub not in received:
                    raise TopologyError(f"stage '{stage.id}': inference from {display(op.sub)}, which no earlier "
                                        "stage emits", hint="forward it in the previous stage")
            for concept in stage.forwards:
                if concept not in received:
                    raise TopologyError(f"stage '{stage.id}': forwards {display(concept)}, which it does not receive")
            received = frozenset(t for targets in self.outputs(index).values() for t, _ in targets)

    def _validate_rules(self) -> None:
        defined: dict[str, str] = {}
        for stage in self.stages:
            for head in stage.heads:
                if head in defined:
                    raise TopologyError(f"stage '{stage.id}': {head} is also derived by stage '{defined[head]}'",
                                        hint="a predicate is derived by one stage (its component's)")
                defined[head] = stage.id
        position = {s.id: i for i, s in enumerate(self.stages)}
        for index, stage in enumerate(self.stages):
            for window in stage.windows:
                if window.mode not in WINDOW_MODES:
                    raise TopologyError(f"stage '{stage.id}': window operator {window.name} has an unknown mode "
                                        f"{window.mode!r}", hint="use one of " + ", ".join(WINDOW_MODES))
                if window.signature not in stage.inputs:
                    raise TopologyError(f"stage '{stage.id}': window operator {window.signature} is not an input")
                owner = defined.get(window.observed)
                if owner is not None and position[owner] > index:
                    raise TopologyError(f"stage '{stage.id}': the window on {window.observed} reads a predicate "
                                        f"derived later, by stage '{owner}'",
                                        hint="stages follow the processing order of the program")
            if stage.key.keyed:
                read = set(stage.inputs) | {w.observed for w in stage.windows} | set(stage.heads)
                for predicate, _ in stage.key.positions:
                    if predicate not in read:
                        raise TopologyError(f"stage '{stage.id}': key position on {predicate}, which it does not "
                                            "read")

    def _validate_streamlog(self) -> None:
        if len(self.stages) != 1:
            raise TopologyError(f"a Streamlog topology has one stage, not {len(self.stages)}")
        if self.source.union not in ("synchronized", "sort-merge", "plain"):
            raise TopologyError(f"unknown union {self.source.union!r}", hint="synchronized, sort-merge or plain")
        stage = self.stages[0]
        retain = stage.retain
        if retain is not None and (not isinstance(retain, int) or retain < 1):
            raise TopologyError(f"retain must be a whole number >= 1 of timestamps (or none), got {retain!r}")
        if stage.key.keyed:
            # a keyed stage routes every fact it reads or derives by one argument after the timestamp
            temporal = set(self.source.inputs) | set(stage.heads)
            positioned = [predicate for predicate, _ in stage.key.positions]
            for predicate, index in stage.key.positions:
                if predicate not in temporal:
                    raise TopologyError(f"stage '{stage.id}': key position on {predicate}, which it does not read "
                                        "or derive")
                if not isinstance(index, int) or not 1 <= index < predicate_arity(predicate):
                    raise TopologyError(f"stage '{stage.id}': key position {index!r} on {predicate}: the key is an "
                                        "argument after the timestamp (zero-based 1 .. arity-1)")
            missing = sorted(temporal - set(positioned))
            if missing or len(positioned) != len(set(positioned)):
                raise TopologyError(f"stage '{stage.id}': a keyed Streamlog stage needs one key position for each "
                                    f"predicate it reads or derives ({', '.join(missing) or 'one is given twice'})")

    # --- JSON --------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"name": self.name, "label": self.label, "kind": self.kind,
                "source": _tagged(self.source), "stages": [_tagged(s) for s in self.stages],
                "output": _tagged(self.output), "notes": None if self.notes is None else _plain(self.notes)}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @staticmethod
    def from_dict(data: dict) -> "Topology":
        try:
            kind = data.get("kind", "consistency")
            source_type, output_type = KIND_IO[kind]
            stages = tuple(_untag(STAGE_KINDS[s.get("kind", kind)], s) for s in data["stages"])
            notes = data.get("notes")
            return Topology(
                source=_untag(source_type, data["source"]), stages=stages,
                output=_untag(output_type, data.get("output") or {}), name=data.get("name", "topology"),
                label=data.get("label", ""),
                notes=None if notes is None else _untag(NOTES_KINDS[kind], notes))
        except (KeyError, TypeError, ValueError) as error:
            raise TopologyError(f"not a topology in the JSON form of srtopo ({type(error).__name__}: {error})",
                                hint="write it with Topology.to_json() or 'srtopo compile --format json'") from None

    # --- printing ----------------------------------------------------------------------------------------
    def to_text(self) -> str:
        head = f"topology {self.name}" + (f" ({self.label})" if self.label else "")
        if self.kind == "chain":
            counts = [sum(1 for s in self.stages if s.kind == k) for k in ("consistency", "rules")]
            lines = [head + f": a chain of {counts[0]} consistency stage(s), a saturation stage and {counts[1]} "
                            "rule stage(s)"]
        else:
            lines = [head + f": {len(self.stages)} {self.kind} stage(s)"]
        lines += _notes_text(self.notes)
        lines.append("  " + _source_text(self.source))
        for stage in self.stages:
            lines += _stage_text(stage)
        lines.append("  " + _output_text(self.output))
        return "\n".join(lines)

    def to_dot(self) -> str:
        def q(text: str) -> str:
            return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        lines = [f"digraph {q(self.name)} {{", "  rankdir=LR;", "  node [shape=box];",
                 f"  source [label={q(_source_text(self.source))}, shape=ellipse];"]
        previous = "source"
        for stage in self.stages:
            label = "\n".join([stage.id, f"parallelism {stage.parallelism}"] + _stage_summary(stage))
            lines.append(f"  {q(stage.id)} [label={q(label)}];")
            lines.append(f"  {q(previous)} -> {q(stage.id)} [label={q('key: ' + str(stage.key))}];")
            previous = stage.id
        lines.append(f"  output [label={q(self.output.kind)}, shape=ellipse];")
        last_rules = max((i for i, s in enumerate(self.stages) if isinstance(s, RuleStage)), default=None)
        for index, stage in enumerate(self.stages):
            # what writes the output: consistency stages with conjunction ops (reports), every rule or Streamlog
            # stage, a chain's last rule stage (models)
            if isinstance(stage, ConsistencyStage):
                writes = bool(stage.conjunction_ops)
            elif isinstance(stage, SaturationStage):
                writes = False
            else:
                writes = self.kind != "chain" or index == last_rules
            if writes:
                lines.append(f"  {q(stage.id)} -> output [style=dashed];")
        lines.append("}")
        return "\n".join(lines)


# --- JSON helpers: dataclasses as tagged dicts ------------------------------------------------------------

def _plain(value):
    if isinstance(value, ConjunctionOp):          # compact: NPD plans hold tens of thousands of ops
        return [value.left, value.right, *value.ni]
    if isinstance(value, InferenceOp):
        return [value.sub, value.sup]
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _tagged(value) -> dict:
    return {"kind": value.kind, **_plain(value)}


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


_DECODE = {
    "key": lambda v: PartitionKey(v["name"], _tuples(v.get("positions", []))),
    "inference_ops": lambda v: tuple(InferenceOp(a, b) for a, b in v),
    "conjunction_ops": lambda v: tuple(ConjunctionOp(a, b, (c, d)) for a, b, c, d in v),
    "windows": lambda v: tuple(WindowOp(**{k: _tuples(x) for k, x in w.items()}) for w in v),
}


def _untag(cls, data: dict):
    nested = getattr(cls, "NESTED", {})

    def decode(name, value):
        if name in nested:
            return None if value is None else _untag(nested[name], value)
        return _DECODE.get(name, _tuples)(value)
    return cls(**{f.name: decode(f.name, data[f.name]) for f in fields(cls) if f.name in data})


# --- text helpers ----------------------------------------------------------------------------------------

def _source_text(source: Source) -> str:
    if isinstance(source, StatementSource):
        return (f"source: RDF statements with an event time; their tuples reach {len(source.consistency.concepts)} "
                f"concepts ({len(source.consistency.aliases)} aliases), the statements kept and entailed reach the "
                f"program as triple/3 at time points of 1 {source.rules.unit} ({len(source.rules.background)} "
                "background facts)")
    if isinstance(source, ConceptSource):
        return f"source: {len(source.concepts)} concepts, {len(source.aliases)} aliases"
    if isinstance(source, FactSource):
        return (f"source: timestamped facts of {', '.join(source.inputs) or 'no predicate'}, several streams "
                f"merged by the {source.union} union")
    return f"source: atoms per time point of 1 {source.unit}, {len(source.background)} background facts"


def _output_text(output: Output) -> str:
    if isinstance(output, ChainOutput):
        return f"{_output_text(output.reports)}; {_output_text(output.models)}"
    if isinstance(output, ReportOutput):
        return "output: reports"
    shows = "every atom" if output.shows is None else ", ".join(output.shows) or "nothing"
    return f"output: models ({shows})"


def _notes_text(notes: Notes) -> list[str]:
    if isinstance(notes, ChainNotes):
        lines = ["  consistency part" + (f", TBox {notes.tbox}:" if notes.tbox else ":")]
        lines += ["  " + line for line in _notes_text(notes.consistency)]
        lines += ["  program part:"] + ["  " + line for line in _notes_text(notes.rules)]
        return lines
    if isinstance(notes, ConsistencyNotes):
        lines = [f"  NI closure: {notes.ni_closure_size} pairs; NI roots: {len(notes.ni_roots)}; "
                 f"NI groups: {len(notes.ni_groups)}"]
        if notes.unchecked:
            lines.append(f"  partial: {notes.unchecked} pairs of the NI closure are checked by no stage")
        for i, group in enumerate(notes.ni_groups, 1):
            shown = ", ".join(f"{display(a)}/{display(b)}" for a, b in group[:12])
            more = f", ... ({len(group)} in all)" if len(group) > 12 else ""
            lines.append(f"    G{i}: {shown}{more}")
        return lines
    if isinstance(notes, RulesNotes):
        lines = [f"  program {notes.program}" + (f", stages cut for the {notes.grouping} strategy"
                                                 if notes.grouping else "")]
        lines.append("  processing order (macro-nodes of components): " + " ".join(
            "[" + " ".join("{" + ", ".join(c) + "}" for c in macro) + "]" for macro in notes.order))
        lines += [f"    {atom} |-> {fresh}" for atom, fresh in notes.tau]
        return lines
    if isinstance(notes, StreamlogNotes):
        lines = [f"  Streamlog program {notes.program}"]
        lines += [f"    {predicate}: {what}" for predicate, what in notes.predicates]
        if notes.findings:
            lines.append("  rejected:")
            lines += [f"    {finding}" for finding in notes.findings]
        else:
            lines.append("  accepted: non-blocking, no time-warping rule, the bistate version is stratified "
                         "(XY-stratified)")
        lines.append("  bistate version (_new: at the head's timestamp now; _old: earlier):")
        lines += [f"    {rule}" for rule in notes.bistate]
        return lines
    return []


def _stage_summary(stage: Stage) -> list[str]:
    if isinstance(stage, SaturationStage):
        return [f"{stage.inconsistent} statements of inconsistent individuals",
                f"entailments of {len(stage.types)} classes, {len(stage.properties)} properties"]
    if isinstance(stage, ConsistencyStage):
        return [f"{len(stage.conjunction_ops)} conjunction ops", f"{len(stage.inference_ops)} inference ops"]
    if isinstance(stage, RuleStage):
        return [f"derives {', '.join(stage.heads)}", f"{len(stage.windows)} window operators"]
    if isinstance(stage, StreamlogStage):
        return [f"derives {', '.join(stage.heads)}", f"{len(stage.rules)} rules"]
    return []


def _stage_text(stage: Stage) -> list[str]:
    lines = [f"  stage {stage.id}: key {stage.key}, parallelism {stage.parallelism}"]
    if isinstance(stage, ConsistencyStage):
        lines[0] += (f", {len(stage.conjunction_ops)} conjunction ops, {len(stage.inference_ops)} inference ops, "
                     f"{len(stage.forwards)} forwarded concepts")
        for op in stage.conjunction_ops[:20]:
            lines.append(f"    {display(op.left)} ∧ {display(op.right)}  "
                         f"(violates DJ({display(op.ni[0])}, {display(op.ni[1])}))")
        if len(stage.conjunction_ops) > 20:
            lines.append(f"    ... {len(stage.conjunction_ops) - 20} more conjunction ops")
        for op in stage.inference_ops[:20]:
            lines.append(f"    → {display(op.sub)} ⊑ {display(op.sup)}")
        if len(stage.inference_ops) > 20:
            lines.append(f"    ... {len(stage.inference_ops) - 20} more inference ops")
    elif isinstance(stage, RuleStage):
        lines[0] += (f", derives {', '.join(stage.heads) or 'nothing'}"
                     + (", streaming-recursive" if stage.recursive else "")
                     + (", choice part: one answer set per time point" if stage.choice else ""))
        for window in stage.windows:
            lines.append(f"    window {window.signature}: {window.mode}"
                         + (f" {window.count}" if window.count is not None else "")
                         + f" of {window.observed} in {window.written or list(window.distances)}"
                         + f" (distances {','.join(map(str, window.distances))})")
        lines += [f"    {rule}" for rule in stage.rules.splitlines()]
    elif isinstance(stage, SaturationStage):
        withheld = "withholds nothing (keep)" if stage.inconsistent == "keep" else \
            "withholds a statement at t whose subject, or individual object of a property, has a report at t (drop)"
        lines[0] += f", {withheld}; entails from each kept statement alone, by lookup tables:"
        lines.append(f"    types of {len(stage.types)} classes ({sum(len(d) for _, d in stage.types)} superclass "
                     f"entries), {len(stage.properties)} object properties ("
                     f"{sum(len(p[1]) + len(p[2]) for p in stage.properties)} superproperty entries, "
                     f"{sum(len(p[3]) for p in stage.properties)} domain and {sum(len(p[4]) for p in stage.properties)} "
                     "range entries)")
        for cls, supers in stage.types[:10]:
            lines.append(f"    x a {display(cls)} ⊨ x a " + ", ".join(display(d) for d in supers))
        if len(stage.types) > 10:
            lines.append(f"    ... {len(stage.types) - 10} more classes")
        for prop, forward, inverse, domains, ranges in stage.properties[:10]:
            said = [f"a {display(q)} b" for q in forward] + [f"b {display(q)} a" for q in inverse]
            said += [f"a a {display(d)}" for d in domains] + [f"b a {display(d)}" for d in ranges]
            lines.append(f"    a {display(prop)} b ⊨ " + ", ".join(said))
        if len(stage.properties) > 10:
            lines.append(f"    ... {len(stage.properties) - 10} more properties")
    elif isinstance(stage, StreamlogStage):
        lines[0] += (f", derives {', '.join(stage.heads) or 'nothing'}"
                     + (f", keeps {', '.join(stage.history)} of earlier timestamps" if stage.history else "")
                     + (f", retains the last {stage.retain} timestamps" if stage.retain else ""))
        lines += [f"    {what}: {rule}" for rule, what in stage.rules]
    return lines


def load_topology(path: str) -> Topology:
    """A topology saved as JSON (``srtopo compile --format json`` or ``Topology.to_json()``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return Topology.from_dict(json.load(handle))
    except OSError as error:
        raise TopologyError(f"cannot read topology: {error.strerror}", file=path) from None
    except json.JSONDecodeError as error:
        raise TopologyError(f"not JSON: {error.msg}", file=path, line=error.lineno, col=error.colno) from None
