"""Experiments: the LUBM and NPD study of "Distributed Stream Consistency Checking" (seed 003, section 5)."""
