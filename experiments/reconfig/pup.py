"""Partner Units Problem streams (PUP in "Managing caching strategies for stream reasoning with reinforcement
learning", section 4.1) on the *double* instances; experiments/README.md, "The reconfiguration streams", says
how an instance changes and why every one stays solvable."""
from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from experiments.reconfig.zipf import Zipf

UNIT_CAP = 2
PARTNER_CAP = 2

#: the project's PUP encoding (I-DLV-sr syntax; the instance arrives as background facts zone2sensor(Z,S) and
#: unit(U), what is switched off as stream atoms)
ENCODING = """\
% Partner Units: every active zone and sensor on one unit, two of each per unit, two partners per unit.
zone(Z) :- zone2sensor(Z,S), not zone_off(Z).
sensor(S) :- zone2sensor(Z,S), not sensor_off(S).
1 { zone2unit(Z,U) : unit(U) } 1 :- zone(Z).
1 { sensor2unit(S,U) : unit(U) } 1 :- sensor(S).
:- unit(U), #count { Z : zone2unit(Z,U) } > 2.
:- unit(U), #count { S : sensor2unit(S,U) } > 2.
partner(U1,U2) :- zone2sensor(Z,S), zone2unit(Z,U1), sensor2unit(S,U2), U1 != U2.
partner(U1,U2) :- partner(U2,U1).
:- unit(U1), #count { U2 : partner(U1,U2) } > 2.
#show zone2unit/2.
#show sensor2unit/2.
"""

SCHEMA = ("m1", "m3", "m2", "m3")


@dataclass(frozen=True)
class Instance:
    zones: tuple
    sensors: tuple
    relation: frozenset         # (zone, sensor)
    units: tuple

    def facts(self) -> str:
        lines = [f"zone2sensor({z},{s})." for z, s in sorted(self.relation)]
        lines += [f"unit({u})." for u in self.units]
        return "\n".join(lines) + "\n"


def double_instance(n: int) -> Instance:
    """The double instance of row length n: rooms (r, i), r in {0, 1}, i in 1..n, zone r * n + i."""
    if n < 2:
        raise ValueError("a double instance needs rows of at least 2 rooms")
    doors = [((r, i), (r, i + 1)) for r in (0, 1) for i in range(1, n)] + [((0, i), (1, i)) for i in range(1, n + 1)]
    relation = set()
    for s, (a, b) in enumerate(doors, start=1):
        for r, i in (a, b):
            relation.add((r * n + i, s))
    zones = tuple(range(1, 2 * n + 1))
    sensors = tuple(range(1, len(doors) + 1))
    units = tuple(range(1, -(-max(len(zones), len(sensors)) // UNIT_CAP) + 1))
    return Instance(zones, sensors, frozenset(relation), units)


def pup_stream(n: int, steps: int = 256, seed: int = 1, alpha: float = 2.2, restore: float = 0.8) -> list[tuple]:
    """(zones off, sensors off) at each of ``steps`` time points: the original instance first, then the schema."""
    instance = double_instance(n)
    rng = random.Random(seed)
    zones, sensors = Zipf(instance.zones, alpha, rng), Zipf(instance.sensors, alpha, rng)
    off_z: frozenset = frozenset()
    off_s: frozenset = frozenset()
    out = [(off_z, off_s)]
    for step in range(1, steps):
        mutation = SCHEMA[(step - 1) % len(SCHEMA)]
        if mutation == "m1":
            z = zones.pick(rng, allowed=lambda z: z not in off_z)
            off_z = off_z | {z} if z is not None else off_z
        elif mutation == "m2":
            s = sensors.pick(rng, allowed=lambda s: s not in off_s)
            off_s = off_s | {s} if s is not None else off_s
        elif rng.random() < restore:
            off_z, off_s = frozenset(), frozenset()
        out.append((off_z, off_s))
    return out


def log_lines(stream: list[tuple]) -> list[str]:
    """The stream as I-DLV-sr log lines, one per time point (numeric timestamps 0, 1, ...)."""
    lines = []
    for t, (off_z, off_s) in enumerate(stream):
        atoms = [f"zone_off({z})" for z in sorted(off_z)] + [f"sensor_off({s})" for s in sorted(off_s)]
        lines.append(" ".join([str(t), "; ".join(atoms)]).rstrip())
    return lines


def program(n: int) -> str:
    """The encoding with the double instance of row length n as background facts."""
    return double_instance(n).facts() + ENCODING


def check(instance: Instance, off: tuple, zone_units: Iterable, sensor_units: Iterable) -> list[str]:
    """What is wrong with an answer ((zone, unit) and (sensor, unit) pairs) for the instance with ``off`` =
    (zones off, sensors off) switched off; [] when it is a valid configuration."""
    off_z, off_s = off
    zones = [z for z in instance.zones if z not in off_z]
    sensors = [s for s in instance.sensors if s not in off_s]
    problems = []
    where: dict = {}
    for kind, items, pairs in (("zone", zones, zone_units), ("sensor", sensors, sensor_units)):
        assigned: dict = {}
        for item, unit in pairs:
            assigned.setdefault(item, set()).add(unit)
            if unit not in instance.units:
                problems.append(f"{kind} {item} on unknown unit {unit}")
        for item in items:
            units = assigned.get(item, set())
            if len(units) != 1:
                problems.append(f"{kind} {item} on {len(units)} units")
        extra = sorted(set(assigned) - set(items))
        if extra:
            problems.append(f"{kind}s not in the instance assigned: {extra}")
        per_unit: dict = {}
        for item, units in assigned.items():
            for unit in units:
                per_unit.setdefault(unit, []).append(item)
                where[(kind, item)] = unit
        problems += [f"unit {u} has {len(v)} {kind}s" for u, v in sorted(per_unit.items()) if len(v) > UNIT_CAP]
    partners: dict = {}
    for z, s in instance.relation:
        if z in off_z or s in off_s:
            continue
        uz, us = where.get(("zone", z)), where.get(("sensor", s))
        if uz is not None and us is not None and uz != us:
            partners.setdefault(uz, set()).add(us)
            partners.setdefault(us, set()).add(uz)
    problems += [f"unit {u} has {len(v)} partner units" for u, v in sorted(partners.items()) if len(v) > PARTNER_CAP]
    return problems
