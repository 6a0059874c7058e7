"""A planted API key must appear in no artefact: cache file, logs, results."""

from __future__ import annotations

import logging

import pytest
from gateway_support import FAKE_KEY, fake_model
from scripted_model import scripted_reply, toy_request

from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.embeddings.litellm_embedder import LiteLLMEmbedder


@pytest.mark.parametrize("transport", ["litellm", "auto"])
@pytest.mark.server(reply=scripted_reply, first_n_fault=1, first_n_kind="500", malformed_rate=0.3)
def test_planted_key_is_in_no_artefact(fake_server, planted_key, tmp_path, caplog, transport):
    cache_path = tmp_path / "cache.sqlite"
    with caplog.at_level(logging.DEBUG):
        gw = Gateway(cache=SqliteCache(cache_path), transport=transport)
        model = fake_model(fake_server)
        out = gw.run(model, [toy_request(f"q{i}") for i in range(8)])
        # A failing endpoint too, so error strings are part of what we grep.
        dead = fake_model(fake_server, "dead", api_base="http://127.0.0.1:9/v1", max_retries=0)
        out += gw.run(dead, [toy_request("unreachable")])
        emb = LiteLLMEmbedder("openai/fake-embed", api_base=fake_server.base_url,
                              api_key_env=model.api_key_env, cache=SqliteCache(cache_path))
        emb.embed(["some text"])
    # The key did reach the server (so the test would see it if it leaked) ...
    assert any(FAKE_KEY in e["headers"].get("authorization", "") for e in fake_server.log)
    # ... but is in none of our artefacts.
    blobs = [p.read_bytes() for p in tmp_path.iterdir() if p.is_file()]
    assert blobs and all(FAKE_KEY.encode() not in b for b in blobs)
    assert FAKE_KEY not in caplog.text
    assert all(FAKE_KEY not in r.model_dump_json() for r in out)
    assert out[-1].status == "failed"


# -- every credential the process knows, whatever its source (issue 10) ---------------------------

from interviewsim_core.llm.secrets import redact, redact_config, redact_url  # noqa: E402
from interviewsim_core.llm.types import ModelConfig  # noqa: E402

OTHER_KEY = "sk-proj-OPENAIENV-93bd27aa01c4"


def _leaks(key: str, out, caplog) -> list[str]:
    where = [f"result {i}" for i, r in enumerate(out) if key in r.model_dump_json()]
    return where + (["log"] if key in caplog.text else [])


@pytest.mark.parametrize("transport", ["litellm", "auto"])
@pytest.mark.server(reject_key=True)
def test_key_from_openai_api_key_echoed_by_the_provider_is_redacted(fake_server, monkeypatch, caplog, transport):
    monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)
    model = ModelConfig(model="openai/m", api_base=fake_server.base_url, max_retries=0, timeout_s=30)
    with caplog.at_level(logging.DEBUG):
        out = Gateway(transport=transport).run(model, [toy_request("q")])
    assert out[0].status == "failed" and "401" in out[0].error
    # The key was sent (both paths send what litellm would send) and came back in the error body.
    assert any(OTHER_KEY in e["headers"].get("authorization", "") for e in fake_server.log)
    assert _leaks(OTHER_KEY, out, caplog) == []


@pytest.mark.server(reject_key=True)
def test_key_in_extra_params_is_redacted(fake_server, caplog):
    model = ModelConfig(model="openai/m", api_base=fake_server.base_url, max_retries=0, timeout_s=30,
                        extra_params={"api_key": "sk-extra-PARAM-55aa77cc99"})
    with caplog.at_level(logging.DEBUG):
        out = Gateway().run(model, [toy_request("q")])
    assert out[0].status == "failed"
    assert any("sk-extra-PARAM-55aa77cc99" in e["headers"].get("authorization", "") for e in fake_server.log)
    assert _leaks("sk-extra-PARAM-55aa77cc99", out, caplog) == []


