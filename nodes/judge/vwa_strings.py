"""VWA's string checks: the answer cleaning, the single-token rule, ``|OR|`` alternatives, inequalities.

VWA compares lowercased strings and, when a reference is a single word token, asks for it as a whole
token of the answer, so a reference "0" does not match "10" or "2023". VWA tokenizes with NLTK's
``word_tokenize``; NLTK is not a dependency here, so ``word_tokens`` follows the same Treebank
conventions for what matters to answers: "$", "%", brackets, quotes and sentence-final periods are
their own tokens, commas and colons split words but not numbers ("10,000", "3:30"), decimals and
abbreviations ("1.99", "u.s.") stay whole, and English contractions split ("don't" -> "do", "n't").
"""

from __future__ import annotations

import re

from nodes.browser.vwa.tasks import OR, parse_inequality

_PAD = re.compile(r"([;@#$%&?!()\[\]{}<>\"`]|\.\.\.)")
_COMMA = re.compile(r"([,:])(?!\d)|(?<!\d)([,:])")
_CONTRACTION = re.compile(r"(?i)(?<=\w)(n't|'s|'re|'ve|'ll|'d|'m)\b")
_QUOTE_EDGE = re.compile(r"(^|\s)'|'(\s|$)")
_ABBREVIATION = re.compile(r"^(?:[a-z]\.)+[a-z]$", re.IGNORECASE)


def word_tokens(text: str) -> list[str]:
    """Treebank-style word tokens (see the module docstring for the rules kept from NLTK)."""
    text = _PAD.sub(r" \1 ", text)
    text = _COMMA.sub(lambda m: f" {m.group(1) or m.group(2)} ", text)
    text = _QUOTE_EDGE.sub(lambda m: f"{m.group(1) or ''} ' {m.group(2) or ''}", text)
    text = _CONTRACTION.sub(r" \1", text)
    tokens: list[str] = []
    for token in text.split():
        body = token[:-1]
        if token.endswith(".") and body and not body.endswith(".") and not _ABBREVIATION.match(body):
            tokens += [body, "."]
        else:
            tokens.append(token)
    return tokens


def clean(answer: str) -> str:
    """One pair of surrounding quotes dropped, then lowercased (VWA's ``clean_answer``)."""
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    return answer.lower()


def exact_match(ref: str, pred: str) -> bool:
    return clean(pred) == clean(ref)


def includes(ref: str, pred: str) -> bool:
    """``ref`` in ``pred``: as a whole token when ``ref`` is one token, else as a substring."""
    ref, pred = clean(ref), clean(pred)
    if len(word_tokens(ref)) == 1:
        return ref in word_tokens(pred)
    return ref in pred


def must_include(ref: str, pred: str) -> bool:
    """One ``must_include`` entry: any of its ``|OR|`` alternatives is included."""
    return any(includes(alt, pred) for alt in ref.split(OR))


def must_exclude(ref: str, pred: str) -> bool:
    """One ``must_exclude`` entry: none of its ``|OR|`` alternatives is included (the converse test)."""
    return not any(includes(alt, pred) for alt in ref.split(OR))


def one_of(refs: list[str], pred: str) -> bool:
    """Any listed value is a substring of the cleaned answer (no token rule, as in VWA)."""
    pred = clean(pred)
    return any(clean(ref) in pred for ref in refs)


def to_int(text: str) -> int | None:
    """An answer read as an integer, thousands commas allowed ("1,250" -> 1250); None if it is not one."""
    try:
        return int(text.strip().replace(",", ""))
    except ValueError:
        return None


def satisfies(value: float, inequality: str, tol: float = 1e-8) -> bool:
    """VWA's comparison, tolerance included: it widens every bound, so "< 700" holds at exactly 700."""
    op, bound = parse_inequality(inequality)
    return {"<=": value <= bound + tol, ">=": value >= bound - tol, "==": abs(value - bound) <= tol,
            "<": value < bound + tol, ">": value > bound - tol}[op]


def required_value(ref: str, value: float) -> bool:
    """One ``required_values`` entry: any of its ``|OR|`` inequalities holds for ``value``."""
    return any(satisfies(value, alt) for alt in ref.split(OR))
