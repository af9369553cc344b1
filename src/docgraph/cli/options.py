"""Options several commands share, and the settings overrides they stand for."""

from __future__ import annotations

import argparse
from typing import Any

LOCAL_CLUSTER = "local"


def add_ray_option(parser: argparse.ArgumentParser, work: str) -> None:
    """``--ray [ADDRESS]``: run ``work`` as Ray tasks (``ray.*`` settings)."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL_CLUSTER,
        default=None,
        metavar="ADDRESS",
        help=f"run {work} as Ray tasks on the cluster at ADDRESS ('auto', 'ray://host:10001') "
        "or, without one, on a local cluster; needs pip install 'docgraph[ray]'",
    )


def settings_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The workspace settings the command's options set (none: an empty dict)."""
    address = getattr(args, "ray", None)
    if address is None:
        return {}
    return {"ray": {"enabled": True, **({} if address == LOCAL_CLUSTER else {"address": address})}}
