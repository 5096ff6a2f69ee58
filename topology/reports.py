"""Report records (DESIGN section 3): one per (subject, time) at which an NI is violated."""
from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Report:
    subject: str
    time: int
    ni: tuple[str, str]
    evidence: tuple[tuple[str, int], ...]   # (asserted concept, time), sorted by (time, concept)
    stage: str = ""
    plan: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return (self.subject, self.time)

    def to_dict(self) -> dict:
        out = {"subject": self.subject, "time": self.time, "ni": list(self.ni),
               "evidence": [{"concept": c, "time": t} for c, t in self.evidence]}
        if self.stage:
            out["stage"] = self.stage
        if self.plan:
            out["plan"] = self.plan
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @staticmethod
    def from_dict(data: dict) -> "Report":
        return Report(data["subject"], int(data["time"]), tuple(data["ni"]),
                      tuple((e["concept"], int(e["time"])) for e in data["evidence"]),
                      data.get("stage", ""), data.get("plan", ""))


def evidence_of(*items: tuple[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(set(items), key=lambda e: (e[1], e[0])))
