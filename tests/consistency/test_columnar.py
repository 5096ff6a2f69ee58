"""The local runner's columnar plan against its record-by-record reference plan (``indexed``), run for run: the
same report lines, the same rejected records (source, line, text, reason), the same counters (per run and per
stage), on files that hold everything a stream may: out-of-order tuples within and beyond the lateness,
punctuation, several sources, role assertions (two tuples, one rejected record per line), owl:Nothing, hostile and
malformed lines, byte-order marks, CRLF, lines that are not UTF-8, times at the ends of the 64-bit range, with
bounded and unbounded windows and lateness, in micro-batches of one file or several."""
from __future__ import annotations

import os
import random

import pytest

from experiments.hostile import TNT, hostile_lines
from srtopo.concepts import RDF_TYPE, is_exists
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.io.sources import Lines, SocketLines, TntFiles, Tuples
from srtopo.io.tnt import format_tnt
from srtopo.runners import LocalOptions, LocalRunner, RunConfig
from tests.randomgen import random_stream, random_tbox

NOTHING = "http://www.w3.org/2002/07/owl#Nothing"
COUNTERS = ("records", "malformed", "late", "irrelevant", "outputs", "batches")
STAGE_COUNTERS = ("records_in", "cached_in", "forwarded", "inferred", "ops_evaluated", "outputs")


def _line(t: int, s: str, c: str, rng: random.Random) -> str:
    """A statement giving (s, c, t): rdf:type, or a role assertion for an exists concept (its other individual
    gets the inverse's tuple)."""
    if is_exists(c):
        role = c.split(":", 1)[1]
        other = f"{s}-o{rng.randrange(3)}"
        inverse = c.startswith("exists-:")
        return format_tnt(t, other if inverse else s, role, s if inverse else other)
    return format_tnt(t, s, RDF_TYPE, c)


def _case(seed: int, edge: bool = False):
    """A random TBox's topology (NTM or a group per stage) and two streams of lines for it: out of order (mostly
    by a time unit or two, now and then by more), with punctuation, owl:Nothing and role assertions."""
    rng = random.Random(seed)
    tbox = random_tbox(rng, n_roles=rng.randint(1, 3))
    a = analyse(tbox)
    topology = compile_ltm(a, [1] * len(a.groups) or [0]) if seed % 2 else compile_ntm(a)
    base = -(2 ** 63) if edge else 0
    sources = []
    for _k in range(2):
        stream = random_stream(rng, tbox, n=rng.randint(300, 500), n_subjects=rng.randint(2, 8), horizon=120)
        stream.sort(key=lambda x: x[2] + rng.choice([0] * 20 + [1, 2, 4, 9]))     # some arrive late
        lines = []
        for s, c, t in stream:
            if rng.random() < 0.01:
                lines.append(f"# watermark {base + t - rng.randint(2, 9)}")
            if rng.random() < 0.02:
                lines.append(format_tnt(base + t, s, RDF_TYPE, NOTHING))
            lines.append(_line(base + t, s, c, rng))
            if edge and rng.random() < 0.05:
                lines.append(_line(2 ** 63 - 1 - rng.randint(0, 3), s, c, rng))
        sources.append(lines)
    return topology, sources


