"""What flows into and out of a run: source descriptions (``sources``), sinks (``sinks``), and the readers and
writers of the stream formats (``tnt``: timestamped N-Triples and the line reading every reader shares; ``tsv``:
tuple files; ``rdf``: RDF files as tnt lines)."""
