"""Each API key's request rate (API_RATE_LIMIT), counted in the product's Redis so that every replica of
the API draws on one budget per key; without keys, per client address.

`limits` (sliding window counter: one Lua call per request) keeps the counts, through the product's own
Redis client (its connections bounded in time, and an embedded server that died started again by the
next request: with a client of its own, the limiter answered every request 503 until something else
reconnected). A cluster is reached by its URL (`redis+cluster://`). When that storage cannot be built the
limit is counted in this process alone, and the log says so: each replica then allows the full rate. So it
is, request by request, while Redis is down or hung: a request that needs only Postgres (a memory search,
past tasks) is answered, not refused for want of its count, and one that needs Redis fails on its own with
its own message; the count goes back to Redis at the next request it answers.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

import redis
from limits import RateLimitItem, parse
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter

from core.api.problems import ApiProblem
from core.errors import ServiceUnavailable

log = logging.getLogger(__name__)

KEY_PREFIX = "api:ratelimit"  # beside the product's own keys in the same Redis


def limits_url(redis_url: str, *, cluster: bool) -> str:
    """The product's Redis URL in the form `limits` reads."""
    if redis_url.startswith("unix://"):
        return "redis+unix://" + redis_url.removeprefix("unix://")
    if cluster:
        return "redis+cluster://" + redis_url.split("://", 1)[1]
    return redis_url


class RateLimiter:
    """Built on first use (it needs the Redis URL, which may start the embedded server)."""

    def __init__(self, rate: str, redis_url: Callable[[], str], client: Callable[[], redis.Redis], *,
                 cluster: bool = False):
        self.item: RateLimitItem = parse(rate)
        self._redis_url = redis_url
        self._client = client
        self._cluster = cluster
        self._limiter: SlidingWindowCounterRateLimiter | None = None
        self._lock = threading.Lock()
        self._local = SlidingWindowCounterRateLimiter(MemoryStorage())  # while Redis does not answer
        self._counting_locally = False

    def _storage(self) -> Storage:
        try:
            url = limits_url(self._redis_url(), cluster=self._cluster)
            if self._cluster:
                return storage_from_string(url, key_prefix=KEY_PREFIX, socket_timeout=5)
            return storage_from_string(url, key_prefix=KEY_PREFIX, connection_pool=self._client().connection_pool)
        except Exception as e:  # noqa: BLE001 - any failure here means: count in this process
            log.warning("API rate limit counted per process, not shared by replicas: Redis storage for "
                        "`limits` unavailable (%s)", type(e).__name__)
            return MemoryStorage()

    @property
    def limiter(self) -> SlidingWindowCounterRateLimiter:
        if self._limiter is None:
            with self._lock:
                if self._limiter is None:
                    self._limiter = SlidingWindowCounterRateLimiter(self._storage())
        return self._limiter

    def _redis_fails(self, e: Exception) -> None:
        if not self._counting_locally:
            self._counting_locally = True
            log.warning("API rate limit counted in this process while Redis does not answer (%s)", type(e).__name__)

    def _redis_answers(self) -> None:
        if self._counting_locally:
            self._counting_locally = False
            log.warning("API rate limit counted in Redis again")

    def hit(self, who: str, shown_as: str) -> None:
        """Count one request of `who`; ApiProblem 429 with Retry-After when over the rate."""
        limiter = self.limiter
        try:
            allowed = limiter.hit(self.item, who)
        except (redis.RedisError, ServiceUnavailable) as e:  # down or hung: see the module's docstring
            self._redis_fails(e)
            limiter, allowed = self._local, self._local.hit(self.item, who)
        else:
            self._redis_answers()
        if allowed:
            return
        reset = limiter.get_window_stats(self.item, who).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        period = self.item.GRANULARITY.name if self.item.multiples == 1 else \
            f"{self.item.multiples} {self.item.GRANULARITY.name}s"
        raise ApiProblem(429, "rate_limited",
                         f"{shown_as} sent more than {self.item.amount} requests per {period}; retry after "
                         f"{wait} s (the server's API_RATE_LIMIT setting)",
                         headers={"Retry-After": str(wait)})
