"""A program-based solver for VAB-CSS instances (VAB's "program-based solvers" way of making
trajectories): it knows the corruption, so it writes the replies an ideal agent would send.

Every reply goes through the same Action line as a model's, so replaying the solver through
``CssTools`` and the renderer checks the whole path: the find_all lookup finds the rule, the rule
reads back, the edit restores the property (re-inserting a removed one) and the page scores as
fixed.
"""

from __future__ import annotations

from bs4 import BeautifulSoup

from nodes.browser.css.generate import Instance
from nodes.browser.css.tools import END_PHRASE, matchable_selector

__all__ = ["find_all_arguments", "solve"]


def find_all_arguments(html: str, selector: str) -> str:
    """``find_all`` arguments (as written in an action) that find an element the rule styles: its
    tag, narrowed by its id or first class."""
    soup = BeautifulSoup(html, "html.parser")
    found = soup.select(matchable_selector(selector))
    if not found:
        raise LookupError(f"no element of the page matches {selector!r}")
    el = found[0]
    args = [repr(el.name)]
    if el.get("id"):
        args.append(f"id={el['id']!r}")
    elif el.get("class"):
        args.append(f"class_={el['class'][0]!r}")
    return ", ".join(args)


def solve(instance: Instance, html: str) -> list[str]:
    """The replies that fix ``instance``, one action each, ending with VAB's end phrase."""
    sel, prop, value = instance.selector, instance.property, instance.original
    where = find_all_arguments(html, sel)
    what = "is missing" if instance.corrupted is None else f"is {instance.corrupted}"
    return [
        f"Thought: The difference is in the elements styled by {sel}; I look up their rules.\n"
        f"Action: get_selectors_by_html_elements({where})",
        f"Thought: {sel} is among the matched selectors; I read it.\nAction: select_rule({sel!r})",
        f"Thought: Its {prop} {what}; the target needs {value}.\nAction: edit_rule({sel!r}, {prop!r}, {value!r})",
        f"Thought: The page now looks like the target.\n{END_PHRASE}",
    ]
