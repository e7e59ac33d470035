"""Which values of a launch file are secrets, and the resolved file with them redacted.

A run writes its resolved launch file into the run folder (``launch.yaml``) and into its recording,
where whoever reads the folder would read it: the console's token (anyone holding it steers the run),
an API key in a node's ``env:``. A secret is written as :data:`REDACTED` instead; the node still gets
the real value, from the kernel at start, never from that file.

A value is secret when the node's ``Params`` model declares the field so (``Field(json_schema_extra=
{"secret": True})``, or a ``SecretStr``), or, for what has no model (``env:``, nested mappings, a
``cmd:`` node's params), when its key's name says so: ``token``, ``password``, ``secret``,
``api_key``, ``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, but not ``max_tokens`` or ``api_key_env``
(the last word decides).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, SecretBytes, SecretStr

REDACTED = "<redacted>"
"""What a secret is written as. Loading a file that holds it is refused (:func:`redacted_at`)."""

_LAST_WORDS = frozenset({"token", "secret", "password", "passwd", "passphrase", "credentials", "authorization",
                         "cookie"})
_LAST_PAIRS = frozenset({("api", "key"), ("secret", "key"), ("private", "key"), ("access", "key"),
                         ("auth", "key")})
_WORD = re.compile(r"[a-z0-9]+")


def secret_name(name: str) -> bool:
    """Whether a key named ``name`` holds a secret, by its last word (``OPENAI_API_KEY``: yes;
    ``api_key_env``, which names a variable, and ``max_tokens``: no)."""
    words = _WORD.findall(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    if not words:
        return False
    return words[-1] in _LAST_WORDS or words[-1] == "apikey" or tuple(words[-2:]) in _LAST_PAIRS


def declared_secrets(model: type[BaseModel]) -> set[str]:
    """The fields of a ``Params`` model that are declared secret."""
    found = set()
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if (isinstance(extra, dict) and extra.get("secret") is True) or info.annotation in (SecretStr, SecretBytes):
            found.add(name)
    return found


def redact(value: Any, declared: Collection[str] = ()) -> Any:
    """``value`` (a node's params or env) with every secret replaced by :data:`REDACTED`: the keys of
    ``declared`` at the top, and keys whose name says secret at any depth."""
    if isinstance(value, dict):
        return {k: REDACTED if (k in declared or (isinstance(k, str) and secret_name(k))) and v is not None
                else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def redacted_at(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The key path of the first :data:`REDACTED` in ``value``, or None: such a file came from a run
    folder, and starting a node with the placeholder for its key would fail later and less clearly."""
    if value == REDACTED:
        return path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        if (found := redacted_at(child, (*path, key))) is not None:
            return found
    return None
