"""Writes nodes/browser/vwa/data/forge_tasks.json: WebArena-format tasks over the local code forge
(site ``forge``, placeholder ``__GITLAB__``), drawn from its seeded content (seed 0, default size),
so every answer, URL and page check is a stored fact of the database or of a git history.

    python -m nodes.browser.vwa.make_forge_tasks [--out FILE] [--seed 0]

The kinds follow WebArena's GitLab tasks: questions about commits, contributors, issues, licences
and members scored by ``exact_match``/``must_include``; navigation scored by ``url_match``; state
changes (``require_reset``) scored by ``program_html`` on the page that shows the change, with the
locators WebArena's GitLab tasks use (``#notes-list``, ``.block.assignee``, ``.visibility-icon`` ...)
and ``func:gitlab_get_project_memeber_role`` for roles; and unachievable questions (``N/A``).

Questions are asked only about the projects no task changes (``READ``), and changes are made only
to the others, so the answers hold whatever order the tasks run in. Each task's ``gold_actions``
name elements by locators (nodes/browser/gold.py). The output is a pure function of the seed."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from nodes.browser.sites.forge import Forge
from nodes.browser.sites.forge_data import ME, ROLES
from nodes.browser.vwa.make_local_tasks import LOGIN, generator_main, Builder, answer, html, pick, unachievable, url

OUT = Path(__file__).resolve().parent / "data" / "forge_tasks.json"
G = "__GITLAB__"
#: projects whose facts tasks ask about; no task changes them
READ = ("convexegg/chatgpt", "kkroening/ffmpeg-python", "eriklindernoren/PyTorch-GAN", "vinta/awesome-python",
        "primer/design")
NOTES_LAST = "document.querySelector('[id=\"notes-list\"').lastElementChild.querySelector('.timeline-discussion-body').outerText"
ROLE_LEVEL = {name: level for level, name in ROLES.items()}
EASY, MEDIUM, HARD = ("easy", "easy", "easy"), ("medium", "easy", "medium"), ("hard", "easy", "hard")


def _day(iso: str) -> str:
    year, month, day = (int(x) for x in iso.split("-"))
    return f"{['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][month - 1]} {day}, {year}"


class Facts:
    """The seeded forge, read once: projects, people, issues, merge requests, members, histories."""

    def __init__(self, seed: int) -> None:
        self.site = Forge(seed=seed)
        self.db = self.site.db
        self.repos = self.site.repos
        self.names = {r["username"]: r["name"] for r in self.rows("SELECT username, name FROM users")}

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.db.execute(sql, args).fetchall()

    def project(self, full: str) -> sqlite3.Row:
        ns, _, path = full.partition("/")
        return self.rows("SELECT * FROM projects WHERE namespace = ? AND path = ?", ns, path)[0]

    def members(self, p: sqlite3.Row) -> dict[str, int]:
        """username -> role, as the members page shows it (group members included, the higher role kept)."""
        out = {r[0]: r[1] for r in self.rows("SELECT username, role FROM group_members WHERE group_path = ?",
                                             p["namespace"])}
        for r in self.rows("SELECT username, role FROM project_members WHERE project_id = ?", p["id"]):
            out[r[0]] = max(r[1], out.get(r[0], 0))
        return out

    def close(self) -> None:
        self.site.close()


def base(p: sqlite3.Row) -> str:
    return f"{G}/{p['namespace']}/{p['path']}"


def full(p: sqlite3.Row) -> str:
    return f"{p['namespace']}/{p['path']}"


def open_project(p: sqlite3.Row) -> list[str]:
    """From the explore page, the project's row."""
    return [f"goto [{G}/explore]", f"click [css=a.project-name[href='/{full(p)}']]"]


# ---- questions (string_match) -------------------------------------------------------------------------

