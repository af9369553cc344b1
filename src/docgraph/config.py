"""The one typed settings object.

Sources, later ones winning: the defaults (``settings_sections``) < ``<workspace>/docgraph.toml`` < environment
variables ``DOCGRAPH_<SECTION>__<FIELD>`` (nested sections joined by ``__``, e.g.
``DOCGRAPH_MODELS__BUILD__BASE_URL``). Values from the environment are parsed as TOML
scalars when possible (``0.5``, ``true``, ``[1, 2]``), else kept as strings.
Modules never read ``os.environ`` themselves; they take the section they need.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ConfigDict, Field, ValidationError

from .errors import ConfigError
from .settings_methods import (  # re-exported: modules import their section from here
    HVM_PROFILES,
    BaselineSettings,
    EdgeWeights,
    HippoRAGSettings,
    HVMSettings,
    KG4VDSettings,
    PPRModeSettings,
    RetrievalSettings,
)
from .settings_sections import (
    AnswerSettings,
    ChatSettings,
    DLVQASettings,
    EmbeddingSettings,
    ImageEmbeddingSettings,
    IngestSettings,
    ModelsSettings,
    RaySettings,
    RerankSettings,
    Section,
    StoreSettings,
)

__all__ = [
    "CONFIG_FILE",
    "ENV_PREFIX",
    "HVM_PROFILES",
    "AnswerSettings",
    "BaselineSettings",
    "ChatSettings",
    "DLVQASettings",
    "EdgeWeights",
    "EmbeddingSettings",
    "HippoRAGSettings",
    "HVMSettings",
    "ImageEmbeddingSettings",
    "IngestSettings",
    "KG4VDSettings",
    "ModelsSettings",
    "PPRModeSettings",
    "RaySettings",
    "RerankSettings",
    "RetrievalSettings",
    "Section",
    "Settings",
    "check_sections",
    "StoreSettings",
    "load_settings",
]

ENV_PREFIX = "DOCGRAPH_"
CONFIG_FILE = "docgraph.toml"


S = TypeVar("S", bound=Section)


class Settings(Section):
    """Every section of docgraph.toml. Sections of methods from other packages (a method's
    ``settings_section``) are kept as given and validated by their method's model: ``section``
    reads one, ``check_sections`` refuses a section nobody declares."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    ingest: IngestSettings = Field(default_factory=IngestSettings)
    models: ModelsSettings = Field(default_factory=ModelsSettings)
    kg4vd: KG4VDSettings = Field(default_factory=KG4VDSettings)
    hvm: HVMSettings = Field(default_factory=HVMSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    baselines: BaselineSettings = Field(default_factory=BaselineSettings)
    answers: AnswerSettings = Field(default_factory=AnswerSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    dlvqa: DLVQASettings = Field(default_factory=DLVQASettings)
    ray: RaySettings = Field(default_factory=RaySettings)

    def section(self, name: str, model: type[S]) -> S:
        """The ``[name]`` section that is not built in (a plug-in method's), validated by
        ``model``; its defaults when the section is absent. A bad value is a ConfigError
        naming the field."""
        raw = (self.model_extra or {}).get(name) or {}
        if isinstance(raw, model):
            return raw
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            lines = [f"  {name}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
            raise ConfigError("invalid settings (docgraph.toml or DOCGRAPH_* env):\n" + "\n".join(lines)) from None


def check_sections(settings: Settings, declared: Mapping[str, type[Section]]) -> None:
    """Every section beyond the built-in ones must be one a method declares (``declared``:
    section name → model) and valid for its model; otherwise a ConfigError says which."""
    for name in settings.model_extra or {}:
        if name not in declared:
            known = sorted({*Settings.model_fields, *declared})
            raise ConfigError(
                f"unknown settings section [{name}] (docgraph.toml or DOCGRAPH_{name.upper()}__* env); "
                f"sections: {', '.join(known)}"
            )
        settings.section(name, declared[name])


def _parse_env_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _deep_merge(base: dict, extra: Mapping) -> dict:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def env_overrides(environ: Mapping[str, str]) -> dict:
    """Nested dict of settings given as DOCGRAPH_SECTION__FIELD variables."""
    tree: dict = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = _parse_env_value(raw)
    return tree


def load_settings(
    workspace: Path | str | None = None, environ: Mapping[str, str] | None = None, overrides: Mapping | None = None
) -> Settings:
    """Defaults, then the workspace's docgraph.toml, then the environment, then ``overrides``.

    An HVM ``profile`` sets the defaults of its fields; values given explicitly still win.
    """
    explicit: dict = {}
    if workspace is not None:
        path = Path(workspace) / CONFIG_FILE
        if path.exists():
            try:
                explicit = tomllib.loads(path.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{path}: not valid TOML ({exc}); fix or delete the file") from exc
    explicit = _deep_merge(explicit, env_overrides(os.environ if environ is None else environ))
    if overrides:
        explicit = _deep_merge(explicit, overrides)
    data: dict = Settings().model_dump()  # partial nested overrides keep the other defaults
    profile = explicit.get("hvm", {}).get("profile") if isinstance(explicit.get("hvm"), Mapping) else None
    if profile in HVM_PROFILES:
        data["hvm"].update(HVM_PROFILES[profile])
    data = _deep_merge(data, explicit)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ConfigError("invalid settings (docgraph.toml or DOCGRAPH_* env):\n" + "\n".join(lines)) from exc
