"""A model's whole WebUI reply, turned into the files of a page folder.

MageBench's model answers in Markdown: each fenced code block is one file, named by the block's
label (``html`` -> index.html, ``css`` -> style.css, ``javascript`` -> script.js; a second block
of a label overrides the first, as a second ``write_html`` does). Its parser stops on any other
label (``js``, ``HTML``, none), and so does this one, with the reason in words, so the agent can
be told what was wrong and regenerate. The file names are fixed here: nothing in a reply can name
a path.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FILES", "LABELS", "MAX_REPLY_CHARS", "ReplyError", "parse_reply", "to_reply"]

LABELS: dict[str, str] = {"html": "index.html", "css": "style.css", "javascript": "script.js"}
FILES: tuple[str, ...] = tuple(LABELS.values())
MAX_REPLY_CHARS = 1_000_000  # a reply is written to disk: bound it

_FENCE = "```"


class ReplyError(ValueError):
    """A reply that yields no page; the message says why, in words meant for the model."""


def parse_reply(reply: str) -> dict[str, str]:
    """The files a reply writes (file name -> text); ReplyError when it has no block, a block with a
    label other than html, css or javascript, or an unclosed block."""
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is longer than {MAX_REPLY_CHARS} characters")
    parts = reply.split(_FENCE)
    if len(parts) < 3:
        raise ReplyError("the reply has no fenced code block; write the page as ```html, ```css and "
                         "```javascript blocks")
    if len(parts) % 2 == 0:
        raise ReplyError("the reply has an unclosed code block (an odd number of ``` fences)")
    files: dict[str, str] = {}
    for block in parts[1::2]:  # the odd parts are inside fences
        label, _, body = block.partition("\n")
        label = label.strip()
        if label not in LABELS:
            shown = repr(label) if label else "no label"
            raise ReplyError(f"a code block is labelled {shown}; label each block html, css or javascript "
                             f"(for index.html, style.css, script.js)")
        files[LABELS[label]] = body
    return files


def to_reply(files: Mapping[str, str]) -> str:
    """The reply that writes ``files`` (file name -> text): what a gold agent sends."""
    by_file = {name: label for label, name in LABELS.items()}
    blocks = []
    for name in FILES:
        if name in files:
            text = files[name]
            if _FENCE in text:
                raise ValueError(f"{name} contains ``` and cannot be sent as a fenced block")
            blocks.append(f"{_FENCE}{by_file[name]}\n{text if text.endswith(chr(10)) else text + chr(10)}{_FENCE}")
    unknown = set(files) - set(FILES)
    if unknown:
        raise ValueError(f"a reply writes only {', '.join(FILES)}, not {', '.join(sorted(unknown))}")
    return "\n\n".join(blocks)

