"""The disk fills up (issue 15 item 5): a workspace on a small tmpfs. ``add`` and ``build`` stop
with one clear "no space left" line, leave nothing half-written (``docgraph check`` finds no
error; an unfinished add resumes), and the same command after space is freed finishes with
the workspace an uninterrupted run leaves (``docgraph.testing.disk_full``)."""

from __future__ import annotations

import pytest
from conftest_paths import OPENSTAX

from docgraph.testing.disk_full import disk_full_case, tmpfs_unavailable

pytestmark = pytest.mark.slow
WHY_NOT = tmpfs_unavailable()


def assert_survived(result) -> None:
    assert result.failures == [], result.failures
    assert result.hit == result.runs, "the disk never filled up: leave less free space"
    assert (result.clear_errors, result.survived) == (result.runs, result.runs)
    assert (result.lost, result.duplicated, result.changed, result.check_problems) == (0, 0, 0, 0)


@pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
def test_add_on_a_full_disk_stops_clearly_and_resumes(_openstax_template, tmp_path):
    result = disk_full_case(
        "add", tmp_path / "none", ["add", str(OPENSTAX)], _openstax_template, tmp_path, free_kb=[700]
    )
    assert_survived(result)


@pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
def test_build_on_a_full_disk_stops_clearly_and_resumes(_openstax_template, _dense_template, tmp_path):
    result = disk_full_case(
        "dense", _openstax_template, ["build", "--method", "dense"], _dense_template, tmp_path, free_kb=[120]
    )
    assert_survived(result)
