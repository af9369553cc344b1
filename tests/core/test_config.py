"""Settings: defaults from the papers' tables, docgraph.toml, DOCGRAPH_* env, clear errors."""

from __future__ import annotations

import pytest

from docgraph.config import HVM_PROFILES, load_settings
from docgraph.errors import ConfigError


def test_defaults_are_the_papers_tables():
    s = load_settings(environ={})
    assert (s.kg4vd.local.alpha, s.kg4vd.local.beta, s.kg4vd.local.h_max, s.kg4vd.local.n_max) == (0.80, 0.0, 1, 30)
    assert (s.kg4vd.multi_hop.k_entities, s.kg4vd.multi_hop.k_relations) == (30, 40)
    assert (s.kg4vd.document.alpha, s.kg4vd.document.beta, s.kg4vd.document.h_max, s.kg4vd.document.n_max) == (
        0.20,
        0.6,
        5,
        200,
    )
    assert s.kg4vd.max_rounds == 5 and s.ingest.dpi == 144
    assert (s.hvm.k_c, s.hvm.theta, s.hvm.k_b, s.hvm.k_text, s.hvm.k_table, s.hvm.k_image) == (10, 0.25, 2, 5, 3, 2)
    assert not s.models.build.enabled


def test_toml_then_env_override(tmp_path):
    (tmp_path / "docgraph.toml").write_text('[ingest]\ndpi = 100\n[models.build]\nbase_url = "http://a"\n')
    env = {"DOCGRAPH_INGEST__DPI": "200", "DOCGRAPH_KG4VD__LOCAL__ALPHA": "0.7", "OTHER": "x"}
    s = load_settings(tmp_path, environ=env)
    assert s.ingest.dpi == 200
    assert s.kg4vd.local.alpha == 0.7
    assert s.models.build.base_url == "http://a" and s.models.build.enabled


def test_hvm_profiles_apply():
    s = load_settings(environ={"DOCGRAPH_HVM__PROFILE": "papers"}).hvm.with_profile()
    assert (s.k_c, s.theta, s.k_b) == (HVM_PROFILES["papers"]["k_c"], 0.25, 5)
    assert load_settings(environ={"DOCGRAPH_HVM__PROFILE": "short_pages"}).hvm.with_profile().theta == 0.5


def test_bad_values_name_the_setting(tmp_path):
    with pytest.raises(ConfigError, match="ingest.dpi"):
        load_settings(environ={"DOCGRAPH_INGEST__DPI": "5"})
    with pytest.raises(ConfigError, match="kg4vd.nonsense"):
        load_settings(environ={"DOCGRAPH_KG4VD__NONSENSE": "1"})
    (tmp_path / "docgraph.toml").write_text("[ingest\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path, environ={})


def test_explicit_values_beat_the_profile(tmp_path):
    (tmp_path / "docgraph.toml").write_text('[hvm]\nprofile = "short_pages"\nk_r = 3\n')
    hvm = load_settings(tmp_path, environ={}).hvm
    assert (hvm.theta, hvm.k_b, hvm.k_r) == (0.5, 4, 3)
    assert hvm.with_profile() == hvm
