"""WebArena-format task JSON (VisualWebArena's, WebArena's, VisualAgentBench's WebArena-Lite), read
unchanged, checked, with site placeholders resolved.

The three benchmarks share one format: VWA's ``*.raw.json`` files, WebArena's 812-task
``test.raw.json``, WebArena-Lite's 165 tasks (with ``old_task_id``), and the one-task files
WebArena's ``generate_test_data.py`` writes from them (placeholders already replaced by real URLs).
A user who hosts the benchmark's own sites points the base URLs at them and runs the real task files;
our local sites are reached the same way. Every field those files carry is typed here; fields we do
not know are kept (the files carry annotation extras). What a task asks of the evaluators is checked
against what they can do, and anything they cannot (an unknown evaluator kind, an unknown ``func:``
helper, a malformed locator) is listed by ``VwaTask.problems`` with the task id: never skipped silently.
Shapes we read leniently (a bare string where a list belongs: WebArena-Lite task 81's
``must_include``) are read as their evident meaning and listed by ``VwaTask.notes``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from nodes.browser.vwa import webarena_lite
from nodes.browser.vwa.funcs import FuncSyntaxError, parse_func
from nodes.browser.vwa.registry import REGISTRY, HelperRegistry

AND = " |AND| "  # several start URLs, one tab each
OR = " |OR| "  # alternatives inside one reference
EVAL_TYPES = ("string_match", "url_match", "program_html", "page_image_query")
ANSWER_KINDS = ("exact_match", "must_include", "must_exclude", "one_of", "required_values", "fuzzy_match")
CONTENT_KINDS = ("exact_match", "must_include", "must_exclude", "required_values", "fuzzy_match")
URL_NOTES = ("EXACT", "GOLD in PRED")
LEVELS = ("easy", "medium", "hard")
LEVEL_TYPOS = {"hrad": "hard", "mediun": "medium"}  # present in VWA's released files
NOT_ACHIEVABLE = "N/A"
DEFAULT_SSIM_THRESHOLD = 0.8  # VWA's default; some tasks set 0.6
# __CLASSIFIEDS__ -> base_urls["classifieds"], __SHOPPING_ADMIN__ -> base_urls["shopping_admin"]
PLACEHOLDER = re.compile(r"__([A-Z][A-Z0-9_]*[A-Z0-9])__")
# every site the three benchmarks name; each is also the environment variable of its base URL (upper case)
SITES = ("classifieds", "shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "homepage")
SITE_PLACEHOLDERS = tuple(f"__{site.upper()}__" for site in SITES)
LIST_KINDS = ("must_include", "must_exclude", "one_of", "required_values")  # lists of strings
_INEQUALITY = re.compile(r"^\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*$")


class TaskFileError(ValueError):
    """A task file that cannot be read: the message names the file, the task id and the key."""

    def __init__(self, file: str | Path, task: str, key: str, message: str) -> None:
        self.file, self.task, self.key = str(file), task, key
        where = ": ".join(part for part in (str(file), task, key) if part)
        super().__init__(f"{where}: {message}")


def parse_inequality(text: str) -> tuple[str, float]:
    """``"< 700"`` -> ("<", 700.0); ValueError names the allowed operators."""
    match = _INEQUALITY.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not an inequality like '< 700' (operators: <=, >=, ==, <, >)")
    return match.group(1), float(match.group(2))


def normal_level(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip().lower()
    return LEVEL_TYPOS.get(value, value)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")

    def unknown_keys(self) -> list[str]:
        return sorted((self.model_extra or {}).keys())


def _as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class ReferenceAnswers(_Open):
    """String checks on the answer of the final ``stop``; unknown kinds stay in the extras, to be reported."""

    exact_match: str | None = None
    must_include: list[str] | None = None
    must_exclude: list[str] | None = None
    one_of: list[str] | None = None
    required_values: list[str] | None = None
    fuzzy_match: list[str] | Literal["N/A"] | None = Field(None, description="references, or 'N/A' (unachievable)")

    _text = field_validator("exact_match", mode="before")(_as_text)

    def kinds(self) -> list[str]:
        return [k for k in ANSWER_KINDS if getattr(self, k) is not None]


class RequiredContents(_Open):
    """The checks applied to what a ``program_html`` locator selected."""

    exact_match: str | None = None
    must_include: list[str] | None = None
    must_exclude: list[str] | None = None
    required_values: list[str] | None = None
    fuzzy_match: str | list[str] | None = None

    _text = field_validator("exact_match", mode="before")(_as_text)

    def kinds(self) -> list[str]:
        return [k for k in CONTENT_KINDS if getattr(self, k) is not None]


class HtmlTarget(_Open):
    url: str = Field(description="'last', a URL, or 'func:helper(...)'")
    locator: str = Field("", description="'' (page HTML), 'document....' JS, 'lambda:' JS, or 'func:helper(...)'")
    prep_actions: list[str] = Field(default_factory=list)
    required_contents: RequiredContents


class VqaCheck(_Open):
    question: str
    answer: str


class ImageQuery(_Open):
    eval_image_url: str = Field(description="'last', a URL, or 'func:helper(...)'")
    eval_image_class: str = Field("", description="CSS selector of the images (or their parents); '' = all")
    eval_vqa: list[VqaCheck] = Field(default_factory=list)
    eval_fuzzy_image_match: str | None = Field(None, description="reference image(s), ' |OR| '-separated")
    ssim_threshold: float | None = Field(None, ge=0, le=1)

    @property
    def threshold(self) -> float:
        return DEFAULT_SSIM_THRESHOLD if self.ssim_threshold is None else self.ssim_threshold


class EvalSpec(_Open):
    eval_types: list[str]
    reference_answers: ReferenceAnswers | None = None
    reference_url: str | None = None
    url_note: str | None = None
    program_html: list[HtmlTarget] = Field(default_factory=list)
    page_image_query: list[ImageQuery] = Field(default_factory=list)
    string_note: str | None = None


class Viewport(_Open):
    width: int = Field(gt=0)
    height: int | None = Field(None, gt=0)


class VwaTask(_Open):
    task_id: int
    sites: list[str] = Field(min_length=1)
    start_url: str
    intent: str
    intent_template: str | None = None
    intent_template_id: int | None = None
    instantiation_dict: dict[str, Any] | None = None
    image: str | list[str] | None = None
    require_reset: bool = False
    require_login: bool = False
    storage_state: str | None = None
    viewport_size: Viewport | None = None
    geolocation: dict[str, Any] | None = None
    eval: EvalSpec
    reasoning_difficulty: str | None = None
    visual_difficulty: str | None = None
    overall_difficulty: str | None = None
    comments: str | None = None

    _source: str = PrivateAttr("")
    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def source(self) -> str:
        """The file this task was read from ("" when built in code)."""
        return self._source

    @property
    def notes(self) -> list[str]:
        """What was read leniently, one line each (a bare string read as a one-item list)."""
        return list(self._notes)

    @property
    def origin(self) -> Literal["visualwebarena", "webarena-lite", "webarena"]:
        """Which benchmark's file the task comes from, by the fields each one has: WebArena-Lite's
        tasks carry ``old_task_id``, VWA's carry difficulty labels and input images."""
        extras = self.model_extra or {}
        if "old_task_id" in extras:
            return "webarena-lite"
        if self.overall_difficulty is not None or self.reasoning_difficulty is not None or self.image is not None \
                or "classifieds" in self.sites:
            return "visualwebarena"
        return "webarena"

    @property
    def start_urls(self) -> list[str]:
        """One URL per tab to open, in order."""
        return [u.strip() for u in self.start_url.split(AND) if u.strip()]

    @property
    def images(self) -> list[str]:
        if self.image is None:
            return []
        return [i for i in ([self.image] if isinstance(self.image, str) else self.image) if i.strip()]

    @property
    def unachievable(self) -> bool:
        answers = self.eval.reference_answers
        return answers is not None and answers.fuzzy_match == NOT_ACHIEVABLE

    def difficulty(self, axis: Literal["reasoning", "visual", "overall"]) -> str | None:
        return normal_level(getattr(self, f"{axis}_difficulty"))

    @property
    def needs_page(self) -> bool:
        """program_html and page_image_query read the live page; string and URL checks do not."""
        return any(t in ("program_html", "page_image_query") for t in self.eval.eval_types)

    def problems(self, helpers: HelperRegistry | Iterable[str] = REGISTRY) -> list[str]:
        """What the evaluators cannot run for this task, one line each (empty: it can run)."""
        known = set(helpers)
        out: list[str] = []
        ev = self.eval
        if not ev.eval_types:
            out.append("eval.eval_types: empty (nothing would be checked)")
        for kind in ev.eval_types:
            if kind not in EVAL_TYPES:
                out.append(f"eval.eval_types: unknown evaluator {kind!r} (known: {', '.join(EVAL_TYPES)})")
        if "string_match" in ev.eval_types:
            answers = ev.reference_answers
            if answers is None or not answers.kinds() and not answers.unknown_keys():
                out.append("eval.reference_answers: string_match needs at least one check")
            for key in answers.unknown_keys() if answers else []:
                out.append(f"eval.reference_answers: unknown string check {key!r} (known: {', '.join(ANSWER_KINDS)})")
            for i, v in enumerate(answers.required_values or [] if answers else []):
                out += _inequality_problems(f"eval.reference_answers.required_values.{i}", v)
            if answers is not None and answers.fuzzy_match == NOT_ACHIEVABLE and not (ev.string_note or "").strip():
                out.append("eval.string_note: fuzzy_match 'N/A' needs the reason the task cannot be done in "
                           "string_note (an answer other than 'N/A' is graded against it)")
        if "url_match" in ev.eval_types:
            if not ev.reference_url:
                out.append("eval.reference_url: url_match needs a reference URL")
            if ev.url_note is not None and ev.url_note not in URL_NOTES:
                out.append(f"eval.url_note: unknown URL rule {ev.url_note!r} (known: {', '.join(URL_NOTES)})")
        if "program_html" in ev.eval_types:
            if not ev.program_html:
                out.append("eval.program_html: program_html needs at least one target")
            for i, target in enumerate(ev.program_html):
                out += _target_problems(f"eval.program_html.{i}", target, known)
        if "page_image_query" in ev.eval_types:
            if not ev.page_image_query:
                out.append("eval.page_image_query: page_image_query needs at least one query")
            for i, query in enumerate(ev.page_image_query):
                key = f"eval.page_image_query.{i}"
                out += _url_problems(f"{key}.eval_image_url", query.eval_image_url, known)
                if not query.eval_vqa and not query.eval_fuzzy_image_match:
                    out.append(f"{key}: needs eval_vqa questions or eval_fuzzy_image_match references")
                for extra in query.unknown_keys():
                    out.append(f"{key}: unknown image check {extra!r}")
        return out


