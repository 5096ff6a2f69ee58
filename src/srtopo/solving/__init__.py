"""clingo's side of the rule front ends: the Python functions of external atoms (``externals``) and the bandit
of the ``auto`` strategy (``bandit``)."""
