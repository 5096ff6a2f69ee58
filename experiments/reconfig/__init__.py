"""Reconfiguration streams of "Managing caching strategies for stream reasoning with reinforcement learning":
instance generators that mutate a problem instance step by step (the paper's mutation schemas, components
chosen by Zipf's law, restores by a Bernoulli trial), the project's encodings of the problems as I-DLV-sr
programs, and independent checkers of an answer (plain Python, no solver).

* ``queens``: n-Queens Completion (QC);
* ``pup``: the Partner Units Problem (PUP) on the *double* instances (two rows of rooms);
* ``zipf``: the skewed choice of a component.
"""