def questions(b: Builder, f: Facts, rng: random.Random) -> None:
    read = [f.project(name) for name in READ]
    for p in pick(rng, read, 3):
        n = len(f.repos.log(str(p["id"]), p["default_branch"]))
        b.add(template="How many commits does the {{branch}} branch of {{project}} have?",
              values={"branch": p["default_branch"], "project": full(p)}, start=f"{G}/",
              ev=answer("exact_match", str(n)), gold=[*open_project(p), f"stop [{n}]"], level=EASY)
    tops = []
    for p in read:
        people = f.repos.contributors(str(p["id"]), p["default_branch"])
        if len(people) == 1 or people[0][2] > people[1][2]:
            tops.append((p, people[0]))
    for p, (name, _, _) in pick(rng, tops, 3):
        b.add(template="Who has made the most commits to {{project}}, merge commits aside?", values={"project": full(p)},
              start=f"{G}/", ev=answer("must_include", [name]),
              gold=[*open_project(p), f"click [css=.project-nav a[href$='/-/graphs/{p['default_branch']}']]",
                    f"stop [{name}]"], level=MEDIUM)
    for p, (_, email, _) in pick(rng, tops, 2):
        b.add(template="Tell me the email address of the contributor with the most commits to {{project}}.",
              values={"project": full(p)}, start=base(p), ev=answer("must_include", [email]),
              gold=[f"click [css=.project-nav a[href$='/-/graphs/{p['default_branch']}']]", f"stop [{email}]"],
              level=MEDIUM)
    authored = []
    for p in read:
        log = [c for c in f.repos.log(str(p["id"]), p["default_branch"]) if len(c.parents) < 2]
        titles = Counter(c.title for c in log)
        authored += [(p, c) for c in log if titles[c.title] == 1 and c.title != "Initial commit"]
    for p, c in pick(rng, authored, 2):
        b.add(template="Who authored the commit \"{{title}}\" in {{project}}?", values={"title": c.title, "project": full(p)},
              start=base(p), ev=answer("exact_match", c.author_name),
              gold=[f"click [css=.project-nav a[href$='/-/commits/{p['default_branch']}']]", f"stop [{c.author_name}]"],
              level=EASY)
    for p in pick(rng, read, 2):
        n = f.rows("SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened'", p["id"])[0][0]
        b.add(template="How many open issues does {{project}} have?", values={"project": full(p)}, start=base(p),
              ev=answer("exact_match", str(n)), gold=["click [css=.project-nav a[href$='/-/issues']]", f"stop [{n}]"],
              level=EASY)
    issues = [(p, i) for p in read for i in f.rows("SELECT * FROM issues WHERE project_id = ?", p["id"])]
    for p, i in pick(rng, [x for x in issues if x[1]["state"] == "closed"], 1) + \
            pick(rng, [x for x in issues if x[1]["state"] == "opened"], 1):
        state = "open" if i["state"] == "opened" else "closed"
        b.add(template="Is the issue \"{{title}}\" of {{project}} open or closed?", values={"title": i["title"],
              "project": full(p)}, start=base(p), ev=answer("must_include", [state]),
              gold=[f"goto [{base(p)}/-/issues/{i['iid']}]", f"stop [It is {state}.]"], level=EASY)
    licensed = []
    for p in read:
        text = f.repos.read(str(p["id"]), p["default_branch"], "LICENSE")
        if text:
            first = text.decode().split("\n", 1)[0]
            licensed.append((p, "MIT" if first.startswith("MIT") else "Apache" if first.startswith("Apache") else "GPL"))
    for p, name in pick(rng, licensed, 2):
        b.add(template="Which licence does {{project}} use?", values={"project": full(p)}, start=base(p),
              ev=answer("must_include", [name]),
              gold=[f"click [css=a.tree-item-link[href$='/-/blob/{p['default_branch']}/LICENSE']]",
                    f"stop [{name}]"], level=EASY)
    for p in pick(rng, read, 2):
        stars = p["base_stars"] + f.rows("SELECT COUNT(*) FROM stars WHERE project_id = ?", p["id"])[0][0]
        b.add(template="How many stars does {{project}} have?", values={"project": full(p)}, start=f"{G}/",
              ev=answer("exact_match", str(stars)), gold=[*open_project(p), f"stop [{stars}]"], level=EASY)
    for p in read:
        maintainers = sorted(u for u, r in f.members(p).items() if r == ROLE_LEVEL["Maintainer"])
        if maintainers:
            b.add(template="Which users have the Maintainer role in {{project}}? Give their usernames.",
                  values={"project": full(p)}, start=base(p), ev=answer("must_include", maintainers),
                  gold=["click [css=.project-nav a[href$='/-/project_members']]", f"stop [{', '.join(maintainers)}]"],
                  level=MEDIUM)
            break
    token = f.rows("SELECT feed_token FROM tokens WHERE username = ?", ME)[0][0]
    b.add(template="Get me my RSS feed token.", values={}, start=f"{G}/", ev=answer("exact_match", token),
          gold=[*LOGIN[G], f"goto [{G}/-/profile]", "click [css=a[href='/-/profile/personal_access_tokens']]",
                f"stop [{token}]"], level=EASY)
    for missing in ("byteblaze/quantum-toaster", "vinta/awesome-cobol"):
        b.add(template="How many stars does {{project}} have?", values={"project": missing}, start=f"{G}/",
              ev=unachievable(f"There is no project {missing}."), gold=[f"goto [{G}/explore]", "stop [N/A]"],
              level=MEDIUM)


