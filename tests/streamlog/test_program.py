"""What the Streamlog analysis refuses in a program's names."""
from __future__ import annotations

import pytest

from srtopo.errors import ProgramError
from srtopo.streamlog import parse_program


@pytest.mark.parametrize("rule, refused", [
    ("p(T,X) :- a(T,X), X != __sl_next(T,1).\n", "__sl_next"),
    ("p(T,f(__x(1))) :- a(T,_).\n", "__x"),
    ("p(T,X) :- a(T,X), X != __sl_now.\n", "__sl_now"),
    ("p(T,__c) :- a(T,_).\n", "__c"),
    ("p(T,N) :- a(T,_), N = #count{ X : b(T,g(__y(X),X)) }.\n", "__y"),
    ("p(T,X) :- a(T,X), \"__s\" != X.\n", None),
    ("p(T,X) :- a(T,X), x__y != X.\n", None),
])
def test_a_name_with_the_reserved_prefix_is_refused_wherever_it_is(rule, refused):
    """Generated names start with ``__``: a program's own function of such a name, in a term at any depth, is an
    error at its place; a string holding ``__``, or a name with ``__`` inside, is the program's."""
    if refused is None:
        assert parse_program(rule, "r.sl").check()
        return
    with pytest.raises(ProgramError, match=f"r.sl:1:.*'{refused}' uses the reserved prefix '__'"):
        parse_program(rule, "r.sl").check()
