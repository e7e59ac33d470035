"""The code forge's pages (Jinja, autoescaped). The words are GitLab's (Issues, Merge requests, Max role,
Invite members ...) and so are the handful of class names and data attributes that WebArena's
evaluators read (``.detail-page-description``, ``#notes-list``, ``.block.assignee``,
``td.col-max-role``, ``.visibility-icon``, ``.cover-status`` ...); the markup around them is our own."""

from __future__ import annotations

from nodes.browser.sites.framework import layout

CSS = """
.frame { display: flex; gap: 22px; align-items: flex-start; }
.project-nav { width: 190px; display: flex; flex-direction: column; gap: 4px; background: #fff; padding: 10px;
               border: 1px solid #ddd; }
.project-nav .section { color: #666; font-size: 0.8em; text-transform: uppercase; margin-top: 8px; }
#content-body { flex: 1; min-width: 0; }
.issuable { display: flex; gap: 20px; align-items: flex-start; } .issuable-main { flex: 1; min-width: 0; }
.right-sidebar { width: 280px; background: #fff; border: 1px solid #ddd; padding: 8px 12px; }
.block { border-bottom: 1px solid #eee; padding: 8px 0; } .block .title { font-weight: bold; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #e4e4e4; font-size: 0.85em; }
.badge.opened { background: #d9f2e6; } .badge.closed { background: #f6d6d6; } .badge.merged { background: #dcd6f6; }
.label-badge { color: #fff; padding: 1px 8px; border-radius: 10px; font-size: 0.85em; }
.list-row { background: #fff; border: 1px solid #e4e4e4; padding: 8px 10px; margin-bottom: 4px; }
.tabs a { margin-right: 12px; } .tabs a.active { font-weight: bold; text-decoration: underline; }
pre.code { background: #fff; border: 1px solid #ddd; padding: 10px; overflow-x: auto; white-space: pre-wrap; }
.error { color: #b00020; } .readme { background: #fff; border: 1px solid #ddd; padding: 4px 16px; }
.gl-font-monospace { font-family: monospace; background: #eef; padding: 0 4px; }
.btn { display: inline-block; padding: 4px 10px; border: 1px solid #999; background: #fafafa; border-radius: 4px; }
textarea { width: 100%; min-height: 90px; } input[type=text], input:not([type]) { min-width: 280px; }
"""

NAV = """ <form class="inline search-form" action="/search" method="get"><input name="search" placeholder="Search GitLab"
aria-label="Search GitLab"><button type="submit">Search</button></form>
<a href="/dashboard/projects">Projects</a> <a href="/dashboard/groups">Groups</a> <a href="/explore">Explore</a>
{% if user %}<a href="/dashboard/issues?assignee_username={{ user }}">Issues</a>
<a href="/dashboard/merge_requests?assignee_username={{ user }}">Merge requests</a> <a href="/dashboard/todos">To-Do List</a>
<a href="/projects/new">New project</a> <a href="/{{ user }}" class="header-user-profile">Profile</a>
<a href="/-/profile">Edit profile</a> <a href="/users/sign_out">Sign out</a>{% else %}<a href="/users/sign_in">Sign in</a>{% endif %}"""

MACROS = """
{% macro person(username, names) %}<a href="/{{ username }}" class="author-link">{{ names.get(username, username) }}</a>{% endmacro %}
{% macro labels_of(items) %}{% for l in items %}<span class="label-badge gl-label" style="background: {{ l.color }}">{{ l.title }}</span> {% endfor %}{% endmacro %}
{% macro state_badge(state) %}<span class="badge {{ state }} issuable-status">{{ {'opened': 'Open', 'closed': 'Closed', 'merged': 'Merged'}[state] }}</span>{% endmacro %}
{% macro members_table(rows, names, editable, action_base) %}
<table class="members-table"><thead><tr><th>Account</th><th>Source</th><th>Max role</th><th>Expiration</th>{% if editable %}<th>Actions</th>{% endif %}</tr></thead><tbody>
{% for m in rows %}<tr class="member-row" data-username="{{ m.username }}">
<td data-label="Account"><a href="/{{ m.username }}">{{ m.name }}</a> <span class="gl-avatar-labeled-sublabel">@{{ m.username }}</span></td>
<td class="col-source">{{ m.source }}</td>
<td class="col-max-role"><span class="role-name">{{ m.role_name }}</span></td>
<td class="col-expiration">{{ m.expires or 'No expiration set' }}</td>
{% if editable %}<td class="col-actions">{% if m.direct %}<form class="inline" method="post" action="{{ action_base }}/{{ m.username }}/update">
<label class="inline-label">Change role <select name="access_level" aria-label="Role of {{ m.username }}">{% for level, role in roles %}<option value="{{ level }}" {% if level == m.role %}selected{% endif %}>{{ role }}</option>{% endfor %}</select></label>
<button type="submit" class="update-role">Update role</button></form>
<form class="inline" method="post" action="{{ action_base }}/{{ m.username }}/remove"><button type="submit" class="remove-member">Remove member</button></form>{% endif %}</td>{% endif %}
</tr>{% endfor %}</tbody></table>{% endmacro %}
{% macro invite_form(action) %}<form method="post" action="{{ action }}" class="invite-members">
<h2>Invite members</h2><label>Username or email address <input name="username" id="invite-username"></label>
<fieldset><legend>Select a role</legend>{% for level, role in roles %}<label class="role-option"><input type="radio" name="access_level" value="{{ level }}" {% if loop.first %}checked{% endif %}> {{ role }}</label>{% endfor %}</fieldset>
<label>Access expiration date (optional) <input name="expires_at" id="expires_at" placeholder="YYYY-MM-DD"></label>
<button type="submit" id="invite-members-button">Invite</button></form>{% endmacro %}
"""

IMPORT = '{% from "macros.html" import person, labels_of, state_badge, members_table, invite_form with context %}'