@pytest.mark.parametrize("transport", ["litellm", "auto"])
def test_key_in_api_base_url_is_redacted_from_errors(fake_server, caplog, monkeypatch, transport):
    # The fake server answers an unknown path with a 404 that repeats the path, query included,
    # as real servers and proxies do: the query token comes back in the error text.
    monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)  # litellm's client refuses to send without a key
    host = fake_server.base_url.split("//", 1)[1]
    bases = [f"http://{host}?api-key=sk-URL-query-7731",
             "http://bob:sk-URL-userinfo-8812@127.0.0.1:9/v1?api-key=sk-URL-query-7731"]
    out = []
    with caplog.at_level(logging.DEBUG):
        for base in bases:
            model = ModelConfig(model="openai/m", api_base=base, max_retries=0, timeout_s=5)
            out += Gateway(transport=transport).run(model, [toy_request("q")])
    assert [r.status for r in out] == ["failed", "failed"]
    assert any("sk-URL-query-7731" in e["path"] for e in fake_server.log)  # the token reached the server
    for secret in ("sk-URL-userinfo-8812", "sk-URL-query-7731"):
        assert _leaks(secret, out, caplog) == []


def test_redact_masks_env_keys_model_keys_and_url_tokens(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ENVKEY-123456")
    monkeypatch.setenv("MY_KEY_VAR", "custom-key-value-9876")
    m = ModelConfig(model="openai/m", api_key_env="MY_KEY_VAR", extra_params={"headers": {"Authorization": "Bearer tok-HEADER-4455"}},
                    api_base="https://u:pw-in-url-3344@h/v1?token=tok-QUERY-2211&x=1")
    text = "a sk-ant-ENVKEY-123456 b custom-key-value-9876 c tok-HEADER-4455 d pw-in-url-3344 e tok-QUERY-2211"
    assert redact(text, [m]) == "a *** b *** c *** d *** e ***"
    assert redact("temperature 0.0 and 1", [m]) == "temperature 0.0 and 1"


def test_redact_url_and_config():
    assert redact_url("https://user:sk-1234567@host:8000/v1?api-key=abcdefgh&x=1") == \
        "https://user:***@host:8000/v1?api-key=***&x=1"
    assert redact_url("https://sk-1234567@host/v1") == "https://***@host/v1"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    cfg = {"generator": {"model": "openai/m", "api_base": "https://u:secretpw@h/v1", "api_key_env": "K",
                         "extra_params": {"api_key": "sk-zzzzzzzz", "max_tokens": 5}}, "seed": 3}
    safe = redact_config(cfg)
    assert "secretpw" not in repr(safe) and "sk-zzzzzzzz" not in repr(safe)
    assert safe["generator"]["api_key_env"] == "K" and safe["generator"]["extra_params"]["max_tokens"] == 5
    assert safe["seed"] == 3 and cfg["generator"]["api_base"] == "https://u:secretpw@h/v1"  # input untouched


@pytest.mark.server(reply=scripted_reply)
def test_direct_path_sends_openai_api_key_like_litellm(fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)
    model = ModelConfig(model="openai/m", api_base=fake_server.base_url, timeout_s=30)
    for transport in ("auto", "litellm"):
        fake_server.reset_counters()
        out = Gateway(transport=transport).run(model, [toy_request(f"q-{transport}")])
        assert out[0].status == "ok"
        (entry,) = fake_server.log
        assert entry["headers"].get("authorization") == f"Bearer {OTHER_KEY}", transport


def test_config_error_does_not_echo_the_key(tmp_path):
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.config import EvalConfig

    secret = "sk-typo-IN-CONFIG-0042aa"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"generator:\n  model: openai/gpt-4.1\n  api_key: {secret}\n")
    with pytest.raises(ConfigError) as err:
        EvalConfig.load(config_file=cfg, env={})
    assert "api_key" in str(err.value) and "Extra inputs are not permitted" in str(err.value)
    assert secret not in str(err.value)


def test_key_inside_api_base_is_not_saved_in_last_run_config(tmp_path):
    from interviewsim_cli.run_cmds import save_last_run_config
    from interviewsim_core.pipeline.config import EvalConfig

    cfg = EvalConfig.load(env={}, overrides={"api_base": "https://bob:sk-IN-URL-77aa88@h.example/v1?api-key=sk-Q-99bb11"})
    text = save_last_run_config(cfg, tmp_path).read_text()
    assert "sk-IN-URL-77aa88" not in text and "sk-Q-99bb11" not in text
    assert "h.example/v1" in text
