"""Property-based fuzzing of every parser and loader (hypothesis, fixed seed): a value or one located error of the
project's own, never another exception or a hang. experiments/README.md, "What each benchmark measures"."""
from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path

from experiments.common import DATA, EXAMPLES, arguments, write_json
from srtopo.concepts import RDF_TYPE
from srtopo.errors import SrtopoError

CORPUS = Path(DATA, "idlvsr")
#: seconds an input may take at most (the slowest honest input here, a mutated TBox, takes ~50 ms)
TIME_BOUND = 10.0


class Hang(Exception):
    """An input took longer than the time bound."""


@contextmanager
def time_bound(seconds: float):
    if not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(_signum, _frame):
        raise Hang(f"no result within {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- the grammar's pieces (fuzz-pieces.json: valid and broken pieces of each format, and text written to be run) ---

with open(Path(__file__).with_name("fuzz-pieces.json"), encoding="utf-8") as _handle:
    PIECES = {k: [x.replace("<RDF_TYPE>", f"<{RDF_TYPE}>") for x in v] for k, v in json.load(_handle).items()}
(IRIS, LITERALS, TIMES, SEPS, ENDINGS, INJECTION, LOG_TIMES, ATOMS, ATOM_SEPS, PROGRAM_TOKENS, SL_TOKENS, SL_LINES,
 TTL_PIECES) = (PIECES[k] for k in ("iris", "literals", "times", "seps", "endings", "injection", "log_times", "atoms",
                                    "atom_seps", "program_tokens", "sl_tokens", "sl_lines", "ttl_pieces"))


def _text(st, pieces, max_size=16):
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=6)), max_size=max_size).map("".join)


def _mutated(st, texts):
    """A real file with a few edits: a span deleted, duplicated or replaced by arbitrary text."""
    def edit(args):
        text, edits = args
        for kind, at, length, inserted in edits:
            i = at % (len(text) + 1)
            if kind == 0:
                text = text[:i] + text[i + length:]
            elif kind == 1:
                text = text[:i] + text[i:i + length] + text[i:]
            else:
                text = text[:i] + inserted + text[i + length:]
        return text
    edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1 << 16), st.integers(0, 40), st.text(max_size=8)),
                     min_size=1, max_size=4)
    return st.tuples(st.sampled_from(texts), edits).map(edit)


def _tnt_line(st):
    term = st.sampled_from(IRIS)
    valid = st.builds(lambda t, s, p, o, e: f"{t}\t{s} {p} {o}{e}", st.sampled_from(TIMES[:3]), term, term,
                      st.one_of(term, st.sampled_from(LITERALS)), st.sampled_from(ENDINGS[:2]))
    pieces = st.builds(lambda *parts: "".join(parts), st.sampled_from(TIMES), st.sampled_from(SEPS), term,
                       st.sampled_from(SEPS), term, st.sampled_from(SEPS),
                       st.one_of(term, st.sampled_from(LITERALS + INJECTION)), st.sampled_from(ENDINGS))
    long = st.integers(1, 3).map(lambda k: "5\t<http://e.org/" + "a" * (70_000 * k))
    return st.one_of(valid, pieces, st.text(max_size=60), long, st.sampled_from(["# watermark 3", "#", ""]))


def _log_line(st):
    atoms = st.lists(st.one_of(st.sampled_from(ATOMS + INJECTION), st.text(max_size=8)), max_size=5)
    line = st.builds(lambda t, sep, a, s2, end: t + sep + s2.join(a) + end, st.sampled_from(LOG_TIMES),
                     st.sampled_from([" ", "\t", "", "  "]), atoms, st.sampled_from(ATOM_SEPS),
                     st.sampled_from(["", ";", " @end;", "\r", " %c"]))
    long = st.just("1 p(" + "1," * 100_000 + "1)")
    return st.one_of(line, st.text(max_size=60), long)


def _json_line(st):
    scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=10))
    value = st.recursive(scalar, lambda c: st.one_of(st.lists(c, max_size=4),
                                                     st.dictionaries(st.text(max_size=5), c, max_size=4)),
                         max_leaves=12)
    record = st.fixed_dictionaries({"time": st.one_of(st.sampled_from(LOG_TIMES), st.integers(), scalar),
                                    "atoms": st.one_of(st.lists(st.sampled_from(ATOMS + INJECTION), max_size=4), value)},
                                   optional={"end": st.booleans(), "extra": value})
    return st.one_of(record.map(json.dumps), value.map(json.dumps), st.text(max_size=40))


