"""A slice of the fuzz campaign (``python -m experiments.fuzz`` runs 10,000 examples per target): every
parser and loader, on inputs built from valid and broken pieces of its grammar, arbitrary text and bytes and
mutated real files, gives a value or a located project error, accounts for every stream line, and never hangs."""
import subprocess
import sys

import pytest

pytest.importorskip("hypothesis")

from experiments.fuzz import TARGETS, fuzz  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_parser_gives_a_value_or_a_located_error(target):
    row = fuzz(target, examples=150, seed=1)
    assert row["examples"] >= 50 and row["failure"] is None
    # the inputs reach both outcomes: a fuzzer that only produced garbage would test one path
    outcomes = (row.get("records", 0), row.get("rejected", 0)) if "records" in row or "rejected" in row else \
        (row.get("values", 0), row.get("errors", 0))
    assert all(outcomes), row


@pytest.mark.parametrize("text, where", [
    ("p(X) :- q(X), \u00e9.", ":1:15"),          # a lexer error on a non-ASCII byte: clingo's message cannot be
    (',"\u00f2 unterminated', ":1:3"),            # decoded by its Python binding, which aborted the process
    ("p(1).\x00 q.", ":1:6"),                     # clingo would read up to the NUL only
])
@pytest.mark.slow
def test_program_text_clingo_cannot_take_is_a_located_error_not_an_abort(text, where):
    code = ("from srtopo.streamlog.program import parse_program\nfrom srtopo.errors import ProgramError\n"
            f"try:\n    parse_program({text!r}, 'x.sl')\nexcept ProgramError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("x.sl" + where), done.stdout


def test_text_inside_strings_and_comments_may_be_any_unicode():
    from srtopo.streamlog.program import parse_program
    program = parse_program('p("caf\u00e9").  % caf\u00e9\n%* \u00e9 *%\nq(1).\n', "x.sl")
    assert program is not None