def _write(folder, lines: list[str], files: int, rng: random.Random, raw_extras: bool = True) -> str:
    """``lines`` cut into ``files`` files, with hostile lines, blank lines, comments, a byte-order mark, CRLF
    and bytes that are not UTF-8 mixed in."""
    os.makedirs(folder, exist_ok=True)
    size = -(-len(lines) // files)
    hostile = [line for _kind, line in hostile_lines(TNT, 40, rng.randrange(100))]
    for f in range(files):
        chunk = [x.encode("utf-8") for x in lines[f * size:(f + 1) * size]]
        if raw_extras:
            for _ in range(max(1, len(chunk) // 50)):
                chunk.insert(rng.randint(1, max(1, len(chunk))), rng.choice(hostile + [b"", b"# note"]))
        newline = b"\r\n" if f % 3 == 1 else b"\n"
        data = (b"\xef\xbb\xbf" if f % 4 == 2 else b"") + newline.join(chunk) + (newline if f % 2 else b"")
        path = os.path.join(folder, f"part-{f:04d}.tnt")
        with open(path, "wb") as handle:
            handle.write(data)
        os.utime(path, (1_600_000_000 + f, 1_600_000_000 + f))
    return str(folder)


def _outcome(result):
    c = result.counters
    return {"reports": sorted(r.to_json() for r in result.reports),
            "rejected": sorted((r.source, r.line if r.line is not None else -1, r.text, r.reason)
                               for r in result.rejected),
            "counters": tuple(getattr(c, k) for k in COUNTERS),
            "stages": [tuple(getattr(s, k) for k in STAGE_COUNTERS) for s in c.stages]}


def _both(topology, sources, **config):
    """Each plan's outcome; the JSON lines it writes (``--out``, ``--rejected-out``: the columnar plan builds its
    report lines column by column) included."""
    import tempfile
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for plan in ("indexed", "columnar"):
            files = {k: os.path.join(folder, f"{plan}-{k}.jsonl") for k in ("out", "rejected_out")}
            result = LocalRunner().run(topology, sources, RunConfig(options=LocalOptions(physical_plan=plan),
                                                                    **files, **config))
            assert plan in result.physical_plan or plan == "indexed"
            outcome = _outcome(result)
            for k, path in files.items():
                with open(path, encoding="utf-8") as handle:
                    outcome[k] = sorted(handle)
            assert outcome["out"] == sorted(line + "\n" for line in outcome["reports"])
            out.append(outcome)
    return out


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
@pytest.mark.parametrize("lateness", [2, 0, None], ids=["lateness2", "lateness0", "unbounded-lateness"])
@pytest.mark.parametrize("window", [4, None], ids=["w4", "unbounded"])
def test_the_columnar_plan_gives_what_the_reference_gives(tmp_path, window, lateness, seed):
    topology, streams = _case(seed)
    rng = random.Random(seed)
    sources = [TntFiles(_write(tmp_path / f"s{k}", lines, 6, rng), files_per_batch=2) for k, lines in
               enumerate(streams)]
    reference, columnar = _both(topology, sources, window=window, lateness=lateness)
    assert reference["reports"] and reference["rejected"]
    assert columnar == reference


def test_times_at_the_ends_of_the_64_bit_range(tmp_path):
    topology, streams = _case(12, edge=True)
    rng = random.Random(6)
    sources = [TntFiles(_write(tmp_path / f"s{k}", lines, 3, rng, raw_extras=False), files_per_batch=1)
               for k, lines in enumerate(streams)]
    for window in (5, None):
        reference, columnar = _both(topology, sources, window=window, lateness=3)
        assert reference["reports"] and columnar == reference


def test_records_in_memory_and_one_batch_of_every_file(tmp_path):
    """Lines and tuples held in memory (cut into batches), and a directory read as one batch."""
    topology, streams = _case(13)
    lines = Lines(tuple(streams[0]), batches=3)
    tuples = Tuples(tuple((s, c, t) for s, c, t in random_stream(random.Random(2), random_tbox(random.Random(3)),
                                                                 n=50)), batches=2)
    folder = TntFiles(_write(tmp_path / "one", streams[1], 4, random.Random(7)))
    for sources in ([lines], [lines, folder], [tuples], [folder]):
        reference, columnar = _both(topology if sources != [tuples] else compile_ntm(analyse(
            random_tbox(random.Random(3)))), sources, window=3, lateness=2)
        assert columnar == reference


def test_a_socket_takes_the_reference_plan_and_says_so():
    topology = compile_ntm(analyse(random_tbox(random.Random(1))))
    runner = LocalRunner()
    config = RunConfig(options=LocalOptions(physical_plan="columnar"))
    assert "columnar plan" in runner.describe(topology, config, [Lines(("1\t<a> <b> <c> .",))])
    said = runner.describe(topology, config, [SocketLines("127.0.0.1", 9)])
    assert "indexed plan" in said and "socket" in said


def test_a_file_uri_names_its_file_as_it_is(tmp_path):
    """Spark lists a file as ``file:`` and its path as it is (Hadoop's form, no percent-encoding): the columnar
    reader opens that file whatever characters its name has (a ``?`` or ``#`` is no query or fragment, ``%41``
    no escape), as the Spark runner's own file helpers do."""
    from srtopo.consistency.partitioned import _read_bytes
    from srtopo.runners.spark.fs import local_path
    for name in ("s[1] {a,b}*?.tnt", "x#y.tnt", "p%41q.tnt"):
        path = tmp_path / name
        path.write_bytes(name.encode())
        for uri in (f"file:{path}", f"file://{path}"):
            assert _read_bytes(uri) == name.encode(), uri
            assert local_path(uri) == str(path), uri


def test_a_files_rows_travel_packed_one_value_per_partition(tmp_path):
    """What a reading task hands to Spark's shuffle: per partition that has rows, one value holding exactly that
    partition's rows (tuples, subjects, the file's summary, malformed lines), as read."""
    import pyarrow as pa

    from srtopo.consistency.partitioned import FileToRead, packed, read_files, unpacked, vocabulary_of
    topology, (lines, _) = _case(5)
    path = tmp_path / "s.tnt"
    path.write_text("\n".join(lines[:300] + ["not a statement"]) + "\n", encoding="utf-8")
    routes = [17, 3, 40]
    rows = read_files([FileToRead(str(path), 0, 0)], vocabulary_of(topology), 0, routes)
    batches = list(packed(rows, routes))
    assert len(batches) == 1 and len(list(packed(rows, routes, most_bytes=0))) == len(set(routes))
    batch = batches[0]
    assert batch.num_rows == len(set(rows.column("route").to_pylist()))
    for value, blob in zip(batch.column("route").to_pylist(), batch.column("rows").to_pylist()):
        expected = rows.filter(pa.compute.equal(rows.column("route"), value))
        got = unpacked([pa.RecordBatch.from_arrays([pa.array([value]), pa.array([blob], pa.binary())],
                                                   names=["route", "rows"])])
        assert got.to_pylist() == pa.Table.from_batches([expected]).to_pylist()
    assert sum(unpacked([batch]).column("kind").to_pylist().count(k) for k in (0, 3)) == \
        sum(rows.column("kind").to_pylist().count(k) for k in (0, 3))
    assert 3 in rows.column("kind").to_pylist() and 0 in rows.column("kind").to_pylist()
