"""Logic programs, whatever the front end: what the I-DLV-sr programs of ``rules`` and the Streamlog programs of
``streamlog`` share (source locations, reserved names, clingo's parser and its errors, stream atoms as clingo
symbols, the partition-key search's bound and the partition of a key value). It imports neither front end."""
