"""A disk that fills up during a run (``experiments.full_disk``, a small tmpfs; skipped where mounting is not
allowed): one clear line naming the place, and after space is freed a restart on the same checkpoint finishes
with the output of a run that never failed."""
import pytest

from experiments.full_disk import case, stream
from experiments.hostile import EXAMPLES
from experiments.kill_campaign import output_lines
from tests.spark.helpers import srtopo_here


def _reference(tmp_path):
    """The uninterrupted run, in this process on the shared session (same settings as the CLI's)."""
    from srtopo.consistency.choose import topology_from_tbox
    from srtopo.io.sources import TntFiles
    from srtopo.runners import RunConfig, SparkRunner
    source = stream(tmp_path / "ref-in")
    SparkRunner().run(topology_from_tbox(str(EXAMPLES / "tex.ttl")), [TntFiles(str(source), files_per_batch=1)],
                      RunConfig(window=5, checkpoint=str(tmp_path / "ref-ck"), out=str(tmp_path / "ref")))
    return output_lines(tmp_path / "ref")


def test_a_full_checkpoint_disk_is_a_clear_error_and_a_restart_completes(spark, tmp_path):
    got = case("checkpoint", tmp_path / "run", reference=_reference(tmp_path), restart=srtopo_here)
    if got is None:
        pytest.skip("mounting a tmpfs is not allowed here")
    assert got["failed_clearly"], got["message"]
    assert got["restart_ok"] and got["restart_identical"] and got["reports"] > 1000


def test_the_local_runner_on_a_full_disk_says_where(tmp_path):
    got = case("local-out", tmp_path)
    if got is None:
        pytest.skip("mounting a tmpfs is not allowed here")
    assert got["failed_clearly"], got["message"]
