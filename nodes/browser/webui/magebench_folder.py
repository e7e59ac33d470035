"""MageBench's own WebUI task folders (``resources/WebUI/<name>/``), read as they are.

::

    <name>/
      index.html           the annotated ground truth, with the CSS/JS/pictures it loads
      tasks.md             the description (Markdown; pictures as ![..](./_images/x.png))
      tasks_content.json   ignored (see below)
      _images/*.png        the screenshots the description shows
      actions.py           the interactions: Selenium functions, listed in ``actions = [f1, f2, ...]``

``actions.py`` is never imported or run: MageBench's evaluator executes it, but a task folder a
user points us at is data, and running its code would hand it the machine. It is parsed with
``ast`` and each listed function is translated, statement by statement, to the steps of
``steps.Step`` (one interaction per function, in the list's order):

* ``el = driver.find_element(By.CSS_SELECTOR, "sel")`` binds ``el`` to a selector (``By.ID``,
  ``By.CLASS_NAME``, ``By.NAME``, ``By.TAG_NAME`` become the CSS selector that finds the same
  element; ``By.XPATH`` and the link-text kinds have none and are refused);
* ``el.click()`` or ``driver.find_element(...).click()`` is a click; ``el.send_keys("text")``
  types, ``el.send_keys(Keys.ENTER)`` presses (several arguments: one step each);
* ``ActionChains(driver).move_to_element(el).perform()`` (the chain may live in a variable, and
  may ``.click()`` after moving) is a hover;
* ``time.sleep(s)`` is a wait of ``s`` seconds, capped at ``MAX_WAIT_MS``;
* a docstring or ``pass`` is nothing.

Anything else (a loop over ``find_elements``, ``execute_script``, a drag, an ``if``) is refused
with a TaskError naming the file, the line, the statement and what is allowed, so a task is
either played as MageBench plays it or not at all, never half.

``tasks_content.json`` is, in MageBench's released folders, the same description as ``tasks.md``
encoded as chat-message parts (``{"type": "text"}`` and ``{"type": "image_url"}`` with the
screenshots inlined as data URLs); ``tasks.md`` and ``_images/`` carry the same content in the
form the environment already reads, so the JSON is not read at all and its layout is not
required.

MageBench's annotations name properties the metric does not score (``line-height`` in its own
pages) or filter by properties that have no filter: its evaluator skips those silently, and so do
we for these folders (``check_annotations(strict=False)``); refusing them, as we do for our own
task folders, would refuse MageBench's tasks.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from nodes.browser.webui.steps import MAX_WAIT_MS, Click, Hover, Press, Step, TaskError, TypeText, Wait

__all__ = ["ACTIONS_FILE", "DESCRIPTION_FILE", "css_selector", "is_magebench_folder", "load_actions"]

ACTIONS_FILE = "actions.py"
DESCRIPTION_FILE = "tasks.md"
ALLOWED = ("el = driver.find_element(By.CSS_SELECTOR|ID|CLASS_NAME|NAME|TAG_NAME, '...'); el.click(); "
           "el.send_keys('text' or Keys.ENTER ...); driver.find_element(...).click(); "
           "ActionChains(driver).move_to_element(el)[.click()].perform(); time.sleep(seconds); a docstring; pass")
# Selenium's Keys names -> the key names Playwright presses
KEYS = {"ENTER": "Enter", "RETURN": "Enter", "TAB": "Tab", "ESCAPE": "Escape", "SPACE": "Space",
        "BACKSPACE": "Backspace", "BACK_SPACE": "Backspace", "DELETE": "Delete", "HOME": "Home", "END": "End",
        "PAGE_UP": "PageUp", "PAGE_DOWN": "PageDown", "UP": "ArrowUp", "ARROW_UP": "ArrowUp", "DOWN": "ArrowDown",
        "ARROW_DOWN": "ArrowDown", "LEFT": "ArrowLeft", "ARROW_LEFT": "ArrowLeft", "RIGHT": "ArrowRight",
        "ARROW_RIGHT": "ArrowRight"}
# By.<name> and its string value (Selenium 4 accepts both)
_BY = {"CSS_SELECTOR": "css", "css selector": "css", "ID": "id", "id": "id", "CLASS_NAME": "class",
       "class name": "class", "NAME": "name", "name": "name", "TAG_NAME": "tag", "tag name": "tag"}
_IDENT = re.compile(r"-?[A-Za-z_][\w-]*")


def is_magebench_folder(root: Path) -> bool:
    """A folder in MageBench's layout: an ``actions.py`` and no ``steps.json`` of ours."""
    return (root / ACTIONS_FILE).is_file() and not (root / "steps.json").exists()


