"""Shared fixtures: ONE SparkSession (local[2]) for the whole test session, and the runner variants that the
differential suite runs every case on (each registered runner with each physical plan; Spark's columnar plan in
executor tasks, its small batches on the driver where a case also runs them there)."""
from __future__ import annotations

import os
import sys

import pytest

from srtopo.consistency.cost import CALIBRATION_ENV
from srtopo.runners import LocalOptions, SparkOptions, get_runner
from srtopo.runners.spark.session import JAVA_OPTIONS

# The cost balancer reads this machine's calibration file when there is one: tests plan with the defaults.
os.environ[CALIBRATION_ENV] = os.path.join(os.path.dirname(__file__), "no-calibration-in-tests.json")
# Every JVM of the tests (the session's, a command's, a standalone cluster's) compiles with the quick JIT only,
# with room for Spark's generated classes: a test's JVM runs small queries, and the optimising compiler's work
# for them (and the sweeping of a full code cache) took about 40% of its CPU (docs/architecture.md, "Testing")
TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"
os.environ.setdefault("SRTOPO_SPARK_JAVA_OPTIONS", f"{JAVA_OPTIONS['throughput']} {TEST_JVM}")
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", TEST_JVM)

#: variant -> (registered runner, its options, fixtures it needs)
RUNNER_VARIANTS = {
    "local": ("local", LocalOptions(physical_plan="indexed"), ()),
    "local-columnar": ("local", LocalOptions(physical_plan="columnar"), ()),
    "local-operators": ("local", LocalOptions(physical_plan="operators"), ()),
    "spark-columnar": ("spark", SparkOptions(physical_plan="columnar", driver_tuples=0), ("spark",)),
    "spark-fused": ("spark", SparkOptions(physical_plan="fused"), ("spark",)),
    "spark-staged": ("spark", SparkOptions(physical_plan="staged"), ("spark",)),
}


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.runners.spark.session import get_session
    session = get_session(master="local[2]", app_name="srtopo-tests", shuffle_partitions=2,
                          conf={"spark.default.parallelism": "2", "spark.driver.memory": "2g"})
    yield session
    session.stop()


@pytest.fixture(params=list(RUNNER_VARIANTS))
def runner_variant(request):
    """(runner, options) of each variant; a SparkRunner finds the session's SparkSession (the active one)."""
    name, options, needs = RUNNER_VARIANTS[request.param]
    for fixture in needs:
        request.getfixturevalue(fixture)
    return get_runner(name), options


def _starts_spark(item) -> bool:
    """The test needs a SparkSession: it asks for the ``spark`` fixture, or takes the runner or engine named
    ``spark``, or a Spark variant (``spark-...``, ``RUNNER_VARIANTS``), as a parameter."""
    if "spark" in getattr(item, "fixturenames", ()):
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    # a runner, or a variant of it, under any parameter name: "spark", "spark-fused", a chain's "spark-executors"
    return any(isinstance(v, str) and (v == "spark" or v.startswith("spark-")) for v in params.values())


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Every test that starts Spark, and the experiments' slices (tests/experiments), are ``slow`` (the fast loop,
    ``-m "not slow"``, leaves them out): marked here so that a new one is left out without a mark of its own. On
    several workers (``-n``) the slow tests go first, and the short ones fill the workers' gaps at the end."""
    for item in items:
        if _starts_spark(item) or item.path.parent.name == "experiments":
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)
        _group_suffixes(config, items)


def _group_suffixes(config, items) -> None:
    """The ``@group`` suffix of a test marked ``xdist_group``, which ``--dist loadgroup`` schedules by. pytest-xdist
    3.8 sets it through ``item._nodeid``, which pytest 9.2 no longer reads (nodeids live in ``item._id``), so
    every group's tests were spread over the workers; set here where xdist's own did not take."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:         # a pytest before node ids were objects: xdist's own suffix works there
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the golden fixtures under tests/golden/fixtures from what the code produces now")


@pytest.fixture
def golden(request):
    """compare(name, text): the text must equal the fixture (``--update-golden`` or SRTOPO_UPDATE_GOLDEN=1 rewrites
    it); a changed compiler shows up as a readable diff of the fixture in review."""
    from pathlib import Path
    folder = Path(__file__).parent / "golden" / "fixtures"
    update = request.config.getoption("--update-golden") or os.environ.get("SRTOPO_UPDATE_GOLDEN") == "1"

    def compare(name: str, text: str) -> None:
        path = folder / name
        if update:
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"no golden fixture {name}: run pytest tests/golden --update-golden"
        expected = path.read_text(encoding="utf-8")
        assert text == expected, f"{name} differs from the golden fixture (pytest tests/golden --update-golden " \
                                 f"rewrites it after review)"
    return compare
