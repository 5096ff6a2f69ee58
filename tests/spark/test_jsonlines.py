"""JSON lines joined as Arrow columns (io.jsonlines) read back as what they were built from."""
import json

from srtopo.io.jsonlines import quoted, state_lines, text

ODD = ["", "plain", 'a "quote"', "back\\slash", "tab\there", "new\nline", "\x00\x1f", "é中\U0001F600",
       "\u2028", "http://e.org/s?x=1&y=<2>"]


def test_strings_are_quoted_as_json_dumps_quotes_them():
    assert quoted(ODD).to_pylist() == [json.dumps(s, ensure_ascii=False) for s in ODD]
    assert [json.loads(x) for x in quoted(ODD).to_pylist()] == ODD


def test_state_lines_are_one_json_object_a_line():
    names = quoted(ODD)
    rows = [(i % len(ODD), 2 ** 40 - i, i % 3, i, -i) for i in range(25)]
    lines = state_lines(names, *[[r[k] for r in rows] for k in range(5)])
    data = bytes(text(lines)).decode("utf-8")
    assert data.endswith("\n") and data.count("\n") == len(rows)
    got = [json.loads(x) for x in data.split("\n")[:-1]]
    assert got == [{"subject": ODD[s], "time": t, "sk": k, "cid": c, "aid": a} for s, t, k, c, a in rows]
    assert bytes(text(lines.slice(3, 4))).decode("utf-8").split("\n")[:-1] == data.split("\n")[3:7]
