"""I-DLV-sr stream reasoning programs: parse, analyse, rewrite, evaluate with clingo."""
