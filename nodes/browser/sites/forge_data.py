"""The code forge's schema and seeded content: people, groups, projects with real git histories,
issues, merge requests, labels, milestones, members, stars and to-do items, all drawn from the seed.

The people, groups and project paths are the ones WebArena's GitLab tasks name (``byteblaze``,
``a11yproject/a11yproject.com``, ``primer/design`` ...), so the tasks' URL shapes lead somewhere; every
commit, file, issue and comment is generated here. Each project's repository is written commit by
commit through ``forge_git.Repos``: a few commits on the default branch by different authors, feature
branches for the merge requests (merged ones really merged, with a merge commit), files such as
README.md, src/..., CONTRIBUTING.md and a LICENSE in some."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from nodes.browser.sites import content
from nodes.browser.sites.forge_git import Repos

GUEST, REPORTER, DEVELOPER, MAINTAINER, OWNER = 10, 20, 30, 40, 50
ROLES = {GUEST: "Guest", REPORTER: "Reporter", DEVELOPER: "Developer", MAINTAINER: "Maintainer", OWNER: "Owner"}
ROLE_OF_NAME = {name.lower(): level for level, name in ROLES.items()}
VISIBILITIES = ("public", "internal", "private")
ME, MY_PASSWORD, MY_NAME = "byteblaze", "hello1234", "Byte Blaze"
#: the clock the site's own writes use (comments, new issues, commits): one minute per write from here
CLOCK_START = content.EPOCH
HISTORY_START = datetime(2022, 3, 1, 9, 0)

SCHEMA = """
CREATE TABLE users (username TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, bio TEXT NOT NULL,
    status TEXT NOT NULL, website TEXT NOT NULL, location TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE tokens (username TEXT PRIMARY KEY, private_token TEXT UNIQUE NOT NULL, feed_token TEXT UNIQUE NOT NULL);
CREATE TABLE forge_groups (path TEXT PRIMARY KEY COLLATE NOCASE, name TEXT NOT NULL, description TEXT NOT NULL,
    visibility TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE group_members (group_path TEXT NOT NULL COLLATE NOCASE, username TEXT NOT NULL, role INTEGER NOT NULL,
    PRIMARY KEY (group_path, username));
CREATE TABLE projects (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL COLLATE NOCASE, path TEXT NOT NULL COLLATE NOCASE,
    name TEXT NOT NULL, description TEXT NOT NULL, visibility TEXT NOT NULL, default_branch TEXT NOT NULL,
    base_stars INTEGER NOT NULL, forked_from INTEGER, created TEXT NOT NULL, last_activity TEXT NOT NULL,
    UNIQUE (namespace, path));
CREATE TABLE project_members (project_id INTEGER NOT NULL, username TEXT NOT NULL, role INTEGER NOT NULL,
    expires TEXT NOT NULL, PRIMARY KEY (project_id, username));
CREATE TABLE stars (username TEXT NOT NULL, project_id INTEGER NOT NULL, PRIMARY KEY (username, project_id));
CREATE TABLE follows (follower TEXT NOT NULL, followee TEXT NOT NULL, PRIMARY KEY (follower, followee));
CREATE TABLE labels (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, title TEXT NOT NULL, color TEXT NOT NULL,
    description TEXT NOT NULL, UNIQUE (project_id, title));
CREATE TABLE milestones (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, iid INTEGER NOT NULL, title TEXT NOT NULL,
    description TEXT NOT NULL, start_date TEXT NOT NULL, due_date TEXT NOT NULL, state TEXT NOT NULL,
    UNIQUE (project_id, iid));
CREATE TABLE issues (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, iid INTEGER NOT NULL, title TEXT NOT NULL,
    description TEXT NOT NULL, author TEXT NOT NULL, state TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL,
    closed TEXT, due_date TEXT NOT NULL, milestone_id INTEGER, UNIQUE (project_id, iid));
CREATE TABLE issue_labels (issue_id INTEGER NOT NULL, label_id INTEGER NOT NULL, PRIMARY KEY (issue_id, label_id));
CREATE TABLE issue_assignees (issue_id INTEGER NOT NULL, username TEXT NOT NULL, PRIMARY KEY (issue_id, username));
CREATE TABLE merge_requests (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, iid INTEGER NOT NULL,
    title TEXT NOT NULL, description TEXT NOT NULL, author TEXT NOT NULL, source_branch TEXT NOT NULL,
    target_branch TEXT NOT NULL, state TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL,
    merge_commit TEXT NOT NULL, merged_by TEXT NOT NULL, UNIQUE (project_id, iid));
CREATE TABLE mr_assignees (mr_id INTEGER NOT NULL, username TEXT NOT NULL, PRIMARY KEY (mr_id, username));
CREATE TABLE mr_reviewers (mr_id INTEGER NOT NULL, username TEXT NOT NULL, PRIMARY KEY (mr_id, username));
CREATE TABLE notes (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, target_type TEXT NOT NULL,
    target_id INTEGER NOT NULL, author TEXT NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL);
CREATE INDEX notes_target ON notes (target_type, target_id);
CREATE TABLE todos (id INTEGER PRIMARY KEY, username TEXT NOT NULL, project_id INTEGER NOT NULL,
    target_type TEXT NOT NULL, target_id INTEGER NOT NULL, action TEXT NOT NULL, author TEXT NOT NULL,
    state TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE clock (id INTEGER PRIMARY KEY CHECK (id = 1), now TEXT NOT NULL);
"""

# (username, full name, location): the usernames are those WebArena's GitLab tasks name
PEOPLE: tuple[tuple[str, str, str], ...] = (
    (ME, MY_NAME, "Pittsburgh"), ("yjlou", "Yi-Jie Lou", "Taipei"), ("vinta", "Vinta Chen", "Taipei"),
    ("lahwaacz", "Jakub Klinkovský", "Prague"), ("koush", "Koushik Dutta", "Seattle"),
    ("abisubramanya27", "Abishek Subramanya", "Chennai"), ("convexegg", "Convex Egg", "Boston"),
    ("Roshanjossey", "Roshan Jossy", "Kochi"), ("bblanchon", "Benoît Blanchon", "Lyon"),
    ("kilian", "Kilian Valkhof", "Nijmegen"), ("ericwbailey", "Eric Bailey", "Boston"),
    ("davepgreene", "Dave Greene", "Portland"), ("Seirdy", "Rohan Kumar", "Chicago"),
    ("shawnbot", "Shawn Allen", "San Francisco"), ("eriklindernoren", "Erik Linder-Norén", "Stockholm"),
    ("kkroening", "Karl Kroening", "Austin"), ("patou", "Patrick Oudin", "Paris"),
    ("westurner", "Wes Turner", "Chicago"), ("egpast", "Elena Pastor", "Madrid"),
    ("jontutcher", "Jon Tutcher", "Leeds"),
)

GROUPS: tuple[tuple[str, str, str], ...] = (
    ("a11yproject", "The A11Y Project", "A community effort to make digital accessibility easier."),
    ("primer", "Primer", "Design system and guidelines for building consistent interfaces."),
)
# group -> (owner, {member: role})
GROUP_MEMBERS: dict[str, tuple[str, dict[str, int]]] = {
    "a11yproject": ("ericwbailey", {"Roshanjossey": MAINTAINER, ME: DEVELOPER, "kilian": DEVELOPER, "Seirdy": REPORTER}),
    "primer": ("shawnbot", {ME: MAINTAINER, "davepgreene": DEVELOPER, "lahwaacz": GUEST}),
}


@dataclass(frozen=True)
class ProjectSpec:
    namespace: str
    path: str
    description: str
    kind: str  # which files and changes its history draws from (KINDS)
    visibility: str = "public"
    default_branch: str = "main"
    stars: int = 0  # the seeded star count is drawn around this
    license_file: str = "LICENSE"


PROJECTS: tuple[ProjectSpec, ...] = (
    ProjectSpec("a11yproject", "a11yproject.com", "The A11Y Project is a community-driven effort to make digital "
                "accessibility easier.", "web", stars=420),
    ProjectSpec("primer", "design", "Primer design guidelines: principles, components and patterns.", "list", stars=310),
    ProjectSpec(ME, "dotfiles", "My shell, editor and git settings.", "dotfiles", stars=3),
    ProjectSpec(ME, "gimmiethat.space", "A small site that collects pictures of space.", "web", stars=5),
    ProjectSpec(ME, "solarized-prism-theme", "A Solarized theme for the Prism syntax highlighter.", "theme", stars=18),
    ProjectSpec(ME, "a11y-webring.club", "A webring for personal sites that care about accessibility.", "web",
                stars=12),
    ProjectSpec(ME, "empathy-prompts", "Prompts for practising empathy in code review.", "list", visibility="private"),
    ProjectSpec(ME, "cloud-to-butt", "Chrome extension that replaces occurrences of 'the cloud' with 'my butt'",
                "extension", default_branch="master", stars=40, license_file="LICENSE.txt"),
    ProjectSpec("convexegg", "chatgpt", "A command-line client for ChatGPT.", "python", stars=95),
    ProjectSpec("kkroening", "ffmpeg-python", "Python bindings for FFmpeg, with complex filtering support.", "python",
                stars=880),
    ProjectSpec("eriklindernoren", "PyTorch-GAN", "PyTorch implementations of Generative Adversarial Networks.",
                "python", stars=1300),
    ProjectSpec("vinta", "awesome-python", "A curated list of awesome Python frameworks, libraries and software.",
                "list", stars=2100),
)

LABELS = (("bug", "#d9534f", "Something does not work"), ("enhancement", "#5cb85c", "A new feature or a better one"),
          ("documentation", "#428bca", "Docs and README"), ("question", "#cc338b", "Further information is requested"),
          ("help wanted", "#34495e", "Extra attention is needed"), ("good first issue", "#7f8c8d", "Good for newcomers"))

ISSUE_TITLES = {
    "web": ("404 for several pages linked from the website", "Broken link on the resources page",
            "Improve the contrast of links in the footer", "Add a skip-to-content link", "Dark mode for the site",
            "Images are missing alt text", "The navigation menu traps keyboard focus", "Better mobile layout for posts",
            "Outdated checklist item about captions", "Homepage content is hard to scan", "Add an RSS feed",
            "Page titles are not unique"),
    "list": ("Add a section about testing", "Dead link in the README", "Sort the entries alphabetically",
             "Better descriptions for each entry", "Add a table of contents", "Duplicate entry in the list",
             "Translate the guide to Spanish", "Clarify the contribution rules", "Remove archived projects",
             "Add guidance on colour tokens"),
    "dotfiles": ("Install script fails on macOS", "Add a tmux configuration", "Better prompt colours",
                 "Vim plugins load slowly", "Document the install steps", "Git aliases clash with oh-my-zsh"),
    "theme": ("Comments are hard to read in the light theme", "Add a dark mode variant", "Support line highlighting",
              "Colours of diff tokens are swapped", "Publish the theme on npm", "Better contrast for strings"),
    "extension": ("Does not replace text in iframes", "Add an options page", "Replacement breaks input fields",
                  "Port the extension to Firefox", "Better icon for high-DPI screens", "Count replacements per page"),
    "python": ("Crash when the input path has spaces", "Add type hints to the public API", "Support Python 3.12",
               "Better error message when the binary is missing", "Document the async interface",
               "Tests fail on Windows", "Connection refused when the proxy is set", "Add a --verbose flag",
               "Progress bar for long runs", "Memory grows on large inputs"),
}
MR_TITLES = ("Fix typo in README", "Update dependencies", "Add contributing guide", "Improve accessibility of forms",
             "Refactor the build script", "Add dark mode", "Fix broken links", "Add tests for the parser",
             "New landing page", "Speed up the start-up", "Add keyboard shortcuts", "Clean up old assets")
NOTES = ("Thanks for reporting this!", "I can reproduce it on the main branch.", "Could you share the steps?",
         "This should be fixed by the latest merge request.", "Any update on this one?", "Looks good to me.",
         "I would like to work on this.", "Closing as a duplicate.", "Nice catch, thank you.",
         "Can we add a test for it?", "Let's discuss this in the next meeting.", "Please rebase on main.")
WHERE = {"web": ("the home page", "the resources page", "the checklist page", "the footer", "the navigation menu"),
         "list": ("the README", "the table of contents", "the testing section", "the links list"),
         "dotfiles": ("install.sh", "the bash prompt", "the vim settings", "the git aliases"),
         "theme": ("the light theme", "the dark theme", "code blocks", "diff blocks"),
         "extension": ("the options page", "news sites", "input fields", "the toolbar icon"),
         "python": ("the command line", "the public API", "the test suite", "the docs")}
SECTIONS = {"FAQ": "Questions are welcome in the issue tracker; search the closed issues first.",
            "Roadmap": "Next: better documentation, fewer dependencies and a smaller build.",
            "Screenshots": "Screenshots of every page are in the docs folder.",
            "Usage": "Open the project in a browser or run the scripts under src/.",
            "Credits": "Thanks to everyone who sent a merge request or reported a bug.",
            "Changelog": "Every change is in the commit history."}
MILESTONES = ("v1.0", "v1.1", "Spring cleanup", "Redesign", "v2.0")
EXTERNAL_DOMAIN = "users.noreply.forge.local"


# ---- file contents --------------------------------------------------------------------------------

def _readme(spec: ProjectSpec, extra: str = "") -> bytes:
    title = spec.path
    body = (f"# {title}\n\n{spec.description}\n\n## Getting started\n\n"
            f"Clone the repository and read the files under `src/` (or open `index.html`).\n")
    return (body + extra).encode()


def _license(kind: str, year: int, holder: str) -> bytes:
    if kind == "MIT":
        return (f"MIT License\n\nCopyright (c) {year} {holder}\n\nPermission is hereby granted, free of charge, to any "
                "person obtaining a copy of this software and associated documentation files, to deal in the "
                "software without restriction, subject to the following condition: the above copyright notice "
                "shall be included in all copies or substantial portions of the software.\n\nTHE SOFTWARE IS "
                "PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND.\n").encode()
    if kind == "Apache-2.0":
        return (f"Apache License\nVersion 2.0, January 2004\n\nCopyright {year} {holder}\n\nLicensed under the Apache "
                "License, Version 2.0. You may not use this file except in compliance with the License.\n").encode()
    return (f"GNU General Public License, version 3\n\nCopyright (C) {year} {holder}\n\nThis program is free "
            "software: you can redistribute it and/or modify it under the terms of the GNU General Public License "
            "as published by the Free Software Foundation, version 3.\n").encode()


def _module(spec: ProjectSpec) -> str:
    return spec.path.lower().replace("-", "_").replace(".", "_")


def initial_files(spec: ProjectSpec, rng: random.Random) -> dict[str, bytes]:
    """The first commit's files for a project of ``spec.kind``."""
    files = {"README.md": _readme(spec)}
    mod = _module(spec)
    if spec.kind == "python":
        files[f"src/{mod}/__init__.py"] = f'"""{spec.description}"""\n\n__version__ = "0.1.0"\n'.encode()
        files[f"src/{mod}/core.py"] = ("def run(path: str) -> str:\n    \"\"\"Process one file.\"\"\"\n"
                                       "    return path.strip()\n").encode()
        files["pyproject.toml"] = f'[project]\nname = "{spec.path.lower()}"\nversion = "0.1.0"\n'.encode()
        files[".gitignore"] = b"__pycache__/\n*.egg-info/\n"
    elif spec.kind == "web":
        files["index.html"] = (f"<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                               f"<title>{spec.path}</title>\n<link rel=\"stylesheet\" href=\"css/style.css\">\n</head>\n"
                               f"<body>\n<h1>{spec.path}</h1>\n<p>{spec.description}</p>\n</body>\n</html>\n").encode()
        files["css/style.css"] = b"body {\n  font-family: sans-serif;\n  line-height: 1.5;\n}\n"
        files["src/main.js"] = b"document.documentElement.classList.add('js');\n"
    elif spec.kind == "list":
        files["README.md"] = _readme(spec, "\n## Contents\n\n- [Basics](docs/basics.md)\n")
        files["docs/basics.md"] = b"# Basics\n\nStart here.\n"
    elif spec.kind == "dotfiles":
        files[".bashrc"] = b"export EDITOR=vim\nalias ll='ls -alF'\n"
        files[".vimrc"] = b"set number\nset expandtab\nsyntax on\n"
        files[".gitconfig"] = b"[alias]\n    st = status\n    co = checkout\n"
        files["install.sh"] = b"#!/bin/sh\nfor f in .bashrc .vimrc .gitconfig; do ln -sf \"$PWD/$f\" \"$HOME/$f\"; done\n"
    elif spec.kind == "theme":
        files["prism-solarized-dark.css"] = b"code[class*=language-] { color: #839496; background: #002b36; }\n"
        files["prism-solarized-light.css"] = b"code[class*=language-] { color: #657b83; background: #fdf6e3; }\n"
        files["package.json"] = json.dumps({"name": spec.path, "version": "1.0.0"}, indent=2).encode() + b"\n"
    elif spec.kind == "extension":
        files["manifest.json"] = json.dumps({"manifest_version": 3, "name": spec.path, "version": "1.0",
                                             "description": spec.description}, indent=2).encode() + b"\n"
        files["src/content_script.js"] = (b"const swap = (text) => text.replace(/the cloud/gi, 'my butt');\n"
                                          b"document.querySelectorAll('p').forEach(p => { p.textContent = "
                                          b"swap(p.textContent); });\n")
    return files


# One later change: (files so far, rng, project) -> (changes, commit message), or None when it does not apply.
Change = Callable[[dict[str, bytes], random.Random, ProjectSpec], "tuple[dict[str, bytes | None], str] | None"]


def _readme_section(files: dict[str, bytes], rng: random.Random,
                    spec: ProjectSpec) -> tuple[dict[str, bytes | None], str] | None:
    section = rng.choice(sorted(SECTIONS))
    if f"## {section}".encode() in files["README.md"]:
        return None
    text = files["README.md"] + f"\n## {section}\n\n{SECTIONS[section]}\n".encode()
    return {"README.md": text}, f"Add {section} section to README"


def _contributing(files: dict[str, bytes], rng: random.Random, spec: ProjectSpec) -> tuple[dict[str, bytes | None], str] | None:
    if "CONTRIBUTING.md" in files:
        return None
    return ({"CONTRIBUTING.md": b"# Contributing\n\nOpen an issue first, then a merge request against the default "
             b"branch. Keep commits small and describe why.\n"}, "Add CONTRIBUTING.md")


def _typo(files: dict[str, bytes], rng: random.Random, spec: ProjectSpec) -> tuple[dict[str, bytes | None], str] | None:
    text = files["README.md"]
    if b"the repository" not in text:
        return None
    return {"README.md": text.replace(b"the repository", b"this repository", 1)}, "Fix typo in README"


def _source(files: dict[str, bytes], rng: random.Random, spec: ProjectSpec) -> tuple[dict[str, bytes | None], str]:
    code = sorted(p for p in files if p.endswith((".py", ".js", ".css", ".sh", ".html")) or p.startswith("."))
    path = rng.choice(code) if code else "notes.md"
    what = rng.choice(("Tidy up", "Fix an edge case in", "Refactor", "Simplify", "Document"))
    line = {".py": b"# ", ".js": b"// ", ".css": b"/* ", ".sh": b"# "}.get(path[path.rfind("."):], b"# ")
    tail = b" */" if path.endswith(".css") else b""
    stem = path.rsplit("/", 1)[-1]
    return ({path: files.get(path, b"") + line + f"{what.lower()} ({rng.randint(2, 99)})".encode() + tail + b"\n"},
            f"{what} {stem}")


def _new_file(files: dict[str, bytes], rng: random.Random, spec: ProjectSpec) -> tuple[dict[str, bytes | None], str] | None:
    name = rng.choice(("docs/setup.md", "docs/faq.md", "src/util.js", "scripts/release.sh", "docs/design.md"))
    if name in files:
        return None
    body = {"docs/setup.md": "# Setup\n\nClone the repository, then follow the README.\n",
            "docs/faq.md": "# FAQ\n\nAsk in the issue tracker.\n", "src/util.js": "export const noop = () => {};\n",
            "scripts/release.sh": "#!/bin/sh\ngit tag \"v$1\" && git push --tags\n",
            "docs/design.md": "# Design notes\n\nKeep it small and accessible.\n"}[name]
    return {name: body.encode()}, f"Add {name}"


LATER: tuple[Change, ...] = (_readme_section, _contributing, _typo, _source, _source, _new_file)


def issue_text(rng: random.Random, kind: str, title: str) -> str:
    where = rng.choice(WHERE[kind])
    return rng.choice((
        f"I noticed this on {where}.\n\nSteps to reproduce:\n\n1. Open {where}.\n2. Look closely.\n\n"
        f"Expected: it works as documented. Actual: {title[0].lower() + title[1:]}.",
        f"{title}. It affects {where} and shows up in version 1.{rng.randint(0, 9)}.",
        f"Proposal: {title[0].lower() + title[1:]}. This would make {where} easier to use.",
    ))


def mr_text(rng: random.Random, title: str) -> str:
    return rng.choice((f"This merge request does what the title says: {title[0].lower() + title[1:]}.",
                       f"{title}.\n\nI tested it locally; please review.",
                       f"Changes:\n\n- {title}\n- Small clean-ups on the way"))


# ---- seeding --------------------------------------------------------------------------------------

def stamp_of(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def epoch(moment: datetime) -> int:
    return int(moment.replace(tzinfo=timezone.utc).timestamp())


def token(seed: int, username: str, kind: str) -> str:
    """A fixed token per seed and user (no RNG draw, so adding a user never shifts the content)."""
    digest = hashlib.sha256(f"forge:{seed}:{username}:{kind}".encode()).hexdigest()
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
    text = "".join(alphabet[int(digest[i:i + 2], 16) % len(alphabet)] for i in range(0, 40, 2))
    return ("glpat-" if kind == "private" else "") + text


def email_of(username: str) -> str:
    return f"{username.lower()}@forge.local"


@dataclass
class Seeder:
    """Writes the seeded content into ``db`` and the repositories into ``repos``."""

    db: sqlite3.Connection
    repos: Repos
    rng: random.Random
    seed: int

    def build(self, size: int) -> None:
        db, rng = self.db, self.rng
        for username, name, place in PEOPLE:
            db.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (username, name, email_of(username), "", "", "", place, stamp_of(HISTORY_START)))
            db.execute("INSERT INTO tokens VALUES (?, ?, ?)",
                       (username, token(self.seed, username, "private"), token(self.seed, username, "feed")))
        for path, name, description in GROUPS:
            db.execute("INSERT INTO forge_groups VALUES (?, ?, ?, 'public', ?)",
                       (path, name, description, stamp_of(HISTORY_START)))
            owner, members = GROUP_MEMBERS[path]
            db.execute("INSERT INTO group_members VALUES (?, ?, ?)", (path, owner, OWNER))
            db.executemany("INSERT INTO group_members VALUES (?, ?, ?)", [(path, u, r) for u, r in members.items()])
        specs = list(PROJECTS[:size])
        while len(specs) < size:
            specs.append(self._extra_spec(len(specs)))
        for pid, spec in enumerate(specs, start=1):
            self._project(pid, spec)
        people = [p[0] for p in PEOPLE]
        for follower in people:
            for followee in rng.sample([p for p in people if p != follower], k=rng.randint(0, 3)):
                db.execute("INSERT INTO follows VALUES (?, ?)", (follower, followee))
        db.execute("INSERT INTO clock VALUES (1, ?)", (stamp_of(CLOCK_START),))

    def _extra_spec(self, n: int) -> ProjectSpec:
        owner = self.rng.choice([p[0] for p in PEOPLE])
        word = self.rng.choice(content.ADJECTIVES)
        kind = self.rng.choice(tuple(ISSUE_TITLES))
        return ProjectSpec(owner, f"{word}-{kind}-{n + 1}", f"A {word} {kind} project.", kind,
                           stars=self.rng.randint(0, 50))

    def _members(self, pid: int, spec: ProjectSpec) -> list[str]:
        """Direct members (the owner of a personal project, a few others); returns who may commit."""
        rng, db = self.rng, self.db
        people = [p[0] for p in PEOPLE]
        committers: list[str] = []
        if spec.namespace in GROUP_MEMBERS:
            owner, members = GROUP_MEMBERS[spec.namespace]
            committers += [owner, *[u for u, r in members.items() if r >= DEVELOPER]]
            taken = {owner, *members}
        else:
            db.execute("INSERT INTO project_members VALUES (?, ?, ?, '')", (pid, spec.namespace, OWNER))
            committers.append(spec.namespace)
            taken = {spec.namespace}
        for username in rng.sample([p for p in people if p not in taken], k=rng.randint(1, 3)):
            role = rng.choice((GUEST, REPORTER, DEVELOPER, DEVELOPER, MAINTAINER))
            db.execute("INSERT INTO project_members VALUES (?, ?, ?, '')", (pid, username, role))
            if role >= DEVELOPER:
                committers.append(username)
        return committers

    def _project(self, pid: int, spec: ProjectSpec) -> None:
        db, rng, key = self.db, self.rng, str(pid)
        committers = self._members(pid, spec)
        names = dict((p[0], p[1]) for p in PEOPLE)
        outsiders = [content.person(rng) for _ in range(rng.randint(1, 2))]
        authors = [f"{names[u]} <{email_of(u)}>" for u in committers]
        authors += [f"{n} <{e.split('@')[0]}@{EXTERNAL_DOMAIN}>" for n, e in outsiders]
        owner_author = authors[0]
        when = HISTORY_START + timedelta(days=rng.randint(0, 120), hours=rng.randint(0, 8))
        created = when
        self.repos.create(key, spec.default_branch)
        files = initial_files(spec, rng)
        branch = spec.default_branch
        self.repos.commit(key, branch, files, owner_author, "Initial commit", epoch(when))
        steps = rng.randint(4, 8)
        licence = rng.choice(("MIT", "Apache-2.0", "GPL-3.0", None)) if spec.license_file == "LICENSE" else "GPL-3.0"
        license_at = rng.randint(1, steps) if licence else -1
        mrs: list[tuple[str, str, str, str]] = []  # (state, branch, title, author username)
        mr_titles = rng.sample(MR_TITLES, k=rng.randint(2, 4))
        merge_at = rng.randint(2, steps)
        for step in range(1, steps + 1):
            when += timedelta(days=rng.randint(2, 20), hours=rng.randint(0, 6), minutes=rng.randint(0, 59))
            if step == license_at:
                change: dict[str, bytes | None] = {spec.license_file: _license(str(licence), when.year, names.get(
                    spec.namespace, spec.namespace))}
                message = f"Add {licence} license"
            elif step == merge_at and mr_titles:
                when = self._merged_mr(key, spec, branch, mr_titles.pop(), committers, authors, when, files, mrs)
                continue
            else:
                made = None
                while made is None:
                    made = rng.choice(LATER)(files, rng, spec)
                change, message = made
            self.repos.commit(key, branch, change, rng.choice(authors), message, epoch(when))
            files.update({p: d for p, d in change.items() if d is not None})
        for n, title in enumerate(mr_titles):  # the rest: open ones from the head, a closed one from older history
            state = "closed" if n == len(mr_titles) - 1 and n > 0 else "opened"
            source = self._branch_name(title, key)
            start = self.repos.log(key, branch)[min(2, steps - 1) if state == "closed" else 0].sha
            when += timedelta(days=rng.randint(1, 6))
            change, message = _source(dict(files), rng, spec)
            self.repos.commit(key, source, change, rng.choice(authors), message, epoch(when), start=start)
            mrs.append((state, source, title, rng.choice(committers)))
        last = when
        db.execute("INSERT INTO projects VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                   (pid, spec.namespace, spec.path, spec.path, spec.description, spec.visibility, spec.default_branch,
                    max(0, spec.stars + rng.randint(-spec.stars // 10, spec.stars // 10)), stamp_of(created),
                    stamp_of(last)))
        self._labels_and_milestones(pid, last)
        self._issues(pid, spec, committers, last)
        self._merge_requests(pid, spec, mrs, committers, last)
        for username in rng.sample([p[0] for p in PEOPLE], k=rng.randint(0, 4)):
            db.execute("INSERT INTO stars VALUES (?, ?)", (username, pid))

    def _branch_name(self, title: str, key: str) -> str:
        base = content.slugify(title.removeprefix("Draft: "))
        name = f"{self.rng.choice(('feature', 'fix', 'docs'))}/{base}" if self.rng.random() < 0.5 else base
        while name in self.repos.branches(key):
            name += "-2"
        return name

    def _merged_mr(self, key: str, spec: ProjectSpec, branch: str, title: str, committers: list[str],
                   authors: list[str], when: datetime, files: dict[str, bytes],
                   mrs: list[tuple[str, str, str, str]]) -> datetime:
        """A feature branch off the current head, one or two commits on it, merged back with a merge commit."""
        rng = self.rng
        source = self._branch_name(title, key)
        author = rng.choice(committers)
        head = self.repos.log(key, branch, limit=1)[0].sha
        for _ in range(rng.randint(1, 2)):
            change, message = _source(files, rng, spec)
            self.repos.commit(key, source, change, rng.choice(authors), message, epoch(when), start=head)
            files.update({p: d for p, d in change.items() if d is not None})
            when += timedelta(hours=rng.randint(1, 30))
        merger = rng.choice(committers)
        names = dict((p[0], p[1]) for p in PEOPLE)
        sha = self.repos.merge(key, source, branch, f"{names[merger]} <{email_of(merger)}>",
                               f"Merge branch '{source}' into '{branch}'\n\n{title}", epoch(when))
        mrs.append(("merged", source, title, author))
        self._merge_commits[(key, source)] = (sha, merger, stamp_of(when))
        return when

    def __post_init__(self) -> None:
        self._merge_commits: dict[tuple[str, str], tuple[str, str, str]] = {}

    def _labels_and_milestones(self, pid: int, last: datetime) -> None:
        rng, db = self.rng, self.db
        for title, color, description in LABELS:
            db.execute("INSERT INTO labels (project_id, title, color, description) VALUES (?, ?, ?, ?)",
                       (pid, title, color, description))
        for iid, title in enumerate(rng.sample(MILESTONES, k=rng.randint(0, 3)), start=1):
            start = last.date() + timedelta(days=rng.randint(-90, 30))
            due = start + timedelta(days=rng.randint(14, 60))
            state = "closed" if due < last.date() and rng.random() < 0.5 else "active"
            db.execute("INSERT INTO milestones (project_id, iid, title, description, start_date, due_date, state) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (pid, iid, title, f"Everything planned for {title}.",
                                                        start.isoformat(), due.isoformat(), state))

    def _issues(self, pid: int, spec: ProjectSpec, committers: list[str], last: datetime) -> None:
        rng, db = self.rng, self.db
        people = [p[0] for p in PEOPLE]
        labels = [r[0] for r in db.execute("SELECT id FROM labels WHERE project_id = ? ORDER BY id", (pid,))]
        milestones = [r[0] for r in db.execute("SELECT id FROM milestones WHERE project_id = ? ORDER BY id", (pid,))]
        titles = rng.sample(ISSUE_TITLES[spec.kind], k=min(len(ISSUE_TITLES[spec.kind]), rng.randint(4, 9)))
        when = last - timedelta(days=150)
        for iid, title in enumerate(titles, start=1):
            when += timedelta(days=rng.randint(1, 12), hours=rng.randint(0, 10), minutes=rng.randint(0, 59))
            author = ME if rng.random() < 0.25 else rng.choice(people)
            closed = rng.random() < 0.35
            updated = when + timedelta(days=rng.randint(0, 20))
            due = (when.date() + timedelta(days=rng.randint(10, 60))).isoformat() if rng.random() < 0.3 else ""
            milestone = rng.choice(milestones) if milestones and rng.random() < 0.4 else None
            cur = db.execute("INSERT INTO issues (project_id, iid, title, description, author, state, created, updated, "
                             "closed, due_date, milestone_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (pid, iid, title, issue_text(rng, spec.kind, title), author,
                              "closed" if closed else "opened", stamp_of(when), stamp_of(updated),
                              stamp_of(updated) if closed else None, due, milestone))
            issue_id = cur.lastrowid
            for label in rng.sample(labels, k=rng.choice((0, 1, 1, 2))):
                db.execute("INSERT INTO issue_labels VALUES (?, ?)", (issue_id, label))
            if rng.random() < 0.5:
                assignee = ME if rng.random() < 0.4 else rng.choice(committers)
                db.execute("INSERT INTO issue_assignees VALUES (?, ?)", (issue_id, assignee))
                if assignee == ME and not closed:
                    self._todo(pid, "Issue", int(issue_id or 0), "assigned", author, when)
            self._notes(pid, "Issue", int(issue_id or 0), when, updated)

    def _merge_requests(self, pid: int, spec: ProjectSpec, mrs: list[tuple[str, str, str, str]],
                        committers: list[str], last: datetime) -> None:
        rng, db = self.rng, self.db
        key = str(pid)
        timed = []
        for state, source, title, author in mrs:
            merged = self._merge_commits.get((key, source))
            if merged is not None:  # opened a few days before it was merged
                sha, merger, at = merged
                updated = datetime.strptime(at, "%Y-%m-%d %H:%M")
                created = updated - timedelta(days=rng.randint(1, 4), hours=rng.randint(0, 9))
            else:  # opened after its branch's last commit
                sha, merger = "", ""
                created = last + timedelta(hours=rng.randint(1, 48))
                updated = created + timedelta(days=rng.randint(0, 3), hours=rng.randint(0, 9))
            timed.append((created, updated, state, source, title, author, sha, merger))
        timed.sort(key=lambda t: t[0])
        for iid, (created, updated, state, source, title, author, sha, merger) in enumerate(timed, start=1):
            cur = db.execute("INSERT INTO merge_requests (project_id, iid, title, description, author, source_branch, "
                             "target_branch, state, created, updated, merge_commit, merged_by) VALUES "
                             "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (pid, iid, title, mr_text(rng, title), author, source, spec.default_branch,
                              state, stamp_of(created), stamp_of(updated), sha, merger))
            mr_id = int(cur.lastrowid or 0)
            others = [c for c in committers if c != author] or committers
            if rng.random() < 0.6:
                assignee = rng.choice([author, *others])
                db.execute("INSERT INTO mr_assignees VALUES (?, ?)", (mr_id, assignee))
                if assignee == ME and state == "opened":
                    self._todo(pid, "MergeRequest", mr_id, "assigned", author, created)
            reviewer = ME if ME in others and rng.random() < 0.5 else rng.choice(others)
            db.execute("INSERT INTO mr_reviewers VALUES (?, ?)", (mr_id, reviewer))
            if reviewer == ME and state == "opened":
                self._todo(pid, "MergeRequest", mr_id, "review_requested", author, created)
            self._notes(pid, "MergeRequest", mr_id, created, updated)

    def _notes(self, pid: int, target_type: str, target_id: int, start: datetime, end: datetime) -> None:
        rng = self.rng
        people = [p[0] for p in PEOPLE]
        span = max(1, int((end - start).total_seconds() // 60))
        moments = sorted(rng.randint(1, span) for _ in range(rng.choice((0, 1, 1, 2, 3))))
        for minutes in moments:
            self.db.execute("INSERT INTO notes (project_id, target_type, target_id, author, body, created) VALUES "
                            "(?, ?, ?, ?, ?, ?)", (pid, target_type, target_id, rng.choice(people), rng.choice(NOTES),
                                                   stamp_of(start + timedelta(minutes=minutes))))

    def _todo(self, pid: int, target_type: str, target_id: int, action: str, author: str, when: datetime) -> None:
        self.db.execute("INSERT INTO todos (username, project_id, target_type, target_id, action, author, state, created) "
                        "VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)", (ME, pid, target_type, target_id, action, author,
                                                                    stamp_of(when)))
