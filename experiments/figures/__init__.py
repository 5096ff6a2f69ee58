"""One module per experiment of "Distributed Stream Consistency Checking", section 5, each with the same small
interface: ``NAME``, ``DEPENDS`` (experiments whose rows it reads), ``run(ctx) -> list[Row]``,
``table(rows, ctx) -> str`` (markdown) and ``plot(rows, path)`` (or None). ``FIGURES`` is their order."""
from experiments.figures import baseline, cost_model, fig5, fig6, fig6c, tboxes, uba

FIGURES = (tboxes, uba, fig6, fig6c, fig5, cost_model, baseline)   # fig5 late: its repeated rounds fit the time left
BY_NAME = {module.NAME: module for module in FIGURES}