PAGE = """{% extends "layout.html" %}{% block title %}{{ title }} · GitLab{% endblock %}{% block content %}
<div class="frame">{% if project %}<nav class="project-nav" aria-label="Project navigation">
<a class="project-title" href="{{ base }}"><b>{{ project.name }}</b></a>
<a href="{{ base }}">Project information</a>
<span class="section">Repository</span><a href="{{ base }}/-/tree/{{ project.default_branch }}">Files</a>
<a href="{{ base }}/-/commits/{{ project.default_branch }}">Commits</a><a href="{{ base }}/-/branches">Branches</a>
<a href="{{ base }}/-/graphs/{{ project.default_branch }}">Contributors</a>
<span class="section">Issues</span><a href="{{ base }}/-/issues">List <span class="badge">{{ project.open_issues }}</span></a>
<a href="{{ base }}/-/labels">Labels</a><a href="{{ base }}/-/milestones">Milestones</a>
<a href="{{ base }}/-/merge_requests" class="section-link">Merge requests <span class="badge">{{ project.open_mrs }}</span></a>
<a href="{{ base }}/-/project_members">Members</a></nav>{% endif %}
<div id="content-body">{% block body %}{% endblock %}</div></div>{% endblock %}"""


def page(body: str) -> str:
    return '{% extends "page.html" %}{% block body %}' + IMPORT + body + "{% endblock %}"


