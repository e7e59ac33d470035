"""The string checks of WebArena, VWA and WebArena-Lite: the answer cleaning, the single-token rule,
``|OR|`` alternatives, inequalities. One rule for all three benchmarks; where they part, it is named here.

Cleaning (WebArena's ``clean_answer``): surrounding whitespace stripped, one pair of surrounding quotes
dropped, lowercased. VWA and VAB's copy of it do not strip; an answer's spaces never carry meaning, so
it is stripped for every task.

The single-token rule: a reference that is one word token must be one of the answer's tokens, so a
reference "0" does not match "10" or "2023". VWA (and VAB, which runs WebArena-Lite on VWA's code)
apply it to every single-token reference of ``must_include`` / ``must_exclude``; WebArena applied it
only to one-character references in a one-entry list, and took every other reference as a substring
("14" matched "114"). The wider rule is kept for every task: it is WebArena-Lite's, and it only
refuses answers that merely contain the reference inside a longer word. VAB's addition is kept too:
an answer token with '/' also offers its parts ("01/11" holds "01" and "11").

Tokens: VWA and WebArena tokenize with NLTK's ``word_tokenize``; NLTK is not a dependency here, so
``word_tokens`` follows the same Treebank conventions for what matters to answers: "$", "%",
brackets, quotes and sentence-final periods are their own tokens, commas and colons split words but
not numbers ("10,000", "3:30"), decimals and abbreviations ("1.99", "u.s.") stay whole, and English
contractions split ("don't" -> "do", "n't").
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
    """Stripped, one pair of surrounding quotes dropped, then lowercased (WebArena's ``clean_answer``)."""
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    return answer.lower()


def exact_match(ref: str, pred: str) -> bool:
    return clean(pred) == clean(ref)


def answer_tokens(text: str) -> list[str]:
    """``word_tokens`` of an answer, and the '/'-separated parts of each token that has a '/' (VAB's rule)."""
    tokens = word_tokens(text)
    return tokens + [part for token in tokens if "/" in token for part in token.split("/") if part]


def includes(ref: str, pred: str) -> bool:
    """``ref`` in ``pred``: as a whole token when ``ref`` is one token, else as a substring."""
    ref, pred = clean(ref), clean(pred)
    if len(word_tokens(ref)) == 1:
        return ref in answer_tokens(pred)
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
