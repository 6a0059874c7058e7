"""The deterministic offline model: answers every InterviewSim prompt contract in a valid shape.

It lives outside ``llm/`` because it is the one model that knows the prompts: the gateway only
carries the request's contract name to it (``provider.py``, a litellm custom provider), and
``respond(messages, contract)`` hands the prompt to the responder registered for that name. The
prompt text is never searched for a marker to decide what was asked. Responders parse the
template back and answer from the prompt's own content with simple lexical rules (best-overlap
example, cosine-overlap bins calibrated on the sample corpus, extractive summaries,
context-supported MCQ options, lexicon counts).

It is a smoke-test baseline so the demo, the tests and CI run the real pipeline with no key and no
network. Its scores say nothing about simulation quality and must never be reported as a judge.

Responders are discovered, not listed: any non-private submodule with a ``RESPONDS`` mapping
(contract name -> ``answer(prompt) -> str``) takes part; two modules claiming one name is an error. A
module may also offer ``RESULTS`` (contract name -> ``result(prompt)``, the contract's typed result, what
its parser makes of ``answer(prompt)``): ``respond_result`` uses it, so the curation's planner skips the
JSON round trip where it costs most. A module's ``VARIANTS`` (offline model name -> contract name ->
``answer``) makes another ``offline/<name>`` answer those contracts its own way (``offline/terse``: a second
generator for a study that compares generators); any other name answers as ``offline/extractive``.
Importing this package registers the provider plugin with the gateway (``provider.plugin``).
"""


from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence


class UnrecognisedPromptError(ValueError):
    """No responder for the request's contract: the offline model only speaks InterviewSim's contracts."""


def _responder_modules() -> list[Any]:
    """Every non-private submodule but the provider, in name order."""
    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
            if not info.name.startswith("_") and info.name != "provider"]


@lru_cache(maxsize=2)
def _table(attribute: str) -> dict[str, Callable[[str], Any]]:
    table: dict[str, Callable[[str], Any]] = {}
    for mod in _responder_modules():
        for name, fn in dict(getattr(mod, attribute, {}) or {}).items():
            if name in table:
                raise RuntimeError(f"offline model: two responders claim contract {name!r}")
            table[name] = fn
    return table


def responders() -> dict[str, Callable[[str], str]]:
    """Contract name -> answer function, from every responder submodule (``RESPONDS``)."""
    return _table("RESPONDS")


@lru_cache(maxsize=1)
def variants() -> dict[str, dict[str, Callable[[str], str]]]:
    """Offline model name -> contract name -> answer function, from every submodule's ``VARIANTS``."""
    table: dict[str, dict[str, Callable[[str], str]]] = {}
    for mod in _responder_modules():
        for name, answers in dict(getattr(mod, "VARIANTS", {}) or {}).items():
            for contract, fn in answers.items():
                if contract in table.setdefault(name, {}):
                    raise RuntimeError(f"offline model: two variants {name!r} claim contract {contract!r}")
                table[name][contract] = fn
    return table


def respond_result(messages: Sequence[Mapping[str, Any]], contract: str) -> Any | None:
    """The offline model's typed result for ``contract`` (what the contract's parser makes of ``respond``),
    or None when its responder offers no ``RESULTS`` entry (then parse ``respond``'s text)."""
    result = _table("RESULTS").get(contract)
    return None if result is None else result(prompt_text(messages))


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    # OpenAI "content parts" shape: keep the text parts in order.
    return "\n".join(p.get("text", "") for p in content if isinstance(p, Mapping))


def prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The prompt as one string: the messages before the first assistant turn.

    A re-ask appends the rejected reply and a complaint; the offline answer depends only on the
    original prompt, which is where the contract's inputs are.
    """
    parts = []
    for m in messages:
        if m.get("role") == "assistant":
            break
        parts.append(_content(m))
    return "\n\n".join(parts)


def respond(messages: Sequence[Mapping[str, Any]], contract: str, model: str | None = None) -> str:
    """The reply of ``offline/<model>`` (default ``extractive``) to a chat prompt asked under ``contract`` (a
    contract NAME): its variant's answer where it has one (``variants``), else the offline model's.

    Raises:
        UnrecognisedPromptError: no responder answers that contract.
    """
    answer = variants().get(model or "", {}).get(contract) or responders().get(contract)
    if answer is None:
        raise UnrecognisedPromptError(
            f"offline model: no responder for contract {contract!r}; known: {sorted(responders())}")
    return answer(prompt_text(messages))


__all__ = ["respond", "respond_result", "responders", "variants", "prompt_text", "UnrecognisedPromptError"]

from . import provider as _provider  # noqa: E402 - registers the gateway plugin with respond above

_provider.install(respond)
