"""The choice part on one kept Control, forgetting at each time point what its strategy says (``incremental``,
``forget``, ``progress``, ...: ``strategies.CHOICE_STRATEGIES``)."""
from __future__ import annotations

import time

from clingo import Function, ast

from srtopo.solving.control import ARGS, chosen_answer
from srtopo.solving.incremental import IncrementalSolver
from srtopo.solving.spec import SubprogramSpec


class KeptChoiceSolver(IncrementalSolver):
    """The choice part on one Control kept across time points ("Managing caching strategies for stream reasoning
    with reinforcement learning", section 3): every input atom seen so far is an ``#external`` (the program is
    over-grounded once per input domain and rebuilt when an unseen input atom arrives), a time point assigns
    the externals and solves again, and what clasp keeps from the previous solve call is what the strategy
    says (clasp's ``--forget-on-step``: variable scores, saved signs, lemma scores, learned lemmas)."""

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None, forget: str = "",
                 extra: tuple = ()):
        args = ARGS + ["--opt-mode=opt"] + ([f"--forget-on-step={forget}"] if forget else []) + list(extra)
        super().__init__(spec, static, externals, args)
        self.kind = "kept" + (f" (forgets {forget})" if forget else "")
        self.text += "".join(self._declared(statement) for statement in spec.domains)

    def _declared(self, statement: str) -> str:
        """A declared input domain ``#external p(t) : body.`` as the externals of input p (text generated from
        the program's own AST)."""
        found: list = []
        ast.parse_string(statement, found.append)
        external = next(s for s in found if s.ast_type == ast.ASTType.External)
        term = external.atom.symbol
        sig = (term.name, len(term.arguments)) if term.ast_type == ast.ASTType.Function else (str(term), 0)
        ks = [k for k, input_sig in enumerate(self.spec.input_sigs)
              if input_sig == sig and self.spec.match(k) == sig[0]]
        if not ks:
            return ""
        args = "(" + ",".join(str(a) for a in term.arguments) + ")" if sig[1] else ""
        body = "; ".join(str(b) for b in external.body)
        return f"#external __sr_x{ks[0]}{args}" + (f" : {body}" if body else "") + ". [false]\n"

    def _rebuild(self, current) -> None:
        started = time.perf_counter()
        super()._rebuild(current)
        self.stats["ground_s"] = self.stats.get("ground_s", 0.0) + time.perf_counter() - started
        if not self.spec.domains:
            return
        atoms = self.ctl.symbolic_atoms
        for k, (_name, n) in enumerate(self.spec.input_sigs):       # the declared atoms widen the domain
            match = self.spec.match(k)
            self.domain[k].update(Function(match, a.symbol.arguments) for a in atoms.by_signature(f"__sr_x{k}", n))
            for atom in current[k]:
                self.ctl.assign_external(Function(f"__sr_x{k}", atom.arguments), True)

    def _answer(self):
        started = time.perf_counter()
        answer = chosen_answer(self.ctl)
        self.stats["search_s"] = self.stats.get("search_s", 0.0) + time.perf_counter() - started
        return answer
