"""A local Ray cluster's object store is bounded by ``ray.object_store_mb``.

Every process that reads task results keeps the store pages it touched resident (they
count as shared memory in its RSS), so with Ray's default store (30% of RAM) this probe's
process kept about 300 MB of the 527 MB it read. The cluster starts in a
child process: ``ray.init`` holds for the life of a process, and the other Ray tests share
one cluster of their own.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("ray")

PROBE = """
import json
import numpy as np
from docgraph.config import RaySettings
from docgraph.scale.cluster import connect

def shared_mb():
    for line in open("/proc/self/status"):
        if line.startswith("RssShmem"):
            return int(line.split()[1]) / 1024
    return None

ray = connect(RaySettings(enabled=True, num_cpus=2, object_store_mb=100))

@ray.remote
def rows(seed):
    return np.random.default_rng(seed).random((6000, 384), dtype=np.float32)  # 9.2 MB, through the store

moved = 0
for seed in range(30):  # as RayTextEmbedder does: two shards at a time, joined
    block = np.concatenate(ray.get([rows.remote(seed), rows.remote(seed + 1000)]))
    moved += block.nbytes
    del block
print(json.dumps({"store_mb": ray.cluster_resources()["object_store_memory"] / 2**20,
                  "moved_mb": moved / 2**20, "shared_mb": shared_mb()}))
ray.shutdown()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_the_local_cluster_store_bounds_the_shared_memory_a_process_keeps():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["store_mb"] == pytest.approx(100, abs=1)
    assert probe["moved_mb"] > 500
    # the store's pages, once each; with Ray's default store this process kept ~300 MB
    assert probe["shared_mb"] is not None and probe["shared_mb"] <= 110
