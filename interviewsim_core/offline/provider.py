"""The offline model as a litellm custom provider: ``offline/<name>`` goes through litellm.acompletion.

Registering it with litellm (rather than short-circuiting in the gateway) means the demo, the
tests and CI run the very code path a paid provider runs: litellm's dispatch, our retry
classifier on litellm's own exception types, the cache, the cost ledger. The answers come from
``interviewsim_core.offline.respond(messages, contract)``, handed over by ``install`` (a deterministic
smoke-test baseline, not a judge of quality). Token usage is a whitespace count and cost is 0.

The gateway hands this plugin a ``RequestContext`` per attempt (``llm/providers.py``); it travels
in litellm's ``metadata``: the contract name (which responder answers), the retry attempt and the
fault settings (``llm.faults.FaultSpec``), so two gateways with different fault settings can share
this one process-wide handler. A call without a contract name is refused (400).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

from ..llm.faults import MALFORMED_TEXT, FaultSpec, draw_fault
from ..llm.providers import ProviderPlugin, RequestContext, register_plugin

__all__ = ["PROVIDER", "register", "get_handler", "install", "metadata",
           "FAULT_KEY", "ATTEMPT_KEY", "CONTRACT_KEY"]

PROVIDER = "offline"
FAULT_KEY = "interviewsim_fault_spec"
ATTEMPT_KEY = "interviewsim_retry_attempt"
CONTRACT_KEY = "interviewsim_contract"

_lock = threading.Lock()
_handler: Any = None
_responder: Callable[[Sequence[dict[str, Any]], str, str], str] | None = None
"""The product's offline answers (the package's ``respond``), handed over by ``install``."""


def metadata(ctx: RequestContext) -> dict[str, Any]:
    """The litellm metadata carrying one attempt's context to the handler."""
    meta: dict[str, Any] = {CONTRACT_KEY: ctx.contract, ATTEMPT_KEY: ctx.retry_attempt}
    if ctx.faults is not None:
        meta[FAULT_KEY] = ctx.faults.model_dump()
    return meta


def _count(text: str) -> int:
    return len(text.split())


def _build_handler_class() -> type:
    from ..llm.transport import litellm_module

    litellm = litellm_module()  # the quiet, offline-safe import (sets LITELLM_LOCAL_MODEL_COST_MAP first)
    from litellm.llms.custom_llm import CustomLLM  # noqa: PLC0415

    class OfflineLLM(CustomLLM):
        """Deterministic in-process model; ``responder`` is swappable for tests."""

        def __init__(self) -> None:
            super().__init__()
            self.responder: Callable[[Sequence[dict[str, Any]], str, str], str] = _responder

        def _answer(self, model: str, messages: list, model_response: Any, litellm_params: Any) -> Any:
            meta = (litellm_params or {}).get("metadata") or {}
            spec = meta.get(FAULT_KEY)
            if isinstance(spec, dict):
                spec = FaultSpec(**spec)
            attempt = int(meta.get(ATTEMPT_KEY, 0) or 0)
            fault = draw_fault(spec, messages, attempt) if isinstance(spec, FaultSpec) else None
            full = f"{PROVIDER}/{model}"
            if fault == "rate_limit":
                import httpx  # noqa: PLC0415

                req = httpx.Request("POST", "http://offline.invalid/v1/chat/completions")
                resp = httpx.Response(429, headers={"retry-after": f"{spec.retry_after_s:g}"}, request=req)
                raise litellm.RateLimitError("offline fault: rate limited", llm_provider=PROVIDER, model=full,
                                             response=resp)
            if fault == "timeout":
                raise litellm.Timeout("offline fault: timed out", model=full, llm_provider=PROVIDER)
            if fault == "server_error":
                import httpx  # noqa: PLC0415

                req = httpx.Request("POST", "http://offline.invalid/v1/chat/completions")
                raise litellm.InternalServerError("offline fault: server error", llm_provider=PROVIDER, model=full,
                                                  response=httpx.Response(500, request=req))
            try:
                contract = meta.get(CONTRACT_KEY)
                if not isinstance(contract, str) or not contract:
                    raise ValueError("no contract name in the request metadata (call through the Gateway)")
                text = MALFORMED_TEXT if fault == "malformed" else self.responder(messages, contract, model)
            except ValueError as exc:
                # A prompt the offline model does not know is a caller bug, not a transient
                # fault: a 400 makes the gateway fail the item at once instead of retrying.
                raise litellm.BadRequestError(f"offline model: {exc}", model=full, llm_provider=PROVIDER) from exc
            prompt_tokens = sum(_count(str(m.get("content") or "")) for m in messages)
            completion_tokens = _count(text)
            model_response.choices[0].message.content = text
            model_response.choices[0].finish_reason = "stop"
            model_response.model = full
            model_response.created = int(time.time())
            model_response.usage = litellm.Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                                 total_tokens=prompt_tokens + completion_tokens)
            model_response._hidden_params["response_cost"] = 0.0
            return model_response

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,  # type: ignore[override]
                       encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                       logger_fn=None, headers={}, timeout=None, client=None):  # noqa: B006 - litellm's signature
            return self._answer(model, messages, model_response, litellm_params)

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,  # type: ignore[override]
                              encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                              logger_fn=None, headers={}, timeout=None, client=None):  # noqa: B006
            return self._answer(model, messages, model_response, litellm_params)

    return OfflineLLM


def register() -> Any:
    """Register the ``offline`` provider with litellm once per process; returns the handler. Idempotent."""
    global _handler
    from ..llm.transport import litellm_module

    with _lock:
        litellm = litellm_module()

        if _handler is None:
            _handler = _build_handler_class()()
        if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
            litellm.custom_provider_map = [*litellm.custom_provider_map,
                                           {"provider": PROVIDER, "custom_handler": _handler}]
            from litellm.utils import custom_llm_setup  # noqa: PLC0415

            custom_llm_setup()
        return _handler


def get_handler() -> Any:
    """The registered handler (registering it first if needed), e.g. to swap its responder in a test."""
    return register()


def install(responder: Callable[[Sequence[dict[str, Any]], str, str], str]) -> None:
    """Register this provider as the gateway's plugin for ``offline/`` models, answering with ``responder``.

    The package calls it at import with its ``respond``: this module is imported by the package, so it is
    handed the answers rather than importing them back up."""
    global _responder
    _responder = responder
    register_plugin(ProviderPlugin(prefix=PROVIDER, setup=register, metadata=metadata))
