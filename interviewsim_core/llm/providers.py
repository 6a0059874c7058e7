"""Provider plugins: in-process models that the gateway reaches through litellm, by model prefix.

The gateway knows no model and no prompt. A plugin (today only the offline model in
``interviewsim_core/offline/``) claims a model prefix such as ``offline``; before the first call
to a model with that prefix the gateway asks the plugin to set itself up (register its litellm
custom provider), and on every call it hands the plugin a ``RequestContext`` (contract name,
sample index, retry attempt, fault settings) which the plugin turns into litellm ``metadata``.
That is how an in-process model learns what it is asked without reading the prompt for clues.
Paid providers get no metadata: nothing of ours travels to a remote API.

A plugin registers itself when its package is imported (``register_plugin``). ``PLUGIN_PACKAGES``
names the package to import when a config mentions a prefix whose plugin is not loaded yet, so a
config naming ``offline/extractive`` works without the caller importing anything.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Any, Callable

from .faults import FaultSpec

__all__ = ["PLUGIN_PACKAGES", "ProviderPlugin", "RequestContext", "plugin_for", "register_plugin"]

PLUGIN_PACKAGES: dict[str, str] = {"offline": "interviewsim_core.offline"}
"""Model prefix -> package whose import registers that prefix's plugin (imported on first use)."""


@dataclass(frozen=True)
class RequestContext:
    """What an in-process provider may know about one attempt besides the messages."""

    contract: str
    contract_version: str
    sample_index: int
    retry_attempt: int
    """0 for the first send of this attempt, 1.. for retries after errors."""
    faults: FaultSpec | None = None


@dataclass(frozen=True)
class ProviderPlugin:
    """A model prefix served in-process through a litellm custom provider."""

    prefix: str
    setup: Callable[[], Any]
    """Registers the litellm custom provider; called once per process before the first call."""
    metadata: Callable[[RequestContext], dict[str, Any]]
    """The litellm ``metadata`` for one attempt (how the context reaches the handler)."""


_plugins: dict[str, ProviderPlugin] = {}
_ready: set[str] = set()
_lock = threading.Lock()


def register_plugin(plugin: ProviderPlugin) -> None:
    """Make ``plugin`` serve models named ``<prefix>/...``. Re-registering a prefix replaces it."""
    with _lock:
        _plugins[plugin.prefix] = plugin
        _ready.discard(plugin.prefix)


def plugin_for(model: str) -> ProviderPlugin | None:
    """The plugin serving ``model`` (set up and ready to call), or None for an ordinary provider."""
    prefix = model.split("/", 1)[0] if "/" in model else ""
    if not prefix:
        return None
    plugin = _plugins.get(prefix)
    if plugin is None and prefix in PLUGIN_PACKAGES:
        importlib.import_module(PLUGIN_PACKAGES[prefix])
        plugin = _plugins.get(prefix)
    if plugin is None:
        return None
    if prefix not in _ready:
        with _lock:
            if prefix not in _ready:
                plugin.setup()
                _ready.add(prefix)
    return plugin