def _inequality_problems(key: str, value: str) -> list[str]:
    out = []
    for alt in value.split(OR):
        try:
            parse_inequality(alt)
        except ValueError as e:
            out.append(f"{key}: {e}")
    return out


def _func_problems(key: str, text: str, known: set[str]) -> list[str]:
    try:
        call = parse_func(text)
    except FuncSyntaxError as e:
        return [f"{key}: {e}"]
    if call.name not in known:
        return [f"{key}: unknown func: helper {call.name!r} (known: {', '.join(sorted(known)) or 'none'})"]
    return []


def _url_problems(key: str, url: str, known: set[str]) -> list[str]:
    if url.startswith("func:"):
        return _func_problems(key, url, known)
    if url != "last" and not re.match(r"^(https?://|__[A-Z][A-Z0-9_]*__)", url):  # a placeholder resolves later
        return [f"{key}: {url!r} is not 'last', an http(s) URL, a __SITE__ URL or func:helper(...)"]
    return []


def _target_problems(key: str, target: HtmlTarget, known: set[str]) -> list[str]:
    out = _url_problems(f"{key}.url", target.url, known)
    loc = target.locator.strip()
    if loc.startswith("func:"):
        out += _func_problems(f"{key}.locator", loc, known)
    elif loc and not loc.startswith(("document.", "[...document.", "lambda:")):
        out.append(f"{key}.locator: unknown locator form {loc[:60]!r} "
                   "(allowed: '', 'document....', '[...document....', 'lambda:...', 'func:helper(...)')")
    contents = target.required_contents
    if not contents.kinds() and not contents.unknown_keys():
        out.append(f"{key}.required_contents: empty (nothing would be checked)")
    for extra in contents.unknown_keys():
        out.append(f"{key}.required_contents: unknown check {extra!r} (known: {', '.join(CONTENT_KINDS)})")
    for i, v in enumerate(contents.required_values or []):
        out += _inequality_problems(f"{key}.required_contents.required_values.{i}", v)
    return out


