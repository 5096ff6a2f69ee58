"""``--fail-on-bad-input``: the first line that cannot be used stops the run, named by file and line; without
it the same line is one rejected record and the run goes on to the good lines after it."""
import pytest

from srtopo.cli import main

TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


@pytest.mark.parametrize("command, stream, extra, after", [
    ("reason", "1 b(1)\n2 caf\u00e9(1)\n3 b(3)\n", ["--program", "p.idlvsr"], '"a(3)"'),
    ("check", f"1\t<http://x/a> <{TYPE}> <http://example.org/tex#Student> .\nbad line\n"
              f"3\t<http://x/a> <{TYPE}> <http://example.org/tex#Faculty> .\n",
     ["--tbox", "TEX", "--window", "5"], '"time":3'),
    ("streamlog", "arc(1,a,b,3).\narc(x).\narc(2,b,c,1).\n", ["--program", "SL"], "minpath(2,a,c,4)"),
])
def test_strict_mode_stops_at_the_bad_line_and_the_default_goes_on(command, stream, extra, after, tmp_path, capsys):
    from experiments.hostile import EXAMPLES
    (tmp_path / "p.idlvsr").write_text("a(X) :- b(X).\n", encoding="utf-8")
    path = tmp_path / "stream.txt"
    path.write_text(stream, encoding="utf-8")
    args = [command, "--stream", str(path)] + [{"p.idlvsr": str(tmp_path / "p.idlvsr"), "TEX": str(EXAMPLES / "tex.ttl"),
                                                "SL": str(EXAMPLES / "shortest-paths.sl")}.get(a, a) for a in extra]
    assert main(args + ["--fail-on-bad-input"]) == 2
    out, err = capsys.readouterr()
    assert f"{path}:2: bad input:" in err and "--fail-on-bad-input" in err
    assert out == ""          # nothing of the run is written, not even what came before the bad line
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert after in out and "rejected" in err        # what the line after the bad one gives


@pytest.mark.parametrize("engine", ["local", "spark"])
@pytest.mark.parametrize("command", ["check", "reason", "streamlog"])
def test_strict_mode_writes_the_same_on_every_runner(request, engine, command, tmp_path, capsys):
    """A report (or model) due before the bad line and one after it: neither is written on either runner."""
    from experiments.hostile import EXAMPLES
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "p.idlvsr").write_text("a(X) :- b(X).\n", encoding="utf-8")
    stream = {"check": f"1\t<http://x/a> <{TYPE}> <http://example.org/tex#Student> .\n"
                       f"2\t<http://x/a> <{TYPE}> <http://example.org/tex#Faculty> .\nbad line\n"
                       f"3\t<http://x/b> <{TYPE}> <http://example.org/tex#Faculty> .\n",
              "reason": "1 b(1)\n2 b(2)\nbad\n3 b(3)\n",
              "streamlog": "arc(1,a,b,3).\narc(2,b,c,1).\narc(x).\narc(3,c,d,1).\n"}[command]
    extra = {"check": ["--tbox", str(EXAMPLES / "tex.ttl"), "--window", "5"],
             "reason": ["--program", str(tmp_path / "p.idlvsr")],
             "streamlog": ["--program", str(EXAMPLES / "shortest-paths.sl")]}[command]
    path = tmp_path / "stream.txt"
    path.write_text(stream, encoding="utf-8")
    argv = [command, "--stream", str(path), "--engine", engine, "--fail-on-bad-input"] + extra
    if engine == "spark":
        argv += ["--once", "--checkpoint", str(tmp_path / "ck")]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert f"{path}:3: bad input:" in err and out == ""
