"""The LLM layer: typed call boundary, the gateway, its cache, retries and provider plugins.

Importing this package never imports litellm (that happens on the first call), so the core
stays light for code that only reads results.
"""

from .cache import CachedEntry, CacheWriteError, NullCache, SqliteCache, cache_key
from .faults import FaultSpec
from .gateway import Gateway, GatewayStats
from .retry import RetryDecision, should_retry
from .types import Attempt, CallRequest, CallResult, ModelConfig

__all__ = [
    "Attempt", "CallRequest", "CallResult", "CachedEntry", "CacheWriteError", "FaultSpec", "Gateway", "GatewayStats",
    "ModelConfig", "NullCache", "RetryDecision", "SqliteCache", "cache_key", "should_retry",
]