# ---- reading files ---------------------------------------------------------------------------

def resolve_placeholders(value: Any, base_urls: Mapping[str, str], where: tuple[str, str, str] = ("", "", ""),
                         strict: bool = True) -> Any:
    """Every ``__SITE__`` in every string replaced by ``base_urls["site"]`` (trailing '/' dropped).

    ``strict``: a placeholder with no base URL is an error; otherwise it is left for the evaluator,
    which refuses to compare a URL that still holds one."""
    file, task, key = where
    if isinstance(value, str):
        def swap(match: re.Match[str]) -> str:
            site = match.group(1).lower()
            if site not in base_urls:
                if not strict:
                    return match.group(0)
                raise TaskFileError(file, task, key, f"no base URL for {match.group(0)} "
                                    f"(given: {', '.join(sorted(base_urls)) or 'none'})")
            return base_urls[site].rstrip("/")
        return PLACEHOLDER.sub(swap, value)
    if isinstance(value, list):
        return [resolve_placeholders(v, base_urls, (file, task, f"{key}.{i}" if key else str(i)), strict)
                for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: resolve_placeholders(v, base_urls, (file, task, f"{key}.{k}" if key else k), strict)
                for k, v in value.items()}
    return value


def _task_label(raw: Any, index: int | None) -> str:
    if isinstance(raw, dict) and "task_id" in raw:
        return f"task {raw['task_id']}"
    return "task" + (f" #{index}" if index is not None else "") + " (no task_id)"