# ---- navigation (url_match) ---------------------------------------------------------------------------

def navigation(b: Builder, f: Facts, rng: random.Random) -> None:
    read = [f.project(name) for name in READ]
    for p, label in zip(pick(rng, read, 3), ("bug", "question", "documentation")):
        b.add(template="Show me the issues of {{project}} labelled {{label}}.", values={"project": full(p), "label": label},
              start=base(p), ev=url(f"{base(p)}/-/issues/?label_name%5B%5D={quote(label)}", "GOLD in PRED"),
              gold=["click [css=.project-nav a[href$='/-/labels']]",
                    f"click [css=a[href$='label_name%5B%5D={quote(label)}']]", "stop"], level=EASY)
    b.add(template="Check out the merge requests assigned to me.", values={}, start=f"{G}/",
          ev=url(f"{G}/dashboard/merge_requests?assignee_username={ME}", "GOLD in PRED"),
          gold=[*LOGIN[G], "click [css=header a[href^='/dashboard/merge_requests']]", "stop"], level=EASY)
    b.add(template="Check out the merge requests that need my review.", values={}, start=f"{G}/",
          ev=url(f"{G}/dashboard/merge_requests?reviewer_username={ME}", "GOLD in PRED"),
          gold=[*LOGIN[G], "click [css=header a[href^='/dashboard/merge_requests']]", "click [css=a.review-requests]",
                "stop"], level=MEDIUM)
    b.add(template="Check out my to-do list.", values={}, start=f"{G}/", ev=url(f"{G}/dashboard/todos", "GOLD in PRED"),
          gold=[*LOGIN[G], "click [css=header a[href='/dashboard/todos']]", "stop"], level=EASY)
    for p in pick(rng, read, 2):
        b.add(template="Take me to the milestones of {{project}}.", values={"project": full(p)}, start=base(p),
              ev=url(f"{base(p)}/-/milestones"), gold=["click [css=.project-nav a[href$='/-/milestones']]", "stop"],
              level=EASY)
    p = read[0]
    b.add(template="See all public projects.", values={}, start=base(p), ev=url(f"{G}/explore", "GOLD in PRED"),
          gold=["click [css=header a[href='/explore']]", "stop"], level=EASY)
    b.add(template="Open the contributors of {{project}}.", values={"project": full(read[1])}, start=base(read[1]),
          ev=url(f"{base(read[1])}/-/graphs/{read[1]['default_branch']}"),
          gold=[f"click [css=.project-nav a[href$='/-/graphs/{read[1]['default_branch']}']]", "stop"], level=EASY)


# ---- changes (program_html, require_reset) ------------------------------------------------------------

def members_url(p: sqlite3.Row) -> str:
    return f"{base(p)}/-/project_members"


def role_of(account: str) -> str:
    return f"func:gitlab_get_project_memeber_role(__page__, '{account}')"


def invite(p: sqlite3.Row, who: str, role: str) -> list[str]:
    return [f"goto [{members_url(p)}]", f"type [css=#invite-username] [{who}] [0]",
            f"click [css=input[name=access_level][value='{ROLE_LEVEL[role]}']]", "click [css=#invite-members-button]"]


