"""Experiments and benchmarks of the checkout (not installed): the LUBM and NPD study of "Distributed Stream
Consistency Checking" (section 5), the rules and Streamlog benchmarks and the reliability campaigns. Run them
from the repository root as ``python -m experiments.<name>``; results go to ``experiments/results``."""
