"""``incremental-strict``: one Control kept across calls, for a stratified part (and, as ``KeptChoiceSolver``,
for a choice part).

Every input atom ever seen is an ``#external`` (grounded once, over-grounding in the spirit of I2-DLV); a call
only flips the externals whose truth changed. clingo cannot re-ground rules for atoms it has not seen
("redefinition of atom"), so a call that brings an unseen input atom rebuilds the Control with the enlarged
domain.
"""
from __future__ import annotations

from clingo import Function

from srtopo.solving.control import ARGS, new_control, read_answer
from srtopo.solving.spec import EMPTY, Inputs, SubprogramSpec, atom_pattern, show_statements


class IncrementalSolver:
    kind = "incremental"

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None, args=None):
        self.spec = spec
        self.externals = externals
        self.args = list(ARGS if args is None else args)
        # background facts are ground as facts, not externals: 60k true externals would be 60k assumptions
        # in every solve call; only atoms beyond them (from the stream or earlier subprograms) are externals
        self.static = [frozenset((static or {}).get(sig, EMPTY)) for sig in spec.input_sigs]
        parts = []
        for k, (name, n) in enumerate(spec.input_sigs):
            ext = atom_pattern(f"__sr_x{k}", n)
            given = atom_pattern(spec.match(k), n)
            parts.append(f"#external {ext} : {given} = @sr_dom_true({k}). [true]\n"
                         f"#external {ext} : {given} = @sr_dom_false({k}). [false]\n"
                         f"{atom_pattern(name, n)} :- {ext}.\n")
            if self.static[k]:
                parts.append(f"{atom_pattern(name, n)} :- {atom_pattern(name, n)} = @sr_static({k}).\n")
        self.text = spec.rules_text + "\n" + "".join(parts) + show_statements(spec)
        self.ctl = None
        self.domain = [set() for _ in spec.input_sigs]
        self.true: list = [EMPTY for _ in spec.input_sigs]
        self.stats = {"solves": 0, "groundings": 0}
        self.last_rebuilt = False
        self.last = None

    def solve(self, inputs) -> list:
        current = [inputs.get(sig, EMPTY) for sig in self.spec.input_sigs]
        current = [c if isinstance(c, (set, frozenset)) else frozenset(c) for c in current]
        current = [c if not s or c is s else (c - s) for c, s in zip(current, self.static)]
        current = [EMPTY if c is s and s else c for c, s in zip(current, self.static)]
        grows = self.ctl is None or any(len(c) > len(d) or not d.issuperset(c)
                                        for c, d in zip(current, self.domain))
        self.last_rebuilt = grows
        changed = grows
        if grows:
            for d, c in zip(self.domain, current):
                d.update(c)
            self._rebuild(current)
        else:
            assign = self.ctl.assign_external
            for k, (c, old) in enumerate(zip(current, self.true)):
                if c is old:
                    continue
                name = f"__sr_x{k}"
                for atom in c - old if len(c) else ():
                    assign(Function(name, atom.arguments), True)
                    changed = True
                for atom in old - c if len(old) else ():
                    assign(Function(name, atom.arguments), False)
                    changed = True
                self.true[k] = c if isinstance(c, frozenset) else frozenset(c)
        if changed or self.stats["solves"] == 0:
            # same externals as last call: the answer set is reused (the unique one of a stratified program,
            # the chosen one of a choice part)
            self.stats["solves"] += 1
            self.last = self._answer()
        return self.last

    def _answer(self):
        return read_answer(self.ctl)

    def _new_control(self):
        return new_control(self.args)

    def _rebuild(self, current) -> None:
        ctl = self._new_control()
        ctl.add("base", [], self.text)
        lists = [(list(c), [a for a in d if a not in c]) for c, d in zip(current, self.domain)]
        ctx = Inputs(lists, self.externals)
        ctx.static = [list(s) for s in self.static]
        ctl.ground([("base", [])], context=ctx)
        self.ctl = ctl
        self.true = [c if isinstance(c, frozenset) else frozenset(c) for c in current]
        self.stats["groundings"] += 1