def changes(b: Builder, f: Facts, rng: random.Random) -> None:
    mine = [p for p in f.rows("SELECT * FROM projects WHERE namespace = ? ORDER BY id", ME) if full(p) not in READ]
    people = sorted(f.names)
    # members: invite, change a role, remove
    for p, role in zip(pick(rng, mine, 3), ("Guest", "Developer", "Maintainer")):
        who = rng.choice([u for u in people if u not in f.members(p)])
        b.add(template="Invite {{user}} to {{project}} as {{role}}.", values={"user": who, "project": full(p), "role": role},
              start=f"{G}/", reset=True, ev=html(members_url(p), role_of(who), must_include=[role]),
              gold=[*LOGIN[G], *invite(p, who, role), "stop"], level=MEDIUM)
    p = mine[0]
    member, level = next((u, r) for u, r in sorted(f.members(p).items()) if u != ME)
    new_role = "Maintainer" if level != ROLE_LEVEL["Maintainer"] else "Reporter"
    b.add(template="Make {{user}} a {{role}} of {{project}}.", values={"user": member, "role": new_role, "project": full(p)},
          start=f"{G}/", reset=True, ev=html(members_url(p), role_of(member), exact_match=new_role),
          gold=[*LOGIN[G], *invite(p, member, new_role), "stop"], level=MEDIUM)
    p = mine[1]
    member = next(u for u in sorted(f.members(p)) if u != ME)
    b.add(template="Remove {{user}} from the members of {{project}}.", values={"user": member, "project": full(p)},
          start=f"{G}/", reset=True, ev=html(members_url(p), "", must_exclude=[f"@{member}"]),
          gold=[*LOGIN[G], f"goto [{members_url(p)}]", f"click [css=form[action$='/{member}/remove'] button]", "stop"],
          level=EASY)
    # issues: create, comment, close, label
    a11y = f.project("a11yproject/a11yproject.com")
    for p, title, due in ((a11y, "404 for many URLs", "2030-01-03"), (mine[2], "Dark mode for the landing page",
                                                                      "2030-12-31")):
        b.add(template="Create an issue in {{project}} titled \"{{title}}\", assign it to me and set its due date to "
              "{{due}}.", values={"project": full(p), "title": title, "due": due}, start=f"{G}/", reset=True,
              ev={"eval_types": ["url_match", "program_html"], "reference_url": f"{base(p)}/-/issues",
                  "url_note": "GOLD in PRED", "program_html": [
                      {"url": "last", "locator": "document.querySelector('[data-qa-selector=\"title_content\"]').outerText",
                       "required_contents": {"exact_match": title}},
                      {"url": "last", "locator": "document.querySelector('[data-testid=\"sidebar-due-date\"').outerText",
                       "required_contents": {"must_include": [_day(due)]}},
                      {"url": "last", "locator": "document.querySelector('.block.assignee').outerText",
                       "required_contents": {"must_include": [f.names[ME]]}}]},
              gold=[*LOGIN[G], f"goto [{base(p)}/-/issues]", "click [css=a.new-issue]",
                    f"type [css=#issue_title] [{title}] [0]", f"type [css=#issue_assignee] [{ME}] [0]",
                    f"type [css=#issue_due_date] [{due}] [0]", "click [css=#create-issue]", "stop"], level=HARD)
    writable = [a11y, *mine]
    issues = [(p, i) for p in writable for i in f.rows("SELECT * FROM issues WHERE project_id = ? AND state = 'opened'",
                                                        p["id"])]
    for (p, i), text in zip(pick(rng, issues, 2), ("I can take this one.", "Fixed on main, please check.")):
        link = f"{base(p)}/-/issues/{i['iid']}"
        b.add(template="Comment \"{{comment}}\" on the issue \"{{title}}\" of {{project}}.",
              values={"comment": text, "title": i["title"], "project": full(p)}, start=f"{G}/", reset=True,
              ev=html(link, NOTES_LAST, exact_match=text),
              gold=[*LOGIN[G], f"goto [{link}]", f"type [css=#note-body] [{text}] [0]", "click [css=.comment-btn]", "stop"],
              level=EASY)
    for p, i in pick(rng, [x for x in issues if x[1]["author"] == ME or x[0]["namespace"] == ME], 2):
        link = f"{base(p)}/-/issues/{i['iid']}"
        b.add(template="Close the issue \"{{title}}\" of {{project}}.", values={"title": i["title"], "project": full(p)},
              start=f"{G}/", reset=True,
              ev=html(link, "document.querySelector('.issuable-status').outerText", exact_match="Closed"),
              gold=[*LOGIN[G], f"goto [{link}]", "click [css=button.state-btn]", "stop"], level=EASY)
    for p, i in pick(rng, [x for x in issues if x[0]["namespace"] == ME], 1):
        have = {r[0] for r in f.rows("SELECT label_id FROM issue_labels WHERE issue_id = ?", i["id"])}
        label = next(r for r in f.rows("SELECT * FROM labels WHERE project_id = ? ORDER BY id", p["id"])
                     if r["id"] not in have)
        link = f"{base(p)}/-/issues/{i['iid']}"
        b.add(template="Add the label {{label}} to the issue \"{{title}}\" of {{project}}.",
              values={"label": label["title"], "title": i["title"], "project": full(p)}, start=f"{G}/", reset=True,
              ev=html(link, "document.querySelector('.block.labels').outerText", must_include=[label["title"]]),
              gold=[*LOGIN[G], f"goto [{link}]", f"click [css=input[name=label_{label['id']}]]",
                    "click [css=button.labels-btn]", "stop"], level=MEDIUM)
    # merge requests: comment, open one, merge one
    mrs = [(p, m) for p in writable for m in f.rows("SELECT * FROM merge_requests WHERE project_id = ? ORDER BY iid",
                                                     p["id"])]
    for (p, m), text in zip(pick(rng, [x for x in mrs if x[1]["state"] == "opened"], 2), ("Good idea", "Thank you")):
        link = f"{base(p)}/-/merge_requests/{m['iid']}"
        b.add(template="Post \"{{comment}}\" on the merge request \"{{title}}\" in {{project}}.",
              values={"comment": text, "title": m["title"], "project": full(p)}, start=f"{G}/", reset=True,
              ev=html(link, NOTES_LAST, exact_match=text),
              gold=[*LOGIN[G], f"goto [{link}]", f"type [css=#note-body] [{text}] [0]", "click [css=.comment-btn]", "stop"],
              level=EASY)
    closed = [(p, m) for p, m in mrs if m["state"] == "closed" and f.members(p).get(ME, 0) >= ROLE_LEVEL["Developer"]]
    for p, m in pick(rng, closed, 2):
        reviewer = next(u for u in sorted(f.members(p)) if u != ME)
        target = p["default_branch"]
        b.add(template="Submit a merge request in {{project}} to merge the {{source}} branch into {{target}}, with "
              "{{reviewer}} as the reviewer.", values={"project": full(p), "source": m["source_branch"], "target": target,
                                                       "reviewer": f.names[reviewer]},
              start=f"{G}/", reset=True,
              ev={"eval_types": ["url_match", "program_html"], "reference_url": f"{base(p)}/-/merge_requests",
                  "url_note": "GOLD in PRED", "program_html": [
                      {"url": "last", "locator": "document.querySelectorAll(\".detail-page-description > "
                       "a.gl-font-monospace\")[0].outerText", "required_contents": {"exact_match": m["source_branch"]}},
                      {"url": "last", "locator": "document.querySelectorAll(\".detail-page-description > "
                       "a.gl-font-monospace\")[1].outerText", "required_contents": {"exact_match": target}},
                      {"url": "last", "locator": "document.querySelector('.block.reviewer').outerText",
                       "required_contents": {"must_include": [f.names[reviewer]]}}]},
              gold=[*LOGIN[G], f"goto [{base(p)}/-/merge_requests/new]",
                    f"type [css=#merge_request_source_branch] [{m['source_branch']}] [0]",
                    f"type [css=#merge_request_title] [Merge {m['source_branch']}] [0]",
                    f"type [css=#merge_request_reviewer] [{reviewer}] [0]", "click [css=#create-merge-request]", "stop"],
              level=HARD)
    opened = [(p, m) for p, m in mrs if m["state"] == "opened" and f.members(p).get(ME, 0) >= ROLE_LEVEL["Developer"]]
    for p, m in pick(rng, opened, 1):
        link = f"{base(p)}/-/merge_requests/{m['iid']}"
        b.add(template="Merge the merge request \"{{title}}\" of {{project}}.", values={"title": m["title"],
              "project": full(p)}, start=f"{G}/", reset=True,
              ev={"eval_types": ["program_html"], "program_html": [
                  {"url": link, "locator": "document.querySelector('.issuable-status').outerText",
                   "required_contents": {"exact_match": "Merged"}},
                  {"url": f"{base(p)}/-/commits/{m['target_branch']}", "locator": "",
                   "required_contents": {"must_include": [f"Merge branch '{m['source_branch']}' into "
                                                          f"'{m['target_branch']}'"]}}]},
              gold=[*LOGIN[G], f"goto [{link}]", "click [css=button.merge-btn]", "stop"], level=MEDIUM)
    # files: the same new file twice (only the reset between them lets the second commit)
    p = mine[3]
    for line in ("https://example.org/first-link", "https://example.org/second-link"):
        b.add(template="Create a file links/urls.txt in {{project}} that holds the line {{line}}.",
              values={"project": full(p), "line": line}, start=f"{G}/", reset=True,
              ev=html(f"{base(p)}/-/raw/{p['default_branch']}/links/urls.txt", "", must_include=[line]),
              gold=[*LOGIN[G], f"goto [{base(p)}/-/new/{p['default_branch']}]", "type [css=#file_name] [links/urls.txt] [0]",
                    f"type [css=#file-content] [{line}] [0]", "click [css=#commit-changes]", "stop"], level=MEDIUM)
    # projects, stars, forks, milestones
    for name, visibility, template, check in (("awesome_llm_reading", "private", "", "Initial commit"),
                                               ("web_agent_android_xl", "public", "Android",
                                                "Initialized from 'Android' project template")):
        b.add(template="Create a new {{visibility}} project named {{name}}" + (" from the {{template}} template"
              if template else " with a README") + ".", values={"visibility": visibility, "name": name,
                                                                **({"template": template} if template else {})},
              start=f"{G}/", reset=True,
              ev={"eval_types": ["program_html"], "program_html": [
                  {"url": f"{G}/{ME}/{name}", "locator": "document.querySelector('.visibility-icon').getAttribute('title')",
                   "required_contents": {"must_include": [visibility.capitalize()]}},
                  {"url": f"{G}/{ME}/{name}/-/commits", "locator": "", "required_contents": {"must_include": [check]}}]},
              gold=[*LOGIN[G], "click [css=header a[href='/projects/new']]", f"type [css=#project_name] [{name}] [0]",
                    f"click [css=#project_visibility_level_{visibility}]",
                    *([f"click [css=input[name=template][value='{template}']]"] if template else []),
                    "click [css=#create-project]", "stop"], level=HARD)
    starred = {r[0] for r in f.rows("SELECT project_id FROM stars WHERE username = ?", ME)}
    for p in pick(rng, [x for x in writable if x["id"] not in starred], 2):
        b.add(template="Star {{project}}.", values={"project": full(p)}, start=f"{G}/", reset=True,
              ev=html(f"{G}/users/{ME}/starred", "", must_include=[p["name"]]),
              gold=[*LOGIN[G], f"goto [{base(p)}]", "click [css=button.star-btn]", "stop"], level=EASY)
    target = a11y
    b.add(template="Fork {{project}} into my namespace.", values={"project": full(target)}, start=f"{G}/", reset=True,
          ev=html(f"{G}/{ME}/{target['path']}", "document.querySelector('.project-header').outerText",
                  must_include=[f"Forked from {full(target)}"]),
          gold=[*LOGIN[G], f"goto [{base(target)}]", "click [css=a.fork-btn]", "click [css=#fork-project]", "stop"],
          level=MEDIUM)
    p = mine[4]
    b.add(template="Create a milestone \"product launch\" in {{project}} starting on {{start}} and ending on {{end}}.",
          values={"project": full(p), "start": "2030-01-16", "end": "2030-01-30"}, start=f"{G}/", reset=True,
          ev={"eval_types": ["url_match", "program_html"], "reference_url": f"{base(p)}/-/milestones",
              "url_note": "GOLD in PRED", "program_html": [
                  {"url": "last", "locator": "document.querySelector(\"#content-body\").outerText",
                   "required_contents": {"must_include": ["product launch"]}},
                  {"url": "last", "locator": "document.querySelector('.block.start_date').outerText",
                   "required_contents": {"must_include": ["Jan 16, 2030"]}},
                  {"url": "last", "locator": "document.querySelector('.block.due_date').outerText",
                   "required_contents": {"must_include": ["Jan 30, 2030"]}}]},
          gold=[*LOGIN[G], f"goto [{base(p)}/-/milestones]", "click [css=a[href$='/-/milestones/new']]",
                "type [css=#milestone_title] [product launch] [0]", "type [css=#milestone_start_date] [2030-01-16] [0]",
                "type [css=#milestone_due_date] [2030-01-30] [0]", "click [css=#create-milestone]", "stop"], level=HARD)
    # the profile: status, website, follow
    b.add(template="Set my status to \"{{status}}\".", values={"status": "Enjoying life"}, start=f"{G}/", reset=True,
          ev=html(f"{G}/{ME}", "document.querySelector('.cover-status').lastChild.textContent", exact_match="Enjoying life"),
          gold=[*LOGIN[G], "click [css=header a[href='/-/profile']]", "type [css=#user_status_message] [Enjoying life] [0]",
                "click [css=#update-profile]", "stop"], level=EASY)
    b.add(template="Set the website URL on my profile to {{url}}.", values={"url": "https://egg.tart.com"}, start=f"{G}/",
          reset=True, ev=html(f"{G}/{ME}", "document.querySelector('.profile-header [itemprop=\"url\"]').outerText",
                              exact_match="egg.tart.com"),
          gold=[*LOGIN[G], "click [css=header a[href='/-/profile']]", "type [css=#user_website_url] [https://egg.tart.com] [0]",
                "click [css=#update-profile]", "stop"], level=EASY)
    followed = {r[0] for r in f.rows("SELECT followee FROM follows WHERE follower = ?", ME)}
    for who in pick(rng, [u for u in people if u != ME and u not in followed], 1):
        b.add(template="Follow {{name}}.", values={"name": f.names[who]}, start=f"{G}/", reset=True,
              ev=html(f"{G}/users/{ME}/following", "document.querySelector('.user-profile').outerText",
                      must_include=[f"@{who}"]),
              gold=[*LOGIN[G], f"goto [{G}/{who}]", "click [css=button.follow-btn]", "stop"], level=EASY)
    b.add(template="Create a group named {{group}} and add {{user}} to it as a Developer.",
          values={"group": "n-lab", "user": "westurner"}, start=f"{G}/", reset=True,
          ev=html(f"{G}/groups/n-lab/-/group_members", role_of("westurner"), exact_match="Developer"),
          gold=[*LOGIN[G], f"goto [{G}/groups/new]", "type [css=#group_name] [n-lab] [0]", "click [css=#create-group]",
                "click [css=a[href='/groups/n-lab/-/group_members']]", "type [css=#invite-username] [westurner] [0]",
                "click [css=input[name=access_level][value='30']]", "click [css=#invite-members-button]", "stop"],
          level=HARD)


def build(seed: int = 0) -> list[dict[str, Any]]:
    facts = Facts(seed)
    try:
        b = Builder()
        for part in (questions, navigation, changes):
            part(b, facts, random.Random(f"tasks:forge:{part.__name__}:{seed}"))
        return b.tasks
    finally:
        facts.close()


def main(argv: list[str] | None = None) -> int:
    return generator_main(argv, __doc__ or "", OUT, build, "the forge's")


if __name__ == "__main__":
    raise SystemExit(main())
