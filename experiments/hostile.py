"""Hostile lines for a running stream: what a careless or malicious feed sends, as bytes, each to be rejected as one
record without changing what the good lines give. experiments/README.md, "What each benchmark measures"."""
from __future__ import annotations

import json
import random
import string
from pathlib import Path

from experiments.common import EXAMPLES, ICLP, ICLP_INPUTS
from srtopo.concepts import RDF_TYPE
from srtopo.consistency.choose import topology_from_tbox
from srtopo.consistency.owl import load_tbox
from srtopo.io.sources import AtomLog, FactLines, TntFiles
from srtopo.io.tnt import format_tnt
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_file
from srtopo.runners import get_runner
from srtopo.streamlog.compile import topology_from_file
from srtopo.testing import run_topology

with open(Path(__file__).with_name("hostile-lines.json"), encoding="utf-8") as _handle:
    #: per kind of stream, [kind, line, then optionally a piece and how often it is repeated at the line's end]: the
    #: line's text is its bytes one for one (latin-1: \u00ff is the byte 0xff), ``$s`` a valid timestamp of the
    #: stream, ``$far`` one mistyped far ahead; no line: garbage generated per line (seeded)
    LINES = json.load(_handle)


def _kinds(stream: str, **stamps) -> list:
    """(kind, line) of one kind of stream, its timestamps filled in."""
    return [(kind, None if text is None else
             (string.Template(text).substitute(stamps) + (repeat[0] * repeat[1] if repeat else "")).encode("latin-1"))
            for kind, text, *repeat in LINES[stream]]


#: (kind, line) for timestamped N-Triples streams
TNT = _kinds("tnt")


def log_kinds(stamp: str, foreign: list[str]) -> list:
    """(kind, line) for I-DLV-sr logs whose timestamps look like ``stamp`` (a valid one of the stream), with
    ``foreign``: timestamps of another kind, which cannot be compared with the stream's."""
    return _kinds("log", s=stamp, far=_far_ahead(stamp)) + [("timestamp of another kind", f.encode("ascii") + b" p(1)")
                                                            for f in foreign]


def fact_kinds(stamp: int) -> list:
    """(kind, line) for Streamlog fact lines of ``reading(T,S,V)`` (examples/sensors.sl) whose timestamps are at
    least ``stamp``: each is rejected wherever it stands after a stream's first line. A timestamp mistyped far
    ahead is not among them: it is a well-formed fact (see ``far_ahead_case``)."""
    return _kinds("facts", s=str(stamp))


def _far_ahead(stamp: str) -> str:
    """``stamp`` with a mistyped digit that puts it years ahead (2031 for 2021; a number 10^9 larger)."""
    if stamp[:4].isdigit() and stamp[4:5] == "-":
        return str(int(stamp[:4]) + 10) + stamp[4:]
    return str(int(stamp) + 10 ** 9)


def _garbage(rng: random.Random) -> bytes:
    """Bytes that are no statement: never a line break, never a leading '#' (a comment) or digit."""
    body = bytes(rng.choice([b for b in range(256) if b not in (10, 13)]) for _ in range(rng.randint(5, 80)))
    return b"\x7f" + body


def hostile_lines(kinds: list, count: int, seed: int) -> list[tuple[str, bytes]]:
    """``count`` hostile lines, every kind in turn."""
    rng = random.Random(seed)
    return [(kind, _garbage(rng) if line is None else line) for kind, line in (kinds[i % len(kinds)]
                                                                               for i in range(count))]


def mixed(clean: list[bytes], hostile: list[tuple[str, bytes]], seed: int) -> tuple[list[bytes], dict]:
    """The clean lines with the hostile ones put in at random places after the first line; and
    {line number (1-based) in the result: kind} for the hostile ones."""
    rng = random.Random(seed)
    places = sorted(rng.randint(1, len(clean)) for _ in hostile)
    out = list(clean)
    for h in reversed(range(len(hostile))):     # each before the clean line at its place, in their order
        out.insert(places[h], hostile[h][1])
    return out, {place + h + 1: kind for h, (place, (kind, _line)) in enumerate(zip(places, hostile))}


# --- the checks (the test suite and the reliability command run them) --------------------------------------

SENSORS = EXAMPLES / "sensors.sl"


