"""Where a run reads and where it writes must not meet.

An output that is an input destroys it before it is read (a local sink truncates its file when it opens it); an
output inside a directory a run reads is read back as input by the next run (Spark reads subdirectories too); two
outputs at one path overwrite each other; an input inside an output directory is mixed with what the run writes.
Every command checks its paths with :func:`refuse_clashes` before it opens anything for writing, and so does
every runner for what it is given (``RunConfig``), so the Python API is guarded too.
"""
from __future__ import annotations

import os
from typing import Iterable

from srtopo.errors import UsageError

#: a path with a role: (how the user named it, e.g. "--stream", the path as given)
Named = tuple[str, str]


def spec_path(spec: str | None) -> str | None:
    """The local path a stream spec or output names, or None when it names none (standard input or output, a
    socket, a URI of another file system): ``tnt:PATH``, ``tsv:PATH``, ``rdf[turtle]:PATH``, ``file:PATH``."""
    if not spec or spec == "-":
        return None
    if spec.startswith("file://"):
        return spec[len("file://"):] or None
    if spec.startswith("file:"):
        return spec[len("file:"):] or None
    if "://" in spec:
        return None
    head = spec.split("/", 1)[0]
    if ":" in head and not os.path.exists(spec):     # a format prefix (a real file may have ':' in its name)
        prefix, rest = spec.split(":", 1)
        if prefix in ("tnt", "tsv", "rdf", "log", "jsonl") or (prefix.startswith("rdf[") and prefix.endswith("]")):
            return rest or None
        if prefix in ("socket", "tcp"):
            return None
    return spec


def local_of(path: str) -> str | None:
    """The local path of a bare path or a ``file:`` URI as Hadoop and Spark write them (``file:/a``,
    ``file:///a``, ``file://host/a``): the path as it is, with no percent-decoding (``file:/a b?c#d%41`` is the
    file ``/a b?c#d%41``); None for a URI of another file system."""
    if path.startswith("file:"):
        rest = path[len("file:"):]
        if rest.startswith("//"):
            slash = rest.find("/", 2)
            rest = rest[slash:] if slash >= 0 else "/"
        return rest
    return None if "://" in path else path


def _where(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _inside(inner: str, outer: str) -> bool:
    return inner != outer and inner.startswith(outer.rstrip(os.sep) + os.sep)


def _same(a: str, b: str, ra: str, rb: str) -> bool:
    if ra == rb:
        return True
    try:                              # hard links to one file
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_clashes(inputs: Iterable[Named], outputs: Iterable[Named]) -> None:
    """Raise a one-line :class:`UsageError` when an output is an input, lies inside an input's directory, holds
    an input, or is (or holds, or lies inside) another output. Nothing has been opened for writing yet."""
    ins = [(flag, path, _where(path)) for flag, spec in inputs if (path := spec_path(spec)) is not None]
    outs = [(flag, path, _where(path)) for flag, spec in outputs if (path := spec_path(spec)) is not None]
    hint = "give each output a path of its own, outside what the run reads"
    for o_flag, o_path, o_real in outs:
        for i_flag, i_path, i_real in ins:
            if _same(o_path, i_path, o_real, i_real):
                raise UsageError(f"{o_flag} {o_path} is the {i_flag} input: writing it would destroy the input "
                                 "before it is read", hint=hint)
            if _inside(o_real, i_real):
                raise UsageError(f"{o_flag} {o_path} lies inside the {i_flag} directory {i_path}: a later run "
                                 "would read it as input", hint=hint)
            if _inside(i_real, o_real):
                raise UsageError(f"the {i_flag} input {i_path} lies inside the {o_flag} directory {o_path}: the "
                                 "run's output would mix with it", hint=hint)
    for n, (a_flag, a_path, a_real) in enumerate(outs):
        for b_flag, b_path, b_real in outs[n + 1:]:
            if _same(a_path, b_path, a_real, b_real):
                raise UsageError(f"{a_flag} and {b_flag} are one path, {a_path}: one output would overwrite the "
                                 "other", hint=hint)
            if _inside(a_real, b_real) or _inside(b_real, a_real):
                inner, outer = ((a_flag, a_path), (b_flag, b_path)) if _inside(a_real, b_real) else \
                    ((b_flag, b_path), (a_flag, a_path))
                raise UsageError(f"{inner[0]} {inner[1]} lies inside the {outer[0]} directory {outer[1]}: one "
                                 "output would be mixed into the other", hint=hint)


def source_paths(sources) -> list[Named]:
    """The local paths the runner-neutral sources read (``--stream`` and ``--also-stream`` on the command line)."""
    named = []
    for n, source in enumerate(sources):
        spec = getattr(source, "path", None) or getattr(source, "spec", None)
        if isinstance(spec, str):
            named.append(("--stream" if n == 0 else "--also-stream", spec))
    return named


def config_outputs(config) -> list[Named]:
    """The outputs a run configuration names, by the flag that sets each."""
    named = [("--out", config.out), ("--rejected-out", config.rejected_out), ("--checkpoint", config.checkpoint),
             ("--reports-out", getattr(config, "reports_out", None))]
    metrics = getattr(config.options, "metrics_out", None)
    if metrics:
        named.append(("--metrics-out", metrics))
    return [(flag, path) for flag, path in named if path]
