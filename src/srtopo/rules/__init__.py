"""I-DLV-sr stream reasoning programs: parse, analyse, rewrite, compile into a rules topology, evaluate with
clingo; ``stream`` reads atom logs and timelines, ``partition`` is the key-partitioned evaluation a Spark task
runs."""