def clean_tnt(n: int, seed: int) -> list[bytes]:
    """``n`` statements over T_ex (examples/tex.ttl): class assertions on 300 subjects, 15 per time point."""
    rng = random.Random(seed)
    classes = sorted(load_tbox(str(EXAMPLES / "tex.ttl")).concepts)
    return [format_tnt(i // 15, f"http://ex.org/data/s{rng.randrange(300)}", RDF_TYPE, rng.choice(classes)).encode()
            for i in range(n)]


def _runs(engine: str, options, topology, folder: Path, streams: dict, name: str, source, **config) -> dict:
    """{stream: RunResult} of the topology over each stream (its lines written to ``folder/<stream>/<name>``, read
    through ``source(path)``)."""
    runner = get_runner(engine)
    runs = {}
    for key, lines in streams.items():
        (folder / key).mkdir(parents=True, exist_ok=True)
        (folder / key / name).write_bytes(b"\n".join(lines) + b"\n")
        runs[key] = run_topology(runner, topology, [source(folder / key / name)], options=options, **config)
    return runs


def _hostile(engine: str, options, folder: Path, topology, clean: list[bytes], kinds: list, count: int, seed: int,
             name: str, source, models: bool = True, **config) -> dict:
    """The clean stream and the same with ``count`` hostile lines of ``kinds``, on one runner (``_runs``): what
    each gave (its models, or its reports), and what the hostile lines gave."""
    hostile, where = mixed(clean, hostile_lines(kinds, count, seed), seed + 1)
    got = _runs(engine, options, topology, folder, {"clean": clean, "dirty": hostile}, name, source, **config)
    outputs = (lambda r: [m.to_dict() for m in r.models]) if models else (lambda r: r.keys)
    clean, dirty = got["clean"], got["dirty"]
    rejected_lines = sorted(r.line for r in dirty.rejected)
    return {"hostile": len(where), "kinds": len(set(where.values())), "what": "models" if models else "reports",
            "outputs": len(outputs(clean)), "identical": outputs(dirty) == outputs(clean) and bool(outputs(clean)),
            "clean_rejected": len(clean.rejected), "rejected": len(dirty.rejected),
            "rejected_at_the_hostile_lines": rejected_lines == sorted(where),
            "missed": sorted({where[n] for n in set(where) - set(rejected_lines)}),
            "reasons": sorted({(r.line, r.reason) for r in dirty.rejected}),
            # a rejected record's file by its name (runners name a file by path or by URI)
            "records": sorted((r.source.rstrip("/").rsplit("/", 1)[-1], r.line, r.reason) for r in dirty.rejected)}


def consistency_case(engine: str, options, folder: Path, statements: int = 4000, count: int = 400,
                     seed: int = 6) -> dict:
    """The clean stream and the same with ``count`` hostile lines, on one runner: what each gave."""
    return _hostile(engine, options, folder, topology_from_tbox(str(EXAMPLES / "tex.ttl")),
                    clean_tnt(statements, seed), TNT, count, seed, "part-0.tnt",
                    lambda path: TntFiles(str(path.parent)), models=False, window=5, lateness=1000)


def rules_case(engine: str, options, folder: Path, count: int = 120, seed: int = 8) -> dict | None:
    """A real I-DLV-sr log (ICLP 2021, Content Caching, 50 events per time point) clean and with ``count``
    hostile lines; None when the corpus is not there."""
    program, log = (Path(ICLP, path) for path in ICLP_INPUTS["cc-50"])
    if not log.exists():
        return None
    clean = log.read_bytes().splitlines()
    stamp = clean[0].split()[0].decode("ascii")
    return _hostile(engine, options, folder, compile_program(parse_file(program)), clean,
                    log_kinds(stamp, foreign=["17", stamp + "+01:00"]), count, seed, "cc.log",
                    # Spark reads a folder
                    lambda path: AtomLog(str(path.parent) if engine == "spark" else str(path)), lateness=0)


def clean_facts(n: int, seed: int) -> list[bytes]:
    """``n`` lines of ``reading(T,S,V)`` for examples/sensors.sl: 12 sensors whose readings drift upwards (so
    that records are frequent), timestamps that rise by 0 to 2, a ``#punctuation`` line now and then."""
    rng = random.Random(seed)
    out, t = [], 1
    while len(out) < n:
        t += rng.randint(0, 2)
        if rng.random() < 0.03:
            out.append(f"#punctuation {t}.".encode())
        out.append(f"reading({t},s{rng.randrange(12)},{t // 3 + rng.randint(0, 40)}).".encode())
    return out[:n]


def streamlog_case(engine: str, options, folder: Path, facts: int = 2000, count: int = 200, seed: int = 10) -> dict:
    """A Streamlog stream (examples/sensors.sl) clean and with ``count`` hostile lines, on one runner."""
    clean = clean_facts(facts, seed)
    stamp = int(clean[0][len(b"reading("):].split(b",")[0])
    return _hostile(engine, options, folder, topology_from_file(str(SENSORS)), clean, fact_kinds(stamp), count, seed,
                    "readings.txt", lambda path: FactLines(str(path)))


def far_ahead_case(engine: str, options, folder: Path, facts: int = 400, seed: int = 12) -> dict:
    """One fact whose timestamp is mistyped 10^9 ahead, in the middle of a clean Streamlog stream: whether it is
    rejected, and what it does to the good lines after it."""
    clean = clean_facts(facts, seed)
    at = len(clean) // 2
    stamp = int(clean[at][len(b"reading("):].split(b",")[0])
    far = f"reading({_far_ahead(str(stamp))},s1,3).".encode()
    got = _runs(engine, options, topology_from_file(str(SENSORS)), folder,
                {"clean": clean, "dirty": clean[:at] + [far] + clean[at:]}, "readings.txt", lambda p: FactLines(str(p)))
    rejected = got["dirty"].rejected
    return {"line": at + 1, "text": far.decode(), "rejected_itself": any(r.line == at + 1 for r in rejected),
            "good_lines_rejected": sum(r.line != at + 1 for r in rejected), "good_lines_after": len(clean) - at,
            "identical": [m.to_dict() for m in got["dirty"].models] == [m.to_dict() for m in got["clean"].models],
            "reasons": sorted({(r.line, r.reason) for r in rejected})}
