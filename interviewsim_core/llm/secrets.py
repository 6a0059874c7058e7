"""Every credential the process knows, and the one function that scrubs them from text.

Providers repeat keys in their errors (``Incorrect API key provided: sk-...``), URLs carry them
(``https://user:key@host/v1``, ``?api-key=...``) and configs name them in ``extra_params``. A key
must reach the provider and nothing else, so the gateway passes every error text and log line
through ``redact`` before it is returned, logged, cached or stored, and configs saved for later
runs go through ``redact_url`` / ``redact_config``. Keys are read from the environment when
needed and never kept here.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "known_secrets", "redact", "redact_url", "redact_config", "RedactingFilter", "validation_text",
           "provider_key_env", "secret_param"]

MASK = "***"

# Environment variable names that hold credentials: every litellm provider key follows one of
# these shapes (OPENAI_API_KEY, AZURE_API_KEY, ANTHROPIC_API_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY,
# VERTEXAI_CREDENTIALS, DATABRICKS_TOKEN, ...).
_SECRET_ENV = re.compile(r"(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|_AUTH|ACCESS_KEY_ID)$", re.I)
# Parameter names (extra_params, URL query) whose value is a credential.
_SECRET_PARAM = re.compile(r"(?:^|[-_])(?:apikey|key|token|secret|password|passwd|pwd|auth|authorization|"
                           r"credentials?|sig|signature|code)$", re.I)
# Shorter values are not redacted: masking "1" or "true" everywhere would garble messages and
# such values are not credentials anyway.
_MIN_LEN = 6

# What litellm reads when a model names no key (openai/* and hosted_vllm/* with an api_base).
_PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}


def provider_key_env(model: str) -> str | None:
    """The environment variable litellm reads for ``model``'s key when the config names none."""
    return _PROVIDER_KEY_ENV.get(model.split("/", 1)[0]) if "/" in model else None


def secret_param(name: str) -> bool:
    """True when a parameter or query field of this name carries a credential."""
    return bool(_SECRET_PARAM.search(name.strip()))


def _url_secrets(url: str | None) -> list[str]:
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [v for v in (parts.password, parts.username) if v]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=False) if secret_param(k)]
    return found


def _param_secrets(params: Mapping[str, Any] | None) -> list[str]:
    found: list[str] = []
    for k, v in (params or {}).items():
        if isinstance(v, Mapping):
            found += _param_secrets(v)
        elif isinstance(v, str) and secret_param(str(k)):
            found.append(v.split(" ", 1)[1] if v.lower().startswith("bearer ") else v)
    return found


def known_secrets(models: Iterable[Any] = ()) -> list[str]:
    """Every credential value the process knows now: credential-shaped environment variables,
    each model's ``api_key_env``, secrets in ``extra_params`` and in ``api_base`` URLs.
    Longest first, so a key that contains another is masked whole."""
    found = [v for k, v in os.environ.items() if _SECRET_ENV.search(k)]
    for m in models:
        env = getattr(m, "api_key_env", None)
        if env and os.environ.get(env):
            found.append(os.environ[env])
        found += _param_secrets(getattr(m, "extra_params", None))
        found += _url_secrets(getattr(m, "api_base", None))
    return sorted({s for s in found if isinstance(s, str) and len(s) >= _MIN_LEN}, key=len, reverse=True)


def redact(text: str, models: Iterable[Any] = ()) -> str:
    """``text`` with every known credential (see ``known_secrets``) replaced by ``***``."""
    if not text:
        return text
    for secret in known_secrets(models):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_url(url: str | None) -> str | None:
    """``url`` with its userinfo password and credential-named query values masked.

    ``https://user:key@host/v1?api-key=k&x=1`` -> ``https://user:***@host/v1?api-key=***&x=1``.
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if secret_param(k) and v else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_config(obj: Any) -> Any:
    """A copy of a plain config tree (dicts, lists, scalars) safe to save: URLs in ``*api_base*``
    fields are passed through ``redact_url`` and credential-named string fields are masked;
    ``api_key_env`` (a variable NAME, not a key) is kept."""
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            name = str(k)
            if isinstance(v, str) and "api_base" in name:
                out[k] = redact_url(v)
            elif isinstance(v, str) and name != "api_key_env" and secret_param(name):
                out[k] = MASK
            else:
                out[k] = redact_config(v)
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact_config(v) for v in obj)
    if isinstance(obj, str) and "://" in obj and "@" in obj.split("://", 1)[1].split("/", 1)[0]:
        return redact_url(obj)
    return obj


class RedactingFilter(logging.Filter):
    """Scrubs known credentials from every record of the logger it is attached to."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string is not ours to fix here
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def validation_text(exc: Any) -> str:
    """A pydantic ``ValidationError`` as lines ``location: message``, without the offending input.

    pydantic's own text repeats each bad value (``input_value='sk-...'``): a key typed under the
    wrong name would be printed back to the terminal and the logs.
    """
    lines = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(config)"
        lines.append(f"  - {loc}: {redact(str(err.get('msg', '')))}")
    return "\n".join(lines)
