"""The report's one HTML page: a jinja2 template with its CSS inline, so the file is self-contained
(no network, no second file) and can be mailed, attached to an issue, or opened years later."""

from __future__ import annotations

PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
  :root { --ink:#1d2430; --muted:#667085; --line:#e3e7ee; --paper:#eef1f6; --ours:#3b6ea8; --bad:#b42318; --ok:#067647; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
         color:var(--ink); background:#f7f8fa; }
  main { max-width:1240px; margin:0 auto; padding:28px 28px 60px; }
  header.run { background:white; border:1px solid var(--line); border-radius:10px; padding:20px 24px; }
  h1 { font-size:22px; margin:0 0 6px; }
  h2 { font-size:17px; margin:34px 0 12px; padding-bottom:6px; border-bottom:2px solid var(--line); }
  h3 { font-size:14px; margin:18px 0 8px; }
  .muted { color:var(--muted); }
  .pill { display:inline-block; padding:2px 10px; border-radius:999px; font-size:12px; font-weight:600;
          vertical-align:middle; margin-left:8px; }
  .pill.completed { background:#dcfae6; color:var(--ok); }
  .pill.failed, .pill.timeout, .pill.interrupted { background:#fee4e2; color:var(--bad); }
  .pill.stopped, .pill.recorded { background:#eef1f6; color:var(--muted); }
  dl.facts { display:grid; grid-template-columns:repeat(auto-fill,minmax(210px,1fr)); gap:6px 18px; margin:14px 0 0; }
  dl.facts div { min-width:0; }
  dl.facts dt { font-size:11px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
  dl.facts dd { margin:0; font-weight:600; overflow-wrap:anywhere; }
  .cards { display:flex; flex-wrap:wrap; gap:12px; }
  .metric { background:white; border:1px solid var(--line); border-radius:8px; padding:10px 14px; min-width:120px; }
  .metric .v { font-size:20px; font-weight:650; }
  .metric .k { font-size:12px; color:var(--muted); }
  .tables { display:flex; flex-wrap:wrap; gap:18px; align-items:flex-start; }
  .tablebox { background:white; border:1px solid var(--line); border-radius:8px; padding:10px 12px; overflow-x:auto; max-width:100%; }
  .tablebox h3 { margin:0 0 8px; }
  .tablebox.scroll { max-height:520px; overflow-y:auto; }
  table { border-collapse:collapse; font-variant-numeric:tabular-nums; }
  th, td { padding:4px 10px; text-align:right; border-bottom:1px solid var(--line); white-space:nowrap; }
  th { font-size:12px; color:var(--muted); font-weight:600; }
  th.group { text-align:center; color:var(--ink); border-bottom:1px solid #c9d0db; }
  td:first-child, th:first-child { text-align:left; }
  td.prose { white-space:normal; text-align:left; min-width:18em; max-width:40em; overflow-wrap:anywhere; }
  td.paper, th.paper, tr.paper td { background:var(--paper); color:#475467; font-style:italic; }
  tr.ours td { font-weight:650; }
  tr:last-child td { border-bottom:none; }
  .note { font-size:12px; color:var(--muted); margin-top:6px; }
  .plots img { max-width:100%; background:white; border:1px solid var(--line); border-radius:8px; margin:0 12px 12px 0; }
  section.episode { background:white; border:1px solid var(--line); border-radius:10px; padding:14px 16px; margin:0 0 16px; }
  section.episode h3 { margin:0 0 4px; }
  .strip { display:flex; gap:10px; overflow-x:auto; padding:10px 2px 6px; }
  .step { flex:0 0 184px; border:1px solid var(--line); border-radius:8px; padding:8px; background:#fcfcfd; }
  .step img { display:block; width:100%; height:auto; border-radius:4px; image-rendering:auto; background:#eee; }
  .step .obs { font:11px/1.35 ui-monospace,SFMono-Regular,Menlo,monospace; white-space:pre-wrap; max-height:110px;
               overflow:hidden; color:#344054; background:#f2f4f7; border-radius:4px; padding:6px; margin:0; }
  .step .head { display:flex; justify-content:space-between; font-size:12px; margin:6px 0 4px; }
  .step .act { font-weight:650; color:var(--ours); overflow-wrap:anywhere; }
  .step .act.invalid { color:var(--bad); }
  .step .why { font-size:11.5px; color:#475467; max-height:140px; overflow:auto; white-space:pre-wrap; overflow-wrap:anywhere;
               border-left:3px solid var(--line); padding-left:6px; margin-top:4px; }
  .step.done { border-color:#98a2b3; }
  section.pics { background:white; border:1px solid var(--line); border-radius:10px; padding:14px 16px; margin:0 0 16px; }
  section.pics h3 { margin:0 0 4px; }
  .picrow { margin:12px 0 0; }
  .picrow .caption { font-size:12.5px; font-weight:600; color:#344054; margin-bottom:6px; }
  .pictures { display:flex; gap:12px; align-items:flex-start; }
  .pictures figure { flex:1 1 0; min-width:0; margin:0; }
  .pictures img { display:block; max-width:100%; height:auto; border:1px solid var(--line); border-radius:4px; background:#eee; }
  .pictures figcaption { font-size:12px; color:var(--muted); margin-top:4px; }
  .pictures figcaption b { color:var(--ink); }
  ul.notes { margin:14px 0 0; padding:10px 14px 10px 30px; background:white; border:1px solid var(--line);
             border-radius:8px; font-size:12.5px; color:#475467; }
  section.group > .muted { margin:-4px 0 12px; }
  footer { margin-top:40px; font-size:12px; color:var(--muted); }
</style>
</head>
<body>
<main>
<header class="run">
  <h1>{{ title }}{% if summary.status %} <span class="pill {{ summary.status }}">{{ summary.status }}</span>{% endif %}</h1>
  <div class="muted">{{ summary.reason }}</div>
  <dl class="facts">
    {% for k, v in facts %}<div><dt>{{ k }}</dt><dd>{{ v }}</dd></div>{% endfor %}
  </dl>
</header>

{% if headline %}
<h2>Results</h2>
<div class="cards">
  {% for k, v in headline %}<div class="metric"><div class="v">{{ v }}</div><div class="k">{{ k }}</div></div>{% endfor %}
</div>
{% endif %}

{% for name, tables in sections %}
<h2>{{ name }}</h2>
<div class="tables">
{% for t in tables %}
  <div class="tablebox">
    <h3>{{ t.title }}</h3>
    <table>
      {% if t.groups %}<tr>{% for label, span in t.groups %}<th class="group" colspan="{{ span }}">{{ label }}</th>{% endfor %}</tr>{% endif %}
      <tr>{% for c in t.columns %}<th class="{{ 'paper' if loop.index0 in t.paper else '' }}">{{ c }}</th>{% endfor %}</tr>
      {% for row in t.rows %}
      {% set r = loop.index0 %}
      <tr class="{{ 'paper' if r in t.paper_rows else ('ours' if t.paper_rows else '') }}">
        {% for v in row %}<td class="{{ 'paper' if loop.index0 in t.paper else '' }}{{ ' prose' if v is string and v|length > 40 else '' }}">{{ fmt(v) }}</td>{% endfor %}
      </tr>
      {% endfor %}
    </table>
    {% if t.note or t.paper or t.paper_rows %}<div class="note">{{ t.note }}{% if t.paper or t.paper_rows %}{{ '; ' if t.note else '' }}shaded: the paper's published numbers{% endif %}</div>{% endif %}
  </div>
{% endfor %}
</div>
{% endfor %}

{% if notes %}
<ul class="notes">{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>
{% endif %}

{% if plots %}
<h2>Plots</h2>
<div class="plots">
  {% for alt, uri in plots %}<img alt="{{ alt }}" title="{{ alt }}" src="{{ uri }}">{% endfor %}
</div>
{% endif %}

{% if episode_table %}
<h2>Episodes</h2>
<div class="tables"><div class="tablebox scroll">
  <table>
    <tr>{% for c in episode_table.columns %}<th>{{ c }}</th>{% endfor %}</tr>
    {% for row in episode_table.rows %}<tr>{% for v in row %}<td>{{ fmt(v) }}</td>{% endfor %}</tr>{% endfor %}
  </table>
  {% if episode_table.note %}<div class="note">{{ episode_table.note }}</div>{% endif %}
</div></div>
{% endif %}

{% if galleries %}
<h2>Images</h2>
<div class="muted">What nodes kept of each episode (the target beside what the agent made), with the episode's results{% if galleries|length < gallery_total %}; the first {{ galleries|length }} of {{ gallery_total }} episodes with pictures{% endif %}.</div>
{% for g in galleries %}
<section class="pics">
  <h3>{{ g.episode }} <span class="pill {{ g.status }}">{{ g.status }}</span></h3>
  <div class="muted score">{% for k, v in g.metrics.items() %}{{ ' · ' if not loop.first else '' }}{{ k }} <b>{{ fmt(v) }}</b>{% endfor %}</div>
  {% for row in g.rows %}
  <div class="picrow">
    {% if row.caption %}<div class="caption">{{ row.caption }}</div>{% endif %}
    <div class="pictures">
    {% for p in row.pictures %}
      <figure><a href="{{ p.link }}"><img alt="{{ g.episode }}: {{ p.label }}" title="{{ p.label }} ({{ p.size[0] }}x{{ p.size[1] }})" src="{{ p.uri }}"></a>
        <figcaption><b>{{ p.label }}</b></figcaption></figure>
    {% endfor %}
    </div>
  </div>
  {% endfor %}
  {% if g.hidden_rows %}<div class="note">{{ g.hidden_rows }} more rows in the run folder's media/</div>{% endif %}
  {% for note in g.skipped %}<div class="note skipped">{{ note }}</div>{% endfor %}
</section>
{% endfor %}
{% endif %}

{% macro strip_section(s) %}
<section class="episode">
  <h3>{{ s.episode }}{% if s.caption %} <span class="muted">· {{ s.caption }}</span>{% endif %} <span class="pill {{ s.status }}">{{ s.status }}</span></h3>
  <div class="muted">{{ s.decisions }} decisions{% if s.cards|length < s.decisions %}, {{ s.cards|length }} shown{% endif %}
    {% for k, v in s.metrics.items() %} · {{ k }} {{ fmt(v) }}{% endfor %}</div>
  <div class="strip">
  {% for c in s.cards %}
    <div class="step{{ ' done' if c.done else '' }}">
      {% if c.image %}<img alt="{{ s.episode }} t={{ c.t }}" src="{{ c.image }}">{% elif c.text %}<pre class="obs" title="{{ c.text }}">{{ c.text }}</pre>{% endif %}
      <div class="head"><span>t = {{ c.t }}</span><span class="muted">{% if c.reward is not none %}reward {{ fmt(c.reward) }}{% endif %}{% if c.done %} · done{% endif %}</span></div>
      {% for agent, a in c.actions %}<div class="act{{ ' invalid' if c.valid == false else '' }}">{% if c.actions|length > 1 %}{{ agent }}: {% endif %}{{ a }}</div>{% endfor %}
      {% for agent, why in c.reasoning %}<div class="why">{{ why }}</div>{% endfor %}
    </div>
  {% endfor %}
  </div>
</section>
{% endmacro %}
{% if strips %}
<h2>Episode strips</h2>
{% for s in strips %}{{ strip_section(s) }}{% endfor %}
{% endif %}

{% for g in strip_groups %}
<section class="group">
<h2>Episode strips: {{ g.title }}</h2>
{% if g.subtitle %}<div class="muted">{{ g.subtitle }}</div>{% endif %}
{% for s in g.strips %}{{ strip_section(s) }}{% endfor %}
{% if g.note %}<div class="note">{{ g.note }}</div>{% endif %}
</section>
{% endfor %}

{% if run_tables %}
<h2>The run</h2>
<div class="tables">
{% for t in run_tables %}
  <div class="tablebox"><h3>{{ t.title }}</h3>
    <table>
      <tr>{% for c in t.columns %}<th>{{ c }}</th>{% endfor %}</tr>
      {% for row in t.rows %}<tr>{% for v in row %}<td>{{ fmt(v) }}</td>{% endfor %}</tr>{% endfor %}
    </table>
  </div>
{% endfor %}
</div>
{% endif %}

<footer>framebus report of {{ source }} · generated {{ generated }}</footer>
</main>
</body>
</html>
"""
