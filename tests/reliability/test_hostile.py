"""Hostile lines in a stream (``experiments.hostile``) never stop it and never change what the good lines give:
on every runner, a 4,000-statement stream with 400 hostile lines mixed in gives exactly the clean stream's
reports and exactly 400 rejected records, one at each hostile line; the same for a real I-DLV-sr log (the ICLP
2021 Content Caching input) with 120 hostile lines, on the local runner and on Spark, which reject the same
lines for the same reasons; the same for a Streamlog stream of sensor readings with hostile fact lines."""
from __future__ import annotations

import pytest

from experiments.hostile import TNT, consistency_case, far_ahead_case, fact_kinds, rules_case, streamlog_case
from srtopo.runners import LocalOptions, SparkOptions


def test_hostile_lines_change_no_report_on_any_runner(runner_variant, tmp_path):
    runner, options = runner_variant
    got = consistency_case(runner.name, options, tmp_path)
    assert got["hostile"] == 400 and got["kinds"] == len(TNT)
    assert got["outputs"] > 0 and got["identical"], got
    assert got["clean_rejected"] == 0 and got["rejected"] == 400
    assert got["rejected_at_the_hostile_lines"], got["missed"]


def test_one_percent_hostile_lines_give_the_same_rejected_records_on_every_plan(runner_variant, tmp_path):
    """40 hostile lines in 4,000 statements: each plan rejects the same (file, line, reason) records as the
    record-by-record reference plan and gives its reports."""
    runner, options = runner_variant
    reference = consistency_case("local", LocalOptions(physical_plan="indexed"), tmp_path / "reference", count=40)
    got = consistency_case(runner.name, options, tmp_path / "plan", count=40)
    assert reference["rejected"] == 40 and reference["rejected_at_the_hostile_lines"], reference["missed"]
    assert got["records"] == reference["records"]
    assert got["identical"] and got["outputs"] == reference["outputs"]


def test_hostile_lines_in_a_real_idlvsr_log_change_no_model(spark, tmp_path):
    local = rules_case("local", None, tmp_path / "local")
    if local is None:
        pytest.skip("ICLP2021 inputs not present in ../shared/data")
    on_spark = rules_case("spark", SparkOptions(), tmp_path / "spark")
    for got in (local, on_spark):
        assert got["outputs"] == 60 and got["identical"], got
        assert got["clean_rejected"] == 0 and got["rejected"] == got["hostile"] == 120
        assert got["rejected_at_the_hostile_lines"], got["missed"]
    assert on_spark["reasons"] == local["reasons"]


def test_hostile_fact_lines_in_a_streamlog_stream_change_no_model(spark, tmp_path):
    local = streamlog_case("local", None, tmp_path / "local", facts=1500, count=150)
    on_spark = streamlog_case("spark", SparkOptions(), tmp_path / "spark", facts=1500, count=150)
    for got in (local, on_spark):
        assert got["outputs"] > 100 and got["identical"], got
        assert got["kinds"] == len(fact_kinds(1))
        assert got["clean_rejected"] == 0 and got["rejected"] == got["hostile"] == 150
        assert got["rejected_at_the_hostile_lines"], got["missed"]
    assert on_spark["reasons"] == local["reasons"]


def test_a_streamlog_timestamp_mistyped_far_ahead_is_rejected_alike_on_both_runners(spark, tmp_path):
    """A fact more than --max-gap timestamps after its stream's latest is one rejected record, and every good line
    after it is taken as if it had not been sent, on both runners."""
    local = far_ahead_case("local", None, tmp_path / "local", facts=100)
    assert local["rejected_itself"] and local["good_lines_rejected"] == 0 and local["identical"], local
    assert any("ahead: timestamp" in reason for _line, reason in local["reasons"])
    assert far_ahead_case("spark", SparkOptions(), tmp_path / "spark", facts=100) == local