TEMPLATES = {
    "layout.html": layout("GitLab", NAV, CSS),
    "page.html": PAGE,
    "macros.html": MACROS,
    "error.html": page("""<h1>{{ heading }}</h1><p class="error">{{ message }}</p>"""),
    "login.html": page("""<h1>Sign in</h1><form method="post" action="/users/sign_in">
<label>Username or email <input name="user[login]" id="user_login" autocomplete="username"></label>
<label>Password <input name="user[password]" id="user_password" type="password"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" name="commit" class="sign-in">Sign in</button></form>"""),

    # ---- lists of projects ----
    "projects.html": page("""<h1>{{ heading }}</h1><p class="tabs">{% for label, href in tabs %}<a href="{{ href }}" {% if href == active %}class="active"{% endif %}>{{ label }}</a>{% endfor %}</p>
{% if user %}<p><a class="btn" href="/projects/new">New project</a></p>{% endif %}
<form method="get" action="{{ active.split('?')[0] }}"><input name="name" value="{{ name }}" placeholder="Filter by name" aria-label="Filter by name"><button type="submit">Filter</button>
<label>Sort <select name="sort"><option value="">Last updated</option>{% for key, label in sorts %}<option value="{{ key }}" {% if key == sort %}selected{% endif %}>{{ label }}</option>{% endfor %}</select></label></form>
<ul class="projects-list" data-qa-selector="projects_list">{% for p in projects %}<li class="list-row project-row">
<a class="project-name" href="/{{ p.namespace }}/{{ p.path }}">{{ names.get(p.namespace, p.namespace) }} / {{ p.name }}</a>
<span class="visibility-icon" title="{{ p.visibility|capitalize }}">[{{ p.visibility }}]</span>
<p class="description">{{ p.description }}</p><span class="stars" title="Stars">★ {{ p.stars }}</span> · <span class="forks">{{ p.forks }} forks</span>
· <span class="muted">updated {{ p.last_activity|date }}</span></li>{% else %}<li>No projects found.</li>{% endfor %}</ul>"""),

    # ---- a project ----
    "project.html": page("""<div class="project-header"><h1 class="project-title-header">{{ project.name }}
<span class="visibility-icon" title="{{ visibility_title }}">[{{ project.visibility }}]</span></h1>
<p class="muted">Project ID: {{ project.id }}{% if fork_of %} · Forked from <a href="/{{ fork_of.namespace }}/{{ fork_of.path }}">{{ fork_of.namespace }}/{{ fork_of.path }}</a>{% endif %}</p>
<div class="home-panel-description-markdown">{{ project.description }}</div>
<p>{% if user %}<form class="inline" method="post" action="{{ base }}/-/star"><button type="submit" class="star-btn">{{ 'Unstar' if starred else 'Star' }}</button></form>{% endif %}
<a href="{{ base }}/-/starrers" class="star-count">{{ project.stars }} stars</a>
{% if user %}<a class="btn fork-btn" href="{{ base }}/-/forks/new">Fork</a>{% endif %} <span class="fork-count">{{ project.forks }} forks</span></p>
<p><span class="commit-count"><a href="{{ base }}/-/commits/{{ project.default_branch }}">{{ n_commits }} Commits</a></span> ·
<a href="{{ base }}/-/branches">{{ branches|length }} Branches</a></p>
<details class="clone-dropdown" open><summary>Clone</summary>
<label>Clone with SSH <input readonly id="ssh_project_clone" value="{{ ssh_url }}"></label>
<label>Clone with HTTP <input readonly id="http_project_clone" value="{{ http_url }}"></label></details></div>
{% if empty %}<div class="empty-repo"><h2>The repository for this project is empty</h2><p>You can get started by adding files.</p>
{% if can_push %}<a class="btn" href="{{ base }}/-/new/{{ project.default_branch }}/">New file</a>{% endif %}</div>
{% else %}<p class="last-commit">Last commit: <a href="{{ base }}/-/commit/{{ last.sha }}">{{ last.title }}</a> by {{ last.author_name }} · {{ last.authored|gitdate }}</p>
{% include "tree_table.html" %}
{% if readme %}<h2>{{ readme_name }}</h2><div class="readme md">{{ readme|md }}</div>{% endif %}{% endif %}"""),
    "tree_table.html": """<table class="tree-table"><thead><tr><th>Name</th></tr></thead><tbody>
{% if path %}<tr><td><a href="{{ base }}/-/tree/{{ ref }}/{{ parent }}">..</a></td></tr>{% endif %}
{% for e in entries %}<tr class="tree-item"><td>{% if e.is_dir %}<a class="tree-item-link folder" href="{{ base }}/-/tree/{{ ref }}/{{ e.path }}">📁 {{ e.name }}</a>{% else %}<a class="tree-item-link file" href="{{ base }}/-/blob/{{ ref }}/{{ e.path }}">{{ e.name }}</a>{% endif %}</td></tr>{% endfor %}
</tbody></table>""",
    "tree.html": page("""<h1 class="tree-ref-header">{{ project.name }} / {{ path or '' }}</h1>
<p>Branch: <span class="ref-name gl-font-monospace">{{ ref }}</span> · {% for b in branches %}<a href="{{ base }}/-/tree/{{ b }}">{{ b }}</a> {% endfor %}</p>
<p class="breadcrumb"><a href="{{ base }}/-/tree/{{ ref }}">{{ project.path }}</a>{% for name, href in crumbs %} / <a href="{{ base }}/-/tree/{{ ref }}/{{ href }}">{{ name }}</a>{% endfor %}</p>
{% if can_push %}<p><a class="btn new-file" href="{{ base }}/-/new/{{ ref }}/{{ path }}">New file</a></p>{% endif %}
{% include "tree_table.html" %}"""),
    "blob.html": page("""<p class="breadcrumb"><a href="{{ base }}/-/tree/{{ ref }}">{{ project.path }}</a>{% for name, href in crumbs %} / <a href="{{ base }}/-/{{ 'blob' if loop.last else 'tree' }}/{{ ref }}/{{ href }}">{{ name }}</a>{% endfor %}</p>
<div class="file-holder"><div class="file-title"><b class="file-title-name">{{ name }}</b> <span class="muted">{{ size }} bytes</span>
<a href="{{ base }}/-/raw/{{ ref }}/{{ path }}" class="btn">Open raw</a>
{% if can_push %}<a href="{{ base }}/-/edit/{{ ref }}/{{ path }}" class="btn edit-blob">Edit</a>{% endif %}
<a href="{{ base }}/-/commits/{{ ref }}/{{ path }}" class="btn">History</a></div>
{% if rendered %}<div class="readme md">{{ rendered|md }}</div>{% endif %}
{% if binary %}<p>This file is stored in binary form; <a href="{{ base }}/-/raw/{{ ref }}/{{ path }}">download it</a>.</p>{% else %}<pre class="code blob-content">{{ text }}</pre>{% endif %}</div>"""),
    "edit.html": page("""<h1>{{ 'Edit file' if editing else 'New file' }}</h1>
<form method="post" action="{{ action }}" class="file-editor">
<label>{{ 'File path' }} <input name="file_name" id="file_name" value="{{ file_name }}" {% if editing %}readonly{% endif %}></label>
<label>Contents <textarea name="content" id="file-content" rows="18">{{ text }}</textarea></label>
<label>Commit message <input name="commit_message" id="commit_message" value="{{ message }}"></label>
<label>Target Branch <input name="branch_name" id="branch_name" value="{{ ref }}"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="commit-changes">Commit changes</button></form>"""),
    "commits.html": page("""<h1>Commits</h1><p>Branch: <span class="ref-name gl-font-monospace">{{ ref }}</span>{% if path %} · path <span class="gl-font-monospace">{{ path }}</span>{% endif %}
· {% for b in branches %}<a href="{{ base }}/-/commits/{{ b }}">{{ b }}</a> {% endfor %}</p>
<form method="get"><input name="author" value="{{ author }}" placeholder="Author" aria-label="Filter by author"><button type="submit">Filter</button></form>
<div class="commits-list">{% for day, items in days %}<h2 class="commits-day">{{ day }} <span class="muted">{{ items|length }} commit{{ 's' if items|length != 1 }}</span></h2>
<ul>{% for c in items %}<li class="commit list-row"><a class="commit-row-message" href="{{ base }}/-/commit/{{ c.sha }}">{{ c.title }}</a>
<div class="committer"><span class="commit-author-name">{{ c.author_name }}</span> authored <time datetime="{{ c.authored.isoformat() }}">{{ c.authored|gitdate }}</time></div>
<span class="commit-sha gl-font-monospace">{{ c.short }}</span></li>{% endfor %}</ul>{% else %}<p>No commits.</p>{% endfor %}</div>
<p>{% if page > 1 %}<a href="{{ url_for_query(request.url.path, author=author, page=page - 1) }}">Prev</a>{% endif %}
{% if more %}<a href="{{ url_for_query(request.url.path, author=author, page=page + 1) }}">Next</a>{% endif %}</p>"""),
    "commit.html": page("""<h1>Commit <span class="gl-font-monospace commit-sha">{{ c.short }}</span></h1>
<p class="commit-meta">authored by <span class="commit-author-name">{{ c.author_name }}</span> &lt;<span class="commit-author-email">{{ c.author_email }}</span>&gt; · {{ c.authored|gitdate }}</p>
<p>Parent{{ 's' if c.parents|length > 1 }}: {% for p in c.parents %}<a class="gl-font-monospace" href="{{ base }}/-/commit/{{ p }}">{{ p[:8] }}</a> {% else %}none{% endfor %}</p>
<pre class="commit-description">{{ c.message }}</pre><h2>{{ files|length }} changed file{{ 's' if files|length != 1 }}</h2>
<ul class="diff-files">{% for kind, path in files %}<li>{{ kind }} <span class="gl-font-monospace">{{ path }}</span></li>{% endfor %}</ul>
<pre class="code diff">{{ diff }}</pre>"""),
    "branches.html": page("""<h1>Branches</h1><ul class="branches">{% for name, c in branches %}<li class="list-row branch-item">
<a class="branch-name gl-font-monospace" href="{{ base }}/-/tree/{{ name }}">{{ name }}</a>{% if name == project.default_branch %} <span class="badge">default</span>{% endif %}
· <a href="{{ base }}/-/commit/{{ c.sha }}">{{ c.short }}</a> {{ c.title }} · {{ c.authored|gitdate }}
{% if name != project.default_branch and can_push %} · <a href="{{ base }}/-/merge_requests/new?merge_request%5Bsource_branch%5D={{ name|urlencode }}">Merge request</a>{% endif %}</li>{% endfor %}</ul>"""),
    "contributors.html": page("""<h1>Contributors</h1><p>Commits to <span class="gl-font-monospace">{{ ref }}</span>, merge commits excluded.</p>
<ol class="contributors-list">{% for name, email, n in people %}<li class="list-row contributor"><b class="contributor-name">{{ name }}</b>
<span class="contributor-email">{{ email }}</span> · <span class="contributor-commits">{{ n }} commit{{ 's' if n != 1 }}</span></li>{% endfor %}</ol>"""),
    "starrers.html": page("""<h1>Starrers</h1><p>{{ project.stars }} stars in all.</p><ul>{% for u in people %}<li><a href="/{{ u.username }}">{{ u.name }}</a> @{{ u.username }}</li>{% else %}<li>Nobody you can see.</li>{% endfor %}</ul>"""),
    "fork.html": page("""<h1>Fork project</h1><form method="post" action="{{ base }}/-/forks">
<label>Project name <input name="name" value="{{ project.name }}"></label><label>Project slug <input name="path" value="{{ project.path }}"></label>
<p>Namespace: {{ user }}</p>{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="fork-project">Fork project</button></form>"""),

    # ---- issues ----
    "issues.html": page("""<h1>Issues</h1><p class="tabs issues-state-filters">{% for st, label in [('opened', 'Open'), ('closed', 'Closed'), ('all', 'All')] %}
<a href="{{ url_for_query(request.url.path, state=st, search=search, sort=sort) }}" {% if st == state %}class="active"{% endif %}>{{ label }} <span class="badge">{{ counts[st] }}</span></a>{% endfor %}</p>
{% if project and user %}<p><a class="btn new-issue" href="{{ base }}/-/issues/new">New issue</a></p>{% endif %}
<form method="get" class="filtered-search"><input type="hidden" name="state" value="{{ state }}"><input name="search" value="{{ search }}" placeholder="Search or filter results..." aria-label="Search issues"><button type="submit">Search</button></form>
{% if filters %}<p class="muted">Filtered by {% for f in filters %}<span class="badge">{{ f }}</span> {% endfor %}</p>{% endif %}
<p>Sort: {% for key, label in sorts %}<a href="{{ url_for_query(request.url.path, state=state, search=search, sort=key) }}" {% if key == sort %}class="active"{% endif %}>{{ label }}</a> {% endfor %}</p>
<ul class="issues-list">{% for i in issues %}<li class="list-row issue" data-iid="{{ i.iid }}">
<a class="issue-title-text" href="/{{ i.namespace }}/{{ i.path }}/-/issues/{{ i.iid }}">{{ i.title }}</a> {% if i.state == 'closed' %}<span class="badge closed">CLOSED</span>{% endif %}
{{ labels_of(i.labels) }}<div class="muted issuable-info">{% if not project %}{{ i.namespace }}/{{ i.path }}{% endif %}#{{ i.iid }} · created {{ i.created|date }} by {{ person(i.author, names) }}
{% if i.milestone %} · <span class="milestone">{{ i.milestone }}</span>{% endif %}{% if i.due_date %} · due {{ i.due_date|day }}{% endif %}
{% if i.assignees %} · assigned to {% for a in i.assignees %}{{ person(a, names) }} {% endfor %}{% endif %} · {{ i.n_notes }} comments · updated {{ i.updated|date }}</div></li>
{% else %}<li class="empty">No issues match.</li>{% endfor %}</ul>
<p>{% if page > 1 %}<a href="{{ url_for_query(request.url.path, state=state, search=search, sort=sort, page=page - 1) }}">Prev</a>{% endif %}
{% if more %}<a href="{{ url_for_query(request.url.path, state=state, search=search, sort=sort, page=page + 1) }}">Next</a>{% endif %}</p>"""),
    "issue.html": page("""<div class="issuable"><div class="issuable-main"><div class="detail-page-header">{{ state_badge(i.state) }}
<span class="muted">Issue created {{ i.created|date }} by {{ person(i.author, names) }}</span></div>
<h1 class="title" data-qa-selector="title_content">{{ i.title }}</h1>
<div class="detail-page-description"><div class="description md">{{ i.description|md }}</div></div>
{% if user %}<form class="inline" method="post" action="{{ here }}/{{ 'reopen' if i.state == 'closed' else 'close' }}">
<button type="submit" class="btn state-btn">{{ 'Reopen issue' if i.state == 'closed' else 'Close issue' }}</button></form>{% endif %}
{% include "notes.html" %}</div>
<aside class="right-sidebar" aria-label="Issue details">
<div class="block assignee"><div class="title">Assignee</div><div class="value">{% for a in assignees %}{{ person(a.username, names) }} <span class="muted">@{{ a.username }}</span>{% else %}None{% endfor %}</div>
{% if can_edit %}<form method="post" action="{{ here }}/update"><input type="hidden" name="field" value="assignee">
<input name="assignee_username" aria-label="Assignee username" placeholder="username"><button type="submit" class="assign-btn">Assign</button>
{% if user not in assignees|map(attribute='username') %}<button type="submit" name="assignee_username" value="{{ user }}" class="assign-self">assign yourself</button>{% endif %}
{% if assignees %}<button type="submit" name="assignee_username" value="-" class="unassign">Unassign</button>{% endif %}</form>{% endif %}</div>
<div class="block labels"><div class="title">Labels</div><div class="value">{{ labels_of(labels) if labels else 'None' }}</div>
{% if can_edit %}<form method="post" action="{{ here }}/update"><input type="hidden" name="field" value="labels">
{% for l in all_labels %}<label class="label-option"><input type="checkbox" name="label_{{ l.id }}" {% if l.id in label_ids %}checked{% endif %}> {{ l.title }}</label>{% endfor %}
<button type="submit" class="labels-btn">Apply labels</button></form>{% endif %}</div>
<div class="block milestone"><div class="title">Milestone</div><div class="value">{% if milestone %}<a href="{{ base }}/-/milestones/{{ milestone.iid }}">{{ milestone.title }}</a>{% else %}None{% endif %}</div>
{% if can_edit and milestones %}<form method="post" action="{{ here }}/update"><input type="hidden" name="field" value="milestone">
<select name="milestone_id" aria-label="Milestone"><option value="">No milestone</option>{% for m in milestones %}<option value="{{ m.id }}" {% if milestone and m.id == milestone.id %}selected{% endif %}>{{ m.title }}</option>{% endfor %}</select><button type="submit">Set milestone</button></form>{% endif %}</div>
<div class="block due_date" data-testid="sidebar-due-date"><div class="title">Due date</div><div class="value">{{ i.due_date|day if i.due_date else 'None' }}</div>
{% if can_edit %}<form method="post" action="{{ here }}/update"><input type="hidden" name="field" value="due_date">
<input name="due_date" aria-label="Due date" value="{{ i.due_date }}" placeholder="YYYY-MM-DD"><button type="submit" class="due-date-btn">Set due date</button></form>{% endif %}</div>
</aside></div>"""),
    "notes.html": IMPORT + """<h2>Activity</h2><ul id="notes-list" class="notes main-notes-list">{% for n in notes %}<li class="note timeline-entry" id="note_{{ n.id }}">
<div class="note-header">{{ person(n.author, names) }} <span class="muted">@{{ n.author }} · {{ n.created|date }}</span></div>
<div class="timeline-discussion-body"><div class="note-text md">{{ n.body|md }}</div></div></li>{% endfor %}</ul>
{% if user %}<form method="post" action="{{ here }}/notes" class="new-note"><label>Add a comment <textarea name="note" id="note-body" placeholder="Write a comment or drag your files here..."></textarea></label>
<button type="submit" class="comment-btn">Comment</button></form>{% else %}<p><a href="/users/sign_in">Sign in</a> to comment.</p>{% endif %}""",
    "issue_new.html": page("""<h1>New issue</h1><form method="post" action="{{ base }}/-/issues/new" class="issue-form">
<label>Title (required) <input name="title" id="issue_title" value="{{ form.title }}"></label>
<label>Description <textarea name="description" id="issue_description">{{ form.description }}</textarea></label>
<label>Assignee <input name="assignee_username" id="issue_assignee" value="{{ form.assignee_username }}" placeholder="username"></label>
<fieldset><legend>Labels</legend>{% for l in all_labels %}<label class="label-option"><input type="checkbox" name="label_{{ l.id }}"> {{ l.title }}</label>{% endfor %}</fieldset>
{% if milestones %}<label>Milestone <select name="milestone_id"><option value="">No milestone</option>{% for m in milestones %}<option value="{{ m.id }}">{{ m.title }}</option>{% endfor %}</select></label>{% endif %}
<label>Due date <input name="due_date" id="issue_due_date" value="{{ form.due_date }}" placeholder="YYYY-MM-DD"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="create-issue">Create issue</button></form>"""),

    # ---- merge requests ----
    "mrs.html": page("""<h1>Merge requests</h1><p class="tabs mr-state-filters">{% for st, label in [('opened', 'Open'), ('merged', 'Merged'), ('closed', 'Closed'), ('all', 'All')] %}
<a href="{{ url_for_query(request.url.path, state=st, search=search, **extra) }}" {% if st == state %}class="active"{% endif %}>{{ label }} <span class="badge">{{ counts[st] }}</span></a>{% endfor %}</p>
{% if project and can_push %}<p><a class="btn new-mr" href="{{ base }}/-/merge_requests/new">New merge request</a></p>{% endif %}
{% if not project and user %}<p class="tabs dashboard-mr-scopes"><a href="/dashboard/merge_requests?assignee_username={{ user }}" {% if extra.get('assignee_username') == user %}class="active"{% endif %}>Assigned to you</a>
<a href="/dashboard/merge_requests?reviewer_username={{ user }}" class="review-requests {% if extra.get('reviewer_username') == user %}active{% endif %}">Review requests for you</a></p>{% endif %}
<form method="get"><input type="hidden" name="state" value="{{ state }}">{% for k, v in extra.items() %}<input type="hidden" name="{{ k }}" value="{{ v }}">{% endfor %}<input name="search" value="{{ search }}" placeholder="Search or filter results..." aria-label="Search merge requests"><button type="submit">Search</button></form>
{% if filters %}<p class="muted">Filtered by {% for f in filters %}<span class="badge">{{ f }}</span> {% endfor %}</p>{% endif %}
<ul class="mr-list">{% for m in mrs %}<li class="list-row merge-request" data-iid="{{ m.iid }}">
<a class="merge-request-title-text" href="/{{ m.namespace }}/{{ m.path }}/-/merge_requests/{{ m.iid }}">{{ m.title }}</a> {% if m.state != 'opened' %}{{ state_badge(m.state) }}{% endif %}
<div class="muted issuable-info">{% if not project %}{{ m.namespace }}/{{ m.path }}{% endif %}!{{ m.iid }} · created {{ m.created|date }} by {{ person(m.author, names) }}
· <span class="gl-font-monospace">{{ m.source_branch }}</span> → <span class="gl-font-monospace">{{ m.target_branch }}</span>
{% if m.assignees %} · assigned to {% for a in m.assignees %}{{ person(a, names) }} {% endfor %}{% endif %}
{% if m.reviewers %} · review by {% for a in m.reviewers %}{{ person(a, names) }} {% endfor %}{% endif %} · {{ m.n_notes }} comments · updated {{ m.updated|date }}</div></li>
{% else %}<li class="empty">No merge requests match.</li>{% endfor %}</ul>
<p>{% if page > 1 %}<a href="{{ url_for_query(request.url.path, state=state, search=search, page=page - 1, **extra) }}">Prev</a>{% endif %}
{% if more %}<a href="{{ url_for_query(request.url.path, state=state, search=search, page=page + 1, **extra) }}">Next</a>{% endif %}</p>"""),
    "mr.html": page("""<div class="issuable"><div class="issuable-main"><div class="detail-page-header">{{ state_badge(m.state) }}
<span class="muted">Merge request !{{ m.iid }} created {{ m.created|date }} by {{ person(m.author, names) }}</span></div>
<h1 class="title" data-qa-selector="title_content">{{ m.title }}</h1>
<div class="detail-page-description">{{ person(m.author, names) }} requested to merge <a class="gl-font-monospace source-branch" href="{{ base }}/-/tree/{{ m.source_branch }}">{{ m.source_branch }}</a> into <a class="gl-font-monospace target-branch" href="{{ base }}/-/tree/{{ m.target_branch }}">{{ m.target_branch }}</a></div>
<div class="description md mr-description">{{ m.description|md }}</div>
<div class="mr-widget">{% if m.state == 'merged' %}<p class="mr-merged">Merged by {{ person(m.merged_by, names) }} {{ m.updated|date }}
{% if m.merge_commit %}· merge commit <a class="gl-font-monospace" href="{{ base }}/-/commit/{{ m.merge_commit }}">{{ m.merge_commit[:8] }}</a>{% endif %}</p>
{% elif m.state == 'closed' %}<p>Closed {{ m.updated|date }}.</p>{% if can_push %}<form method="post" action="{{ here }}/reopen"><button type="submit" class="btn">Reopen merge request</button></form>{% endif %}
{% else %}<p>{{ commits|length }} commit{{ 's' if commits|length != 1 }} to merge.{% if blocked %} <span class="error">{{ blocked }}</span>{% endif %}</p>
{% if can_push %}<form class="inline" method="post" action="{{ here }}/merge"><button type="submit" class="btn merge-btn" {% if blocked %}disabled{% endif %}>Merge</button></form>{% endif %}
{% if user == m.author or can_push %}<form class="inline" method="post" action="{{ here }}/close"><button type="submit" class="btn">Close merge request</button></form>{% endif %}{% endif %}</div>
{% if commits %}<h2>Commits</h2><ul class="mr-commits">{% for c in commits %}<li><a class="gl-font-monospace" href="{{ base }}/-/commit/{{ c.sha }}">{{ c.short }}</a> {{ c.title }} · {{ c.author_name }}</li>{% endfor %}</ul>{% endif %}
{% include "notes.html" %}</div>
<aside class="right-sidebar" aria-label="Merge request details">
<div class="block assignee"><div class="title">Assignee</div><div class="value">{% for a in assignees %}{{ person(a.username, names) }} <span class="muted">@{{ a.username }}</span>{% else %}None{% endfor %}</div>
{% if can_edit %}<form method="post" action="{{ here }}/update"><input type="hidden" name="field" value="assignee"><input name="assignee_username" aria-label="Assignee username" placeholder="username">
<button type="submit" class="assign-btn">Assign</button>{% if assignees %}<button type="submit" name="assignee_username" value="-" class="unassign">Unassign</button>{% endif %}</form>{% endif %}</div>
<div class="block reviewer"><div class="title">Reviewer</div><div class="value">{% for a in reviewers %}{{ person(a.username, names) }} <span class="muted">@{{ a.username }}</span>{% else %}None{% endfor %}</div>
{% if can_edit %}<form method="post" action="{{ here }}/update"><input type="hidden" name="field" value="reviewer"><input name="reviewer_username" aria-label="Reviewer username" placeholder="username">
<button type="submit" class="reviewer-btn">Request review</button>{% if reviewers %}<button type="submit" name="reviewer_username" value="-" class="unassign">Remove reviewer</button>{% endif %}</form>{% endif %}</div>
</aside></div>"""),
    "mr_new.html": page("""<h1>New merge request</h1><form method="post" action="{{ base }}/-/merge_requests/new" class="merge-request-form">
<label>Source branch <input name="merge_request[source_branch]" id="merge_request_source_branch" value="{{ form.source }}" list="branch-names"></label>
<label>Target branch <input name="merge_request[target_branch]" id="merge_request_target_branch" value="{{ form.target }}" list="branch-names"></label>
<datalist id="branch-names">{% for b in branches %}<option value="{{ b }}">{% endfor %}</datalist>
<p class="muted">Branches: {% for b in branches %}<span class="gl-font-monospace">{{ b }}</span> {% endfor %}</p>
<label>Title (required) <input name="merge_request[title]" id="merge_request_title" value="{{ form.title }}"></label>
<label>Description <textarea name="merge_request[description]" id="merge_request_description">{{ form.description }}</textarea></label>
<label>Assignee <input name="merge_request[assignee_username]" id="merge_request_assignee" value="{{ form.assignee }}" placeholder="username"></label>
<label>Reviewer <input name="merge_request[reviewer_username]" id="merge_request_reviewer" value="{{ form.reviewer }}" placeholder="username"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="create-merge-request">Create merge request</button></form>"""),

    # ---- labels, milestones, members ----
    "labels.html": page("""<h1>Labels</h1>{% if can_edit %}<p><a class="btn" href="{{ base }}/-/labels/new">New label</a></p>{% endif %}
<ul class="labels-list">{% for l in labels %}<li class="list-row label-row">{{ labels_of([l]) }} <span class="label-description">{{ l.description }}</span>
· <a href="{{ base }}/-/issues/?label_name%5B%5D={{ l.title|urlencode }}">{{ l.n_open }} open issues</a></li>{% else %}<li>No labels.</li>{% endfor %}</ul>"""),
    "label_new.html": page("""<h1>New label</h1><form method="post" action="{{ base }}/-/labels"><label>Title <input name="title" id="label_title"></label>
<label>Description <input name="description" id="label_description"></label><label>Background color <input name="color" id="label_color" value="#6699cc"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="create-label">Create label</button></form>"""),
    "milestones.html": page("""<h1>Milestones</h1><p class="tabs">{% for st, label in [('active', 'Open'), ('closed', 'Closed'), ('all', 'All')] %}<a href="?state={{ st }}" {% if st == state %}class="active"{% endif %}>{{ label }}</a>{% endfor %}</p>
{% if can_edit %}<p><a class="btn" href="{{ base }}/-/milestones/new">New milestone</a></p>{% endif %}
<ul class="milestones">{% for m in milestones %}<li class="list-row milestone-row"><a href="{{ base }}/-/milestones/{{ m.iid }}" class="milestone-title">{{ m.title }}</a>
<span class="muted">{{ m.start_date|day if m.start_date else 'No start date' }} – {{ m.due_date|day if m.due_date else 'No due date' }}</span> · {{ m.n_issues }} issues{% if m.state == 'closed' %} <span class="badge closed">Closed</span>{% endif %}</li>{% else %}<li>No milestones.</li>{% endfor %}</ul>"""),
    "milestone.html": page("""<div class="issuable"><div class="issuable-main"><p>{% if m.state == 'closed' %}<span class="badge closed">Closed</span>{% else %}<span class="badge opened">Open</span>{% endif %} Milestone</p>
<h1 class="milestone-title title">{{ m.title }}</h1><div class="milestone-description md">{{ m.description|md }}</div>
<h2>Issues</h2><ul>{% for i in issues %}<li><a href="{{ base }}/-/issues/{{ i.iid }}">{{ i.title }}</a> {% if i.state == 'closed' %}<span class="badge closed">Closed</span>{% endif %}</li>{% else %}<li>No issues.</li>{% endfor %}</ul></div>
<aside class="right-sidebar"><div class="block start_date"><div class="title">Start date</div><div class="value">{{ m.start_date|day if m.start_date else 'No start date' }}</div></div>
<div class="block due_date"><div class="title">Due date</div><div class="value">{{ m.due_date|day if m.due_date else 'No due date' }}</div></div></aside></div>"""),
    "milestone_new.html": page("""<h1>New milestone</h1><form method="post" action="{{ base }}/-/milestones/new"><label>Title <input name="title" id="milestone_title"></label>
<label>Start Date <input name="start_date" id="milestone_start_date" placeholder="YYYY-MM-DD"></label><label>Due Date <input name="due_date" id="milestone_due_date" placeholder="YYYY-MM-DD"></label>
<label>Description <textarea name="description" id="milestone_description"></textarea></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="create-milestone">Create milestone</button></form>"""),
    "members.html": page("""<h1>{{ heading }}</h1><p class="muted">{{ rows|length }} member{{ 's' if rows|length != 1 }} can reach {{ what }}.</p>
{% if editable %}{{ invite_form(action_base) }}{% endif %}{% if error %}<p class="error">{{ error }}</p>{% endif %}
{{ members_table(rows, names, editable, action_base) }}"""),

    # ---- people and groups ----
    "profile.html": page("""<div class="user-profile"><div class="profile-header"><h1 class="user-name">{{ u.name }}</h1>
<p class="user-username">@{{ u.username }}</p>{% if u.status %}<div class="cover-status"><span class="status-emoji" aria-hidden="true">💬 </span>{{ u.status }}</div>{% endif %}
{% if u.location %}<p class="user-location">{{ u.location }}</p>{% endif %}
{% if u.website %}<p><a itemprop="url" href="{{ u.website }}" rel="nofollow noreferrer" class="user-website">{{ u.website|website }}</a></p>{% endif %}
{% if u.bio %}<p class="profile-user-bio">{{ u.bio }}</p>{% endif %}
<p><a href="/users/{{ u.username }}/followers">{{ followers }} followers</a> · <a href="/users/{{ u.username }}/following">{{ following }} following</a> · <a href="/users/{{ u.username }}/starred">Starred projects</a></p>
{% if user and user != u.username %}<form method="post" action="/users/{{ u.username }}/{{ 'unfollow' if i_follow else 'follow' }}"><button type="submit" class="follow-btn">{{ 'Unfollow' if i_follow else 'Follow' }}</button></form>{% endif %}</div>
<h2>Personal projects</h2><ul class="projects-list" data-qa-selector="projects_list">{% for p in projects %}<li class="list-row"><a href="/{{ p.namespace }}/{{ p.path }}">{{ p.name }}</a> <span class="muted">{{ p.description }}</span></li>{% else %}<li>No projects.</li>{% endfor %}</ul>
<h2>Groups</h2><ul>{% for g in groups %}<li><a href="/{{ g.path }}">{{ g.name }}</a></li>{% else %}<li>None.</li>{% endfor %}</ul></div>"""),
    "people.html": page("""<div class="user-profile"><h1>{{ heading }}</h1><ul class="people-list">{% for p in people %}<li class="list-row user-card">
<a href="/{{ p.username }}" class="user-card-name">{{ p.name }}</a> <span class="user-card-username">@{{ p.username }}</span></li>{% else %}<li>Nobody yet.</li>{% endfor %}</ul></div>"""),
    "starred.html": page("""<div class="user-profile"><h1>{{ heading }}</h1><ul class="projects-list" data-qa-selector="projects_list">{% for p in projects %}<li class="list-row">
<a href="/{{ p.namespace }}/{{ p.path }}" class="project-name">{{ names.get(p.namespace, p.namespace) }} / {{ p.name }}</a> <span class="stars">★ {{ p.stars }}</span></li>{% else %}<li>No starred projects.</li>{% endfor %}</ul></div>"""),
    "group.html": page("""<h1 class="group-title">{{ g.name }}</h1><p class="muted">Group ID path: {{ g.path }}</p><p class="group-description">{{ g.description }}</p>
<p><a href="/groups/{{ g.path }}/-/group_members">Members ({{ n_members }})</a>{% if can_create %} · <a href="/projects/new?namespace={{ g.path }}">New project</a>{% endif %}</p>
<h2>Subgroups and projects</h2><ul class="projects-list" data-qa-selector="projects_list">{% for p in projects %}<li class="list-row"><a href="/{{ p.namespace }}/{{ p.path }}">{{ p.name }}</a>
<span class="visibility-icon" title="{{ p.visibility|capitalize }}">[{{ p.visibility }}]</span> <span class="muted">{{ p.description }}</span> ★ {{ p.stars }}</li>{% else %}<li>No projects.</li>{% endfor %}</ul>"""),
    "groups.html": page("""<h1>Groups</h1>{% if user %}<p><a class="btn" href="/groups/new">New group</a></p>{% endif %}<ul>{% for g in groups %}<li class="list-row"><a href="/{{ g.path }}">{{ g.name }}</a> <span class="muted">{{ g.description }}</span></li>{% else %}<li>No groups.</li>{% endfor %}</ul>"""),
    "group_new.html": page("""<h1>Create group</h1><form method="post" action="/groups/new"><label>Group name <input name="name" id="group_name"></label>
<label>Group URL <input name="path" id="group_path"></label><label>Description <input name="description"></label>
<fieldset><legend>Visibility level</legend>{% for v in visibilities %}<label><input type="radio" name="visibility" value="{{ v }}" {% if v == 'private' %}checked{% endif %}> {{ v|capitalize }}</label>{% endfor %}</fieldset>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="create-group">Create group</button></form>"""),
    "edit_profile.html": page("""<h1>Edit Profile</h1><form method="post" action="/-/profile" class="edit-user">
<label>Full name <input name="name" id="user_name" value="{{ u.name }}"></label>
<label>Your status <input name="status" id="user_status_message" value="{{ u.status }}" placeholder="What's your status?"></label>
<label>Website url <input name="website" id="user_website_url" value="{{ u.website }}"></label>
<label>Location <input name="location" id="user_location" value="{{ u.location }}"></label>
<label>Bio <textarea name="bio" id="user_bio">{{ u.bio }}</textarea></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="update-profile">Update profile settings</button></form>
<p><a href="/-/profile/personal_access_tokens">Access Tokens</a></p>"""),
    "tokens.html": page("""<h1>Personal Access Tokens</h1><p>Use a token with the REST API: send it in the <code>PRIVATE-TOKEN</code> header.</p>
<p>Your token: <input readonly id="personal-access-token" value="{{ t.private_token }}" aria-label="Personal access token"></p>
<h2>Feed token</h2><p>Your feed token authenticates you when your RSS reader loads a personalised RSS feed.</p>
<p><input readonly id="feed_token" value="{{ t.feed_token }}" aria-label="Feed token"></p>"""),
    "todos.html": page("""<h1>To-Do List</h1><p class="tabs"><a href="/dashboard/todos" {% if state == 'pending' %}class="active"{% endif %}>To Do <span class="badge">{{ counts.pending }}</span></a>
<a href="/dashboard/todos?state=done" {% if state == 'done' %}class="active"{% endif %}>Done <span class="badge">{{ counts.done }}</span></a></p>
<ul class="todos-list">{% for t in todos %}<li class="list-row todo">{{ person(t.author, names) }} {{ {'assigned': 'assigned you', 'review_requested': 'requested a review of', 'mentioned': 'mentioned you on'}.get(t.action, t.action) }}
{{ 'issue' if t.target_type == 'Issue' else 'merge request' }} <a href="{{ t.url }}" class="todo-target">{{ t.ref }} "{{ t.title }}"</a> at {{ t.project }} · {{ t.created|date }}
{% if t.state == 'pending' %}<form class="inline" method="post" action="/dashboard/todos/{{ t.id }}/mark_as_done"><button type="submit" class="btn">Mark as done</button></form>{% endif %}</li>
{% else %}<li>Nothing to do.</li>{% endfor %}</ul>"""),
    "new_project.html": page("""<h1>Create new project</h1><form method="post" action="/projects/new" class="new-project">
<label>Project name <input name="name" id="project_name" value="{{ form.name }}"></label>
<label>Project slug <input name="path" id="project_path" value="{{ form.path }}" placeholder="my-awesome-project (from the name when empty)"></label>
<fieldset class="namespaces"><legend>Project URL: namespace</legend>{% for ns in namespaces %}<label><input type="radio" name="namespace" value="{{ ns }}" {% if ns == form.namespace %}checked{% endif %}> {{ ns }}</label>{% endfor %}</fieldset>
<label>Project description (optional) <textarea name="description" id="project_description">{{ form.description }}</textarea></label>
<fieldset class="visibility-level"><legend>Visibility Level</legend>{% for v, words in visibilities %}<label><input type="radio" name="visibility" value="{{ v }}" id="project_visibility_level_{{ v }}" {% if v == form.visibility %}checked{% endif %}> {{ v|capitalize }}: {{ words }}</label>{% endfor %}</fieldset>
<fieldset class="templates"><legend>Template</legend><label><input type="radio" name="template" value="" checked> None (blank project)</label>{% for t in templates %}<label><input type="radio" name="template" value="{{ t }}"> {{ t }}</label>{% endfor %}</fieldset>
<label><input type="checkbox" name="initialize_with_readme" id="project_initialize_with_readme" {% if form.readme %}checked{% endif %}> Initialize repository with a README</label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="create-project">Create project</button></form>"""),
    "search.html": page("""<h1>Search</h1><form method="get" action="/search"><input name="search" value="{{ q }}" aria-label="Search for"><input type="hidden" name="scope" value="{{ scope }}"><button type="submit">Search</button></form>
<p class="tabs search-scopes">{% for key, label in scopes %}<a href="{{ url_for_query('/search', search=q, scope=key) }}" {% if key == scope %}class="active"{% endif %}>{{ label }} <span class="badge">{{ counts[key] }}</span></a>{% endfor %}</p>
<ul class="search-results">{% for r in results %}<li class="list-row search-result"><a href="{{ r.url }}">{{ r.title }}</a> <span class="muted">{{ r.where }}</span><p>{{ r.text }}</p></li>{% else %}<li>We couldn't find any {{ scope|replace('_', ' ') }} matching <b>{{ q }}</b>.</li>{% endfor %}</ul>"""),
}
