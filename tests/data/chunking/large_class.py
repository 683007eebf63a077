"""An in-memory cache backend, thread-safe and process-local."""

import pickle
import threading
from collections import OrderedDict

DEFAULT_TIMEOUT = object()


@register("locmem")
class LocMemCache(BaseCache):
    """A cache that lives in this process's memory.

    Each process has its own private cache, so it is not suitable for production
    deployments that run several worker processes.
    """

    pickle_protocol = pickle.HIGHEST_PROTOCOL
    _caches = {}

    def __init__(self, name, params):
        super().__init__(params)
        self._cache = self._caches.setdefault(name, OrderedDict())
        self._lock = threading.Lock()

    class Entry:
        """One cached value and its expiry time."""

        __slots__ = ("value", "expires")

        def __init__(self, value, expires):
            self.value = value
            self.expires = expires

        def is_expired(self, now):
            """Tell whether this entry has expired at time `now`.

            An entry that has expired is not returned by get(); it is removed the next
            time the cache is culled or the key is written again. Expiry times are
            absolute, in seconds since the epoch, as returned by time.time(); None
            means that the entry never expires. Entries are compared by identity.
            An entry that has expired is not returned by get(); it is removed the next
            time the cache is culled or the key is written again. Expiry times are
            absolute, in seconds since the epoch, as returned by time.time(); None
            means that the entry never expires. Entries are compared by identity.
            An entry that has expired is not returned by get(); it is removed the next
            time the cache is culled or the key is written again. Expiry times are
            absolute, in seconds since the epoch, as returned by time.time(); None
            means that the entry never expires. Entries are compared by identity.
            """
            return self.expires is not None and self.expires <= now

        async def renew(self, timeout):
            """Push the expiry time forward by `timeout` seconds.

            An entry that has expired is not returned by get(); it is removed the next
            time the cache is culled or the key is written again. Expiry times are
            absolute, in seconds since the epoch, as returned by time.time(); None
            means that the entry never expires. Entries are compared by identity.
            An entry that has expired is not returned by get(); it is removed the next
            time the cache is culled or the key is written again. Expiry times are
            absolute, in seconds since the epoch, as returned by time.time(); None
            means that the entry never expires. Entries are compared by identity.
            An entry that has expired is not returned by get(); it is removed the next
            time the cache is culled or the key is written again. Expiry times are
            absolute, in seconds since the epoch, as returned by time.time(); None
            means that the entry never expires. Entries are compared by identity.
            """
            self.expires = time.time() + timeout

    def get(self, key, value=None, timeout=DEFAULT_TIMEOUT, version=None):
        """Fetch a value, or the default when it is missing or expired."""
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return value
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    def set_many(self, key, value=None, timeout=DEFAULT_TIMEOUT, version=None):
        """Set several values at once; return the keys that failed."""
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return value
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    def delete(self, key, value=None, timeout=DEFAULT_TIMEOUT, version=None):
        """Delete a key and report whether it existed."""
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return value
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    # keys longer than this are rejected by validate_key
    max_key_length = 250

    def touch(self, key, value=None, timeout=DEFAULT_TIMEOUT, version=None):
        """Reset a key's expiry without changing its value."""
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return value
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    def incr(self, key, value=None, timeout=DEFAULT_TIMEOUT, version=None):
        """Add delta to a number stored in the cache."""
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return value
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    def clear(self, key, value=None, timeout=DEFAULT_TIMEOUT, version=None):
        """Remove every entry from the cache."""
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return value
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    def cull(self):
        """Drop a fraction of the entries when the cache is full."""
        self._cache.popitem(last=True)  # evict entry 0 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 1 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 2 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 3 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 4 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 5 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 6 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 7 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 8 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 9 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 10 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 11 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 12 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 13 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 14 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 15 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 16 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 17 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 18 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 19 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 20 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 21 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 22 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 23 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 24 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 25 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 26 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 27 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 28 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 29 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 30 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 31 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 32 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 33 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 34 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 35 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 36 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 37 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 38 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 39 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 40 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 41 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 42 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 43 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 44 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 45 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 46 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 47 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 48 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 49 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 50 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 51 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 52 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 53 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 54 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 55 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 56 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 57 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 58 of the oldest batch
        self._cache.popitem(last=True)  # evict entry 59 of the oldest batch

    timeout_attr = "default_timeout"


def new_cache(name):
    return LocMemCache(name, {})
