"""Lines of a stream spec: a file, a directory (the lines of its files in name order), ``-`` for standard input
or ``tcp://host:port``. Standard input and sockets are read as the lines come (``io.tnt.fd_lines``), so a
signal stops a run between two lines."""
from __future__ import annotations

import os
import socket
import sys
from typing import Iterator

from srtopo.errors import StreamInputError
from srtopo.io.sources import stream_files
from srtopo.io.tnt import decoded_lines, fd_lines, file_lines


def open_lines(spec: str, idle=None) -> Iterator:
    """``-`` = stdin, ``tcp://host:port`` = connect and read lines, a file path, or a directory: the lines of its
    files in name order as (file, line number, text). ``idle``: called while standard input or a socket is silent
    (``io.tnt.fd_lines``)."""
    if spec == "-":
        yield from decoded_lines(fd_lines(sys.stdin.fileno(), idle=idle))
        return
    if spec.startswith("tcp://"):
        host, _, port = spec[len("tcp://"):].rpartition(":")
        try:
            conn = socket.create_connection((host or "127.0.0.1", int(port)))
        except (OSError, ValueError) as error:
            raise StreamInputError(f"cannot connect to {spec}: {error}") from None
        with conn:
            yield from decoded_lines(fd_lines(conn.fileno(), idle=idle))
        return
    if os.path.isdir(spec):
        for file in stream_files(spec):
            try:
                for number, line in enumerate(file_lines(file), start=1):
                    yield file, number, line
            except OSError as error:
                raise StreamInputError(f"cannot read stream: {error.strerror}", file=file) from None
        return
    try:
        yield from file_lines(spec)
    except OSError as error:
        raise StreamInputError(f"cannot read stream: {error.strerror}", file=spec) from None
