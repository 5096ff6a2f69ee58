"""The IR every runner reads, with no Spark or clingo import: ``topology`` (a source, a chain of stages, an output; its
routing rule, validation and JSON form), ``records`` (what flows in and out: stream tuples, reports, models,
rejected records, in one JSON form) and ``lateness`` (the one definition of a late record, a source's clock)."""
