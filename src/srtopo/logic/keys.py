"""Partition keys, whatever the front end: how far the search for a key variable goes, and the partition a key
value falls in (the same on the driver, in a Spark task and in Spark SQL)."""
from __future__ import annotations

import zlib

#: more candidate assignments of key positions than this are not searched (the stage runs in one partition)
SEARCH_LIMIT = 20000


def key_partition(value_text: str, partitions: int) -> int:
    """The partition of a key value (an argument printed by clingo): CRC-32 of its UTF-8 bytes modulo the
    number of partitions, which Spark SQL computes as ``pmod(crc32(CAST(v AS BINARY)), n)``."""
    return zlib.crc32(value_text.encode("utf-8")) % partitions