def parse_task(raw: Any, file: str | Path = "<task>", index: int | None = None,
               base_urls: Mapping[str, str] | None = None, strict: bool = True) -> VwaTask:
    """One raw task object -> VwaTask; TaskFileError names the file, task and key on bad input.

    With ``base_urls``, placeholders are resolved (see ``resolve_placeholders`` for ``strict``)."""
    label = _task_label(raw, index)
    if not isinstance(raw, dict):
        raise TaskFileError(file, label, "", f"a task must be a JSON object, got {type(raw).__name__}")
    raw, notes = _lists_from_strings(raw)
    if base_urls is not None:
        raw = resolve_placeholders(raw, {k.lower(): v for k, v in base_urls.items()}, (str(file), label, ""), strict)
    try:
        task = VwaTask.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise TaskFileError(file, label, key, f"{first['msg']}{more}") from None
    task._source = str(file)
    task._notes = notes
    return task


def _lists_from_strings(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A bare string where a list of strings belongs (WebArena-Lite task 81: ``"must_include": "yjlou"``)
    becomes the one-item list it evidently means; each such reading is noted. VAB's own evaluator
    asserts a list there and so never scores that task."""
    ev = raw.get("eval")
    if not isinstance(ev, dict):
        return raw, []
    notes: list[str] = []

    def fix(checks: Any, key: str) -> Any:
        if not isinstance(checks, dict):
            return checks
        out = dict(checks)
        for kind in LIST_KINDS:
            if isinstance(out.get(kind), str):
                notes.append(f"{key}.{kind}: a string where a list belongs, read as the one-item list "
                             f"[{out[kind][:60]!r}]")
                out[kind] = [out[kind]]
        return out

    ev = dict(ev)
    if "reference_answers" in ev:
        ev["reference_answers"] = fix(ev["reference_answers"], "eval.reference_answers")
    if isinstance(ev.get("program_html"), list):
        ev["program_html"] = [{**t, "required_contents": fix(t.get("required_contents"),
                                                             f"eval.program_html.{i}.required_contents")}
                              if isinstance(t, dict) and "required_contents" in t else t
                              for i, t in enumerate(ev["program_html"])]
    return ({**raw, "eval": ev}, notes) if notes else (raw, [])


def load_task_file(path: str | Path, base_urls: Mapping[str, str] | None = None,
                   strict: bool = True) -> list[VwaTask]:
    """A VWA task file: one task object, or a list of them (the ``*.raw.json`` files). The name
    ``webarena-lite`` stands for WebArena-Lite's file in the installed wheel (``webarena_lite.py``)."""
    try:
        path = webarena_lite.resolve(path)
    except webarena_lite.TaskFileMissing as e:
        raise TaskFileError(path, "", "", str(e)) from None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise TaskFileError(path, "", "", f"cannot read: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TaskFileError(path, f"line {e.lineno} column {e.colno}", "", f"not JSON: {e.msg}") from None
    if isinstance(data, list):
        tasks = [parse_task(item, path, i, base_urls, strict) for i, item in enumerate(data)]
    else:
        tasks = [parse_task(data, path, None, base_urls, strict)]
    _no_duplicates(tasks)
    return tasks


def load_task_files(paths: Iterable[str | Path], base_urls: Mapping[str, str] | None = None) -> list[VwaTask]:
    """Several files, in order. Ids are unique within a file; VWA's site files each count from 0."""
    return [t for p in paths for t in load_task_file(p, base_urls)]


def _no_duplicates(tasks: list[VwaTask]) -> None:
    seen: set[int] = set()
    for task in tasks:
        if task.task_id in seen:
            raise TaskFileError(task.source, f"task {task.task_id}", "task_id", "duplicate task id in this file")
        seen.add(task.task_id)
