"""What one chat endpoint can do, probed once and remembered in the workspace.

``Capabilities`` holds, per base_url + model: the structured-output mode the server
accepts (starts at the configured mode, lowered when the server rejects
``response_format``), how many requests it runs in parallel (``slots``, from llama.cpp's
``GET /props`` ``total_slots``; None when the server does not say) and whether it takes
images (llama.cpp ``/props`` ``modalities.vision``; None when unknown).

``probe_props(base_url)`` asks the server once; ``CapabilityBook`` loads and saves the
record in the store's metadata (key ``endpoint_caps:<base_url>|<model>``) so the next
process neither probes again nor re-learns a downgrade by failing first.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from .response_format import MODES, downgrade

log = logging.getLogger(__name__)
META_PREFIX = "endpoint_caps:"
PROBE_TIMEOUT_S = 5.0


@dataclass
class Capabilities:
    structured_output: str = "json_schema"
    slots: int | None = None
    vision: bool | None = None
    probed: bool = False  # /props was asked (answered or refused), so never again


def server_root(base_url: str) -> str:
    """The server's root URL: ``base_url`` without a trailing ``/v1``."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def probe_props(
    base_url: str, timeout_s: float = PROBE_TIMEOUT_S, get: Callable[..., Any] | None = None
) -> dict[str, Any] | None:
    """``{"slots": int | None, "vision": bool | None}`` from ``GET <root>/props``; None when the
    server could not be reached (try again later). A server without ``/props`` gives Nones."""
    get = get or httpx.get
    try:
        resp = get(server_root(base_url) + "/props", timeout=timeout_s)
    except httpx.HTTPError:
        return None
    if resp.status_code != 200:
        return {"slots": None, "vision": None}
    try:
        body = resp.json()
    except ValueError:
        return {"slots": None, "vision": None}
    slots = body.get("total_slots") if isinstance(body, dict) else None
    modalities = body.get("modalities") if isinstance(body, dict) else None
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    return {
        "slots": int(slots) if isinstance(slots, int) and slots > 0 else None,
        "vision": bool(vision) if isinstance(vision, bool) else None,
    }


class CapabilityBook:
    """The remembered ``Capabilities`` of one endpoint; thread-safe; saves on change.

    ``load``/``save`` read and write the JSON record (the hub wires them to the store's
    metadata); ``configured`` is the mode from settings: a remembered downgrade applies
    only while it is below the configured mode.
    """

    def __init__(
        self,
        key: str,
        configured: str,
        load: Callable[[str], str | None] | None = None,
        save: Callable[[str, str], None] | None = None,
    ):
        self.key = META_PREFIX + key
        self._save = save
        self._lock = threading.Lock()
        record = _parse(load(self.key) if load else None)
        self.caps = record or Capabilities()
        if MODES.index(self.caps.structured_output) < MODES.index(configured) or record is None:
            self.caps.structured_output = configured

    @property
    def mode(self) -> str:
        with self._lock:
            return self.caps.structured_output

    def lower(self, rejected: str, reason: str, endpoint: str) -> str:
        """Downgrade from ``rejected`` (once, whatever the number of threads that saw the
        rejection); logs one line and saves. Returns the mode to use now."""
        with self._lock:
            if self.caps.structured_output == rejected:
                self.caps.structured_output = downgrade(rejected)
                log.warning(
                    "%s rejected response_format %s (%s); using %s from now on",
                    endpoint,
                    rejected,
                    reason[:200],
                    self.caps.structured_output,
                )
                self._store()
            return self.caps.structured_output

    def record_probe(self, found: dict[str, Any]) -> None:
        with self._lock:
            self.caps.slots, self.caps.vision, self.caps.probed = found.get("slots"), found.get("vision"), True
            self._store()

    def _store(self) -> None:
        if self._save is not None:
            try:
                self._save(self.key, json.dumps(asdict(self.caps)))
            except Exception as exc:  # noqa: BLE001 - remembering is an optimisation, never fatal
                log.debug("could not save endpoint capabilities: %s", exc)


def _parse(raw: str | None) -> Capabilities | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
        caps = Capabilities(**{k: v for k, v in data.items() if k in Capabilities.__dataclass_fields__})
    except (ValueError, TypeError):
        return None
    return caps if caps.structured_output in MODES else None
