"""The records that flow into and out of every runner, each with its one JSON form.

JSON lines are compact (no spaces) and UTF-8, the form Spark's JSON writer produces, so a report written by
the local runner and one written by Spark are the same line:

* report: ``{"subject":"http://ex/bob","time":17,"ni":["http://ex/Person","http://ex/Publication"],
  "evidence":[{"concept":"http://ex/Student","time":12},...],"stage":"B2","topology":"ltm-1,2"}``
* model (one per time point of a rule topology): ``{"time":3,"atoms":["c(5)"],"timestamp":"2021-05-17T13:38:30"}``
* rejected record: ``{"source":"in/part-0.tnt","line":4,"text":"not a line","reason":"does not start with ..."}``
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import NamedTuple


#: one encoder for every line (``json.dumps`` with options builds a new encoder per call)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def json_line(data) -> str:
    """A value as a line of the one JSON form: compact, UTF-8 text, keys in the order given."""
    return _ENCODE(data)


class StreamTuple(NamedTuple):
    """(subject, concept, time) plus the concept as asserted (kept for report evidence)."""
    subject: str
    concept: str
    time: int
    asserted: str


class Statement(NamedTuple):
    """An RDF statement at an event time: subject (an IRI without brackets, or ``_:b``), predicate IRI, and
    either an individual object (IRI or blank node) or a literal as written in N-Triples (quoted, with its
    language tag or datatype)."""
    time: int
    subject: str
    predicate: str
    object: str | None
    literal: str | None = None


@dataclass(frozen=True)
class RejectedRecord:
    """A stream record that could not be used: where it was, what it said, and why."""
    source: str
    line: int | None
    text: str
    reason: str

    def to_dict(self) -> dict:
        return {"source": self.source, "line": self.line, "text": self.text, "reason": self.reason}

    def to_json(self) -> str:
        return json_line(self.to_dict())

    def __str__(self) -> str:
        where = self.source if self.line is None else f"line {self.line} of {self.source}"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class Report:
    """A subject violates an NI at a time point (one report per (subject, time))."""
    subject: str
    time: int
    ni: tuple[str, str]
    evidence: tuple[tuple[str, int], ...]   # (asserted concept, time), sorted by (time, concept)
    stage: str = ""
    topology: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return (self.subject, self.time)

    def to_dict(self) -> dict:
        out = {"subject": self.subject, "time": self.time, "ni": list(self.ni),
               "evidence": [{"concept": c, "time": t} for c, t in self.evidence]}
        if self.stage:
            out["stage"] = self.stage
        if self.topology:
            out["topology"] = self.topology
        return out

    def to_json(self) -> str:
        return json_line(self.to_dict())

    @staticmethod
    def from_dict(data: dict) -> "Report":
        return Report(data["subject"], int(data["time"]), tuple(data["ni"]),
                      tuple((e["concept"], int(e["time"])) for e in data["evidence"]),
                      data.get("stage") or "", data.get("topology") or "")


def evidence_of(*items: tuple[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(set(items), key=lambda e: (e[1], e[0])))


#: a timestamp written as a JSON number: an integer without leading zeros (its text comes back from the number)
INTEGER_TEXT = re.compile(r"0|-?[1-9][0-9]*")


@dataclass(frozen=True)
class Model:
    """What a rule topology outputs at one time point: the atoms (``#show`` applied), sorted as text."""
    time: int
    atoms: tuple[str, ...]
    timestamp: str | None = None
    satisfiable: bool = True        # False: the program's choice part has no answer set at this time point

    @property
    def key(self) -> int:
        return self.time

    def to_dict(self) -> dict:
        out = {"time": self.time, "atoms": list(self.atoms)}
        if self.timestamp is not None:      # a log's integer timestamp is a number (``INTEGER_TEXT``)
            out["timestamp"] = int(self.timestamp) if INTEGER_TEXT.fullmatch(self.timestamp) else self.timestamp
        if not self.satisfiable:
            out["unsatisfiable"] = True
        return out

    def to_json(self) -> str:
        return json_line(self.to_dict())

    @staticmethod
    def from_dict(data: dict) -> "Model":
        stamp = data.get("timestamp")
        return Model(int(data["time"]), tuple(data["atoms"]), None if stamp is None else str(stamp),
                     not data.get("unsatisfiable"))