def _corpus(pattern: str, limit: int = 40) -> list[str]:
    if not CORPUS.is_dir():
        return []
    found = sorted(CORPUS.rglob(pattern))[:limit]
    return [p.read_text(encoding="utf-8", errors="replace") for p in found]


# --- the targets ---------------------------------------------------------------------------------------------

def _account(lines: list, numbers_seen: set, rejected: list, is_skipped, counts: Counter) -> None:
    """Every line that is not skipped gave records or exactly one rejected record; both counted."""
    rejected_numbers = [r.line for r in rejected]
    assert len(rejected_numbers) == len(set(rejected_numbers)), "a line rejected twice"
    for number, line in enumerate(lines, 1):
        if is_skipped(line):
            continue
        got = (number in numbers_seen) + (number in rejected_numbers)
        assert got == 1, f"line {number} {line[:80]!r}: {got} outcomes"
    counts["records"] += len(numbers_seen)
    counts["rejected"] += len(rejected)


def check_tnt(lines: list[str], counts: Counter) -> None:
    from srtopo.io.tnt import WS_CHARS, tnt_records
    from srtopo.ir.records import RejectedRecord
    seen, rejected = set(), []
    for record in tnt_records(lines, "fuzz.tnt"):
        if isinstance(record, RejectedRecord):
            rejected.append(record)
            assert record.reason and record.source == "fuzz.tnt"
        else:
            seen.add(record[1])
    _account(lines, seen, rejected, lambda x: not x.rstrip("\r\n").strip(WS_CHARS)
             or x.rstrip("\r\n").strip(WS_CHARS).startswith("#"), counts)


def check_tnt_bytes(raw: list[bytes], counts: Counter) -> None:
    from srtopo.io.tnt import decoded_lines
    check_tnt(list(decoded_lines(raw)), counts)


def check_records(fmt: str, lines: list[str], counts: Counter) -> None:
    """An I-DLV-sr log (``fmt``: detect) or JSON lines (jsonl)."""
    from clingo import Symbol

    from srtopo.rules.log import read_records
    rejected: list = []
    seen = set()
    for record in read_records(lines, fmt=fmt, rejected=rejected, source="fuzz.log"):
        assert all(isinstance(a, Symbol) for a in record.atoms)
        seen.add(record.line)
    _account(lines, seen, rejected, lambda x: not x.rstrip("\r\n").strip(), counts)


def _value_or_located(load, file: str, counts: Counter) -> None:
    """``load()`` gives a value, or one of the project's errors that names ``file`` (as its ``file``, or in the
    message: "unsupported: X at file:line")."""
    try:
        load()
        counts["values"] += 1
    except SrtopoError as error:
        named = error.file is not None and os.path.basename(str(error.file)) == os.path.basename(file)
        assert named or f"{os.path.basename(file)}:" in str(error), f"error without its file: {error!r}"
        counts["errors"] += 1


@cache
def _shortest_paths():
    from srtopo.streamlog.program import load_program
    return load_program(str(EXAMPLES / "shortest-paths.sl"))


def check_idlvsr_program(text: str, counts: Counter) -> None:
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_program
    _value_or_located(lambda: compile_program(parse_program(text, "fuzz.idlvsr")), "fuzz.idlvsr", counts)


def check_streamlog_program(text: str, counts: Counter) -> None:
    from srtopo.streamlog.program import parse_program
    _value_or_located(lambda: parse_program(text, "fuzz.sl").check(), "fuzz.sl", counts)


def check_streamlog_stream(lines: list[str], counts: Counter) -> None:
    from srtopo.streamlog.streams import Streamlog
    streamlog = Streamlog(_shortest_paths())
    for number, line in enumerate(lines, 1):
        streamlog.push(0, line, number)
    streamlog.finish()
    numbers = [r.line for r in streamlog.rejected]
    assert len(numbers) == len(set(numbers)) and set(numbers) <= set(range(1, len(lines) + 1))
    counts["rejected"] += len(numbers)
    counts["records"] += len(lines) - len(numbers)