def css_selector(by: str, value: str) -> str | None:
    """The CSS selector finding what Selenium's ``find_element(by, value)`` finds, or None when there
    is none (XPath, link text, a class name with a space, which Selenium itself refuses)."""
    kind = _BY.get(by)
    if kind == "css":
        return value
    if kind == "id":
        return f"#{value}" if _IDENT.fullmatch(value) else f'[id="{_quoted(value)}"]'
    if kind == "class":
        return f".{value}" if _IDENT.fullmatch(value) else None
    if kind == "name":
        return f'[name="{_quoted(value)}"]'
    if kind == "tag":
        return value if re.fullmatch(r"[A-Za-z][\w-]*", value) else None
    return None


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


class _Refused(Exception):
    """A statement that cannot be translated; carries why (the caller adds file, line, statement)."""


class _Function:
    """Translates one listed function's body; ``driver`` is its first parameter's name."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.driver = fn.args.args[0].arg if fn.args.args else "driver"
        self.elements: dict[str, str] = {}  # variable -> selector
        self.chains: set[str] = set()  # variables holding ActionChains(driver)
        self.steps: list[Step] = []

    def _is_driver(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == self.driver

    def selector(self, node: ast.expr) -> str:
        """The selector an element expression stands for: a bound variable or a find_element call."""
        if isinstance(node, ast.Name) and node.id in self.elements:
            return self.elements[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and self._is_driver(node.func.value):
            method, args = node.func.attr, node.args
            if node.keywords:
                raise _Refused("find_element takes its two arguments by position here")
            if method == "find_element" and len(args) == 2:
                by = (args[0].attr if isinstance(args[0], ast.Attribute) and isinstance(args[0].value, ast.Name)
                      and args[0].value.id == "By" else _constant(args[0]))
                value = _constant(args[1])
            elif method.startswith("find_element_by_") and len(args) == 1:  # Selenium 3's spelling
                by, value = method.removeprefix("find_element_by_").upper(), _constant(args[0])
            else:
                raise _Refused(f"{method}() does not name one element")
            if not isinstance(by, str) or not isinstance(value, str):
                raise _Refused("the locator and its value must be written out (By.X and a string)")
            selector = css_selector(by, value)
            if selector is None:
                raise _Refused(f"{by} {value!r} has no CSS selector equivalent (XPath and link text are refused)")
            return selector
        raise _Refused("this is not an element found by driver.find_element or a variable bound to one")

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                                          and isinstance(stmt.value.value, str)):
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if _is_call(value, "ActionChains") and len(value.args) == 1 and self._is_driver(value.args[0]):
                self.chains.add(name)
            else:
                self.elements[name] = self.selector(value)
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self.call(stmt.value)
            return
        raise _Refused("this kind of statement is not translated")

    def call(self, call: ast.Call) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            raise _Refused("a bare function call is not translated")
        if func.attr == "sleep" and isinstance(func.value, ast.Name) and func.value.id == "time":
            seconds = _constant(call.args[0]) if len(call.args) == 1 else None
            if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not math.isfinite(seconds) \
                    or seconds < 0:
                raise _Refused("time.sleep needs a number of seconds written out")
            self.steps.append(Wait(wait=min(round(seconds * 1000), MAX_WAIT_MS)))
        elif func.attr == "perform" and not call.args:
            self.chain(func.value)
        elif func.attr == "click" and not call.args:
            self.steps.append(Click(click=self.selector(func.value)))
        elif func.attr == "send_keys" and call.args:
            target = self.selector(func.value)
            for arg in call.args:
                if isinstance(text := _constant(arg), str):
                    self.steps.append(TypeText(type=target, text=text))
                elif (isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "Keys"
                      and arg.attr in KEYS):
                    self.steps.append(Press(press=target, key=KEYS[arg.attr]))
                else:
                    raise _Refused(f"send_keys takes strings and Keys.{{{', '.join(sorted(KEYS))}}}")
        else:
            raise _Refused(f".{func.attr}() is not translated")

    def chain(self, node: ast.expr) -> None:
        """``<chain>.move_to_element(el)[.click()]...perform()``: hover (and click) in order."""
        links: list[ast.Call] = []
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            links.append(node)
            node = node.func.value
        if not (node is not None and ((isinstance(node, ast.Name) and node.id in self.chains)
                                      or (_is_call(node, "ActionChains") and len(node.args) == 1
                                          and self._is_driver(node.args[0])))):
            raise _Refused("perform() must end an ActionChains(driver) chain")
        last: str | None = None
        for link in reversed(links):
            assert isinstance(link.func, ast.Attribute)
            if link.func.attr == "move_to_element" and len(link.args) == 1:
                last = self.selector(link.args[0])
                self.steps.append(Hover(hover=last))
            elif link.func.attr == "click" and len(link.args) <= 1 and (link.args or last is not None):
                self.steps.append(Click(click=self.selector(link.args[0]) if link.args else str(last)))
            else:
                raise _Refused(f"ActionChains.{link.func.attr}() is not translated (move_to_element and click are)")


def _is_call(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _constant(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def load_actions(path: Path) -> tuple[list[list[Step]], list[str]]:
    """The interactions of a MageBench ``actions.py`` (one per function of its ``actions`` list) and
    the functions' names; TaskError naming the file, the line and the statement otherwise."""
    try:
        source = path.read_text(encoding="utf-8")
        module = ast.parse(source, filename=str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise TaskError(f"{path}: not readable ({err})") from None
    except SyntaxError as err:
        raise TaskError(f"{path}:{err.lineno}: not Python ({err.msg})") from None
    functions = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}
    listed = [node for node in module.body if isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "actions"]
    if not listed:
        raise TaskError(f"{path}: no module-level `actions = [f1, f2, ...]` list naming the interactions")
    assignment = listed[-1]
    if not isinstance(assignment.value, ast.List | ast.Tuple) or \
            not all(isinstance(e, ast.Name) for e in assignment.value.elts):
        raise TaskError(f"{path}:{assignment.lineno}: `actions` must be a list of function names")
    interactions: list[list[Step]] = []
    names: list[str] = []
    for element in assignment.value.elts:
        assert isinstance(element, ast.Name)
        fn = functions.get(element.id)
        if fn is None:
            raise TaskError(f"{path}:{assignment.lineno}: `actions` names {element.id!r}, which is not a function "
                            "defined at the top of the file")
        translator = _Function(fn)
        for stmt in fn.body:
            try:
                translator.statement(stmt)
            except _Refused as why:
                lines = (ast.get_source_segment(source, stmt) or ast.unparse(stmt)).strip().splitlines()
                text = lines[0] + (" ..." if len(lines) > 1 else "")
                raise TaskError(f"{path}:{stmt.lineno}: in {fn.name}(): `{text}`: {why}; "
                                f"allowed: {ALLOWED}") from None
        if not translator.steps:
            raise TaskError(f"{path}:{fn.lineno}: {fn.name}() does nothing that can be translated; allowed: {ALLOWED}")
        interactions.append(translator.steps)
        names.append(fn.name)
    return interactions, names
