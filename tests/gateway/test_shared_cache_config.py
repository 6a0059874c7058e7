"""Choosing the cache by configuration, without a server: SQLite by default, URLs checked, no password in them.

The shared backends themselves are tested on real Redis and PostgreSQL by ``make test-distributed``.
"""

from __future__ import annotations

import pickle

import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.shared_cache import PostgresCache, RedisCache, cache_label, open_cache, validate_cache_url
from interviewsim_core.pipeline.config import EvalConfig

SECRET = "pw-PLANTED-93b1"


def test_no_url_means_the_sqlite_cache(tmp_path):
    cache = open_cache(None, tmp_path / "sub" / "llm.sqlite")
    assert isinstance(cache, SqliteCache) and (tmp_path / "sub" / "llm.sqlite").exists()


@pytest.mark.parametrize("url, kind", [("redis://127.0.0.1:6379/0", RedisCache), ("rediss://cache.internal/1", RedisCache),
                                       ("postgresql://app@db.internal:5432/interviewsim", PostgresCache),
                                       ("postgres://db.internal/x", PostgresCache)])
def test_url_picks_the_backend_without_connecting(url, kind, tmp_path):
    cache = open_cache(url, tmp_path / "unused.sqlite")
    assert type(cache) is kind and cache._client is None  # connects on first use, per process
    assert pickle.loads(pickle.dumps(cache)).url == url
    assert not (tmp_path / "unused.sqlite").exists()


@pytest.mark.parametrize("url, rule", [("mysql://h/db", "scheme"), ("redis:///0", "host"),
                                       (f"redis://user:{SECRET}@h:6379/0", "password"),
                                       (f"postgresql://app:{SECRET}@db/x", "password")])
def test_bad_urls_are_refused_naming_the_rule_and_never_echo_a_password(url, rule):
    with pytest.raises(ConfigError, match=rule) as err:
        validate_cache_url(url)
    assert SECRET not in str(err.value)
    with pytest.raises(ConfigError) as cfg_err:
        EvalConfig.load(env={"INTERVIEWSIM_CACHE_URL": url})
    assert "cache_url" in str(cfg_err.value) and SECRET not in str(cfg_err.value)


def test_label_masks_a_password():
    assert SECRET not in cache_label(f"redis://u:{SECRET}@h:1/0")
    assert cache_label("redis://h:1/0") == "redis://h:1/0"


def test_cache_url_reaches_the_gateway_resource(tmp_path):
    from interviewsim_dagster.definitions import build_resources

    cfg = EvalConfig.load_resolved(env={}, overrides={"data_root": str(tmp_path), "cache_url": "redis://127.0.0.1:6379/0"})
    assert build_resources(cfg)["llm"].cache_url == "redis://127.0.0.1:6379/0"