def check_tbox(suffix: str, text: str, counts: Counter) -> None:
    """A TBox in Turtle (``suffix`` .ttl) or RDF/XML (.owl)."""
    from srtopo.consistency.owl import load_tbox
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "fuzz" + suffix)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        _value_or_located(lambda: load_tbox(path), path, counts)


def strategies() -> dict:
    """target -> (hypothesis strategy, check)."""
    import hypothesis.strategies as st
    programs = [(EXAMPLES / "queens.idlvsr").read_text(encoding="utf-8")] + _corpus("*.idlvsr")
    tex = (EXAMPLES / "tex.ttl").read_text(encoding="utf-8")
    rdfxml = (Path(__file__).parent / "tboxes" / "fuzz-seed.owl").read_text(encoding="utf-8")
    sl = (EXAMPLES / "shortest-paths.sl").read_text(encoding="utf-8")
    lines = lambda line: st.lists(line, min_size=1, max_size=6)    # noqa: E731
    return {
        "tnt": (lines(_tnt_line(st)), check_tnt),
        "tnt-bytes": (st.lists(st.one_of(st.binary(max_size=60), _tnt_line(st).map(lambda x: x.encode("utf-8")),
                                         st.binary(max_size=8).map(lambda b: b"5\t<http://e.org/" + b + b"> <p> <o> .")),
                               min_size=1, max_size=6).map(lambda ls: [b"\xef\xbb\xbf" + ls[0]] + ls[1:]
                                                           if ls and ls[0][:1] == b"5" else ls), check_tnt_bytes),
        "log": (lines(_log_line(st)), partial(check_records, "detect")),
        "jsonl": (lines(_json_line(st)), partial(check_records, "jsonl")),
        "idlvsr-program": (st.one_of(_text(st, PROGRAM_TOKENS, 24), _mutated(st, programs)), check_idlvsr_program),
        "streamlog-program": (st.one_of(_text(st, SL_TOKENS, 24), _mutated(st, [sl])), check_streamlog_program),
        "streamlog-stream": (lines(st.one_of(st.sampled_from(SL_LINES), st.text(max_size=30))), check_streamlog_stream),
        "turtle": (st.one_of(_text(st, TTL_PIECES, 20), _mutated(st, [tex])), partial(check_tbox, ".ttl")),
        "rdfxml": (_mutated(st, [rdfxml]), partial(check_tbox, ".owl")),
    }


TARGETS = ("tnt", "tnt-bytes", "log", "jsonl", "idlvsr-program", "streamlog-program", "streamlog-stream", "turtle",
           "rdfxml")


def fuzz(target: str, examples: int, seed: int = 0, raise_failure: bool = True) -> dict:
    """Run one target for ``examples`` examples; the counts of what the inputs gave, and the failure if any
    (hypothesis's shrunk example; raised when ``raise_failure``)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fixed_seed
    strategy, check = strategies()[target]
    counts: Counter = Counter()

    @fixed_seed(seed)
    @settings(max_examples=examples, database=None, deadline=None, derandomize=False, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(value):
        counts["examples"] += 1
        with time_bound(TIME_BOUND):
            check(value, counts)

    started = time.perf_counter()
    failure = None
    try:
        prop()
    except Exception as error:      # noqa: BLE001 - a found failure is what a fuzz run reports
        if raise_failure:
            raise
        failure = f"{type(error).__name__}: {str(error)[:500]}"
    return {"target": target, "examples": counts.pop("examples", 0), "seconds": round(time.perf_counter() - started, 1),
            "failure": failure, **dict(counts)}


def main(argv=None) -> int:
    parser = arguments(__doc__, examples=10_000, seed=0, out="fuzz.json")
    parser.add_argument("targets", nargs="*", default=list(TARGETS), help="what to fuzz (default: all)")
    args = parser.parse_args(argv)
    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r} (use {', '.join(TARGETS)})")
    rows = []
    for target in args.targets:
        rows.append(fuzz(target, args.examples, args.seed, raise_failure=False))
        print(json.dumps(rows[-1]), file=sys.stderr)
    write_json(args.out, {"examples": args.examples, "seed": args.seed, "rows": rows})
    return 1 if any(r["failure"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
