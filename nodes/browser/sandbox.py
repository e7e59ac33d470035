"""Where the browser may go: only the configured site hosts, never files, never other schemes.

Enforced twice: ``goto`` is refused before Playwright sees it (so the agent gets a clear message),
and every request of the browser context goes through a route that aborts what is not allowed (so
links, redirects, forms, scripts and images cannot reach outside either). A host is ``host:port``
exactly: a site on 127.0.0.1:8001 does not open 127.0.0.1:8002.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["Sandbox", "netloc_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Schemes a page may use without a request leaving the browser (Playwright does not route them).
_INERT_SCHEMES = frozenset({"data", "blob", "about"})


def netloc_of(url: str) -> str | None:
    """``host:port`` of an http(s) URL (port made explicit, host lower-cased), None for others."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return f"{parts.hostname.lower()}:{port or _DEFAULT_PORTS[parts.scheme]}"


class Sandbox:
    """The set of allowed ``host:port``; ``refusal(url)`` says why a URL is refused (None: allowed)."""

    def __init__(self, urls_or_hosts: Iterable[str]) -> None:
        self.allowed: set[str] = set()
        for item in urls_or_hosts:
            self.allow(item)

    def allow(self, url_or_host: str) -> None:
        """Allow a site: a base URL (``http://127.0.0.1:9980/``) or a bare ``host:port``."""
        item = url_or_host.strip()
        if not item or item == "about:blank":
            return
        netloc = netloc_of(item if "://" in item else f"http://{item}")
        if netloc is None:
            raise ValueError(f"{url_or_host!r} is neither an http(s) URL nor host:port")
        self.allowed.add(netloc)

    def refusal(self, url: str, *, navigation: bool = True) -> str | None:
        """Why the browser must not load ``url``, or None when it may. ``navigation``: a URL the
        agent asked to open (``about:blank`` is allowed, ``data:``/``blob:`` are not: a data URL
        is a page of the agent's own making)."""
        scheme = urlsplit(url.strip()).scheme.lower()
        if url.strip() == "about:blank":
            return None
        if scheme in _INERT_SCHEMES and not navigation:
            return None
        if scheme == "file":
            return "file:// URLs are refused: this browser opens only the configured web sites"
        if scheme not in _DEFAULT_PORTS:
            return f"{scheme or 'scheme-less'} URLs are refused: this browser opens only http(s) URLs of its sites"
        netloc = netloc_of(url)
        if netloc is None:
            return f"{url[:120]!r} is not a valid URL"
        if netloc not in self.allowed:
            return (f"{netloc} is outside the sites this browser may visit "
                    f"({', '.join(sorted(self.allowed)) or 'none configured'})")
        return None
