"""Every error framebus raises on purpose derives from :class:`FramebusError`, so a script can tell
"framebus refused or failed this" from a bug in its own code with one ``except``."""

from __future__ import annotations


class FramebusError(Exception):
    """Base of the errors framebus raises on purpose (launch files, requests, the protocol)."""


class RequestTimeout(FramebusError, TimeoutError):
    """No reply came within the request's timeout."""


class RemoteError(FramebusError, RuntimeError):
    """The service raised, or does not exist; the message says which node and why.

    ``remote_type`` is the class name of what the service raised (``"KeyError"``), so a caller can
    tell one failure from another without parsing the message; None where the node never got to
    run the service (it restarted, or cannot be reached)."""

    def __init__(self, message: str, remote_type: str | None = None) -> None:
        super().__init__(message)
        self.remote_type = remote_type


class EpisodeAbandoned(BaseException):
    """The episode being played went back to the kernel's deck (a node it needed died), so what
    the environment plays from here on is no result. Raised inside ``run`` by ``clock.actions``
    and ``publish``; the runtime then calls ``run`` again, which asks for the next episode (the
    returned one is dealt again once the graph is whole). A BaseException, like CancelledError,
    so that an ``except Exception`` in an environment's loop does not play on regardless; for
    the same reason it is not a FramebusError."""
