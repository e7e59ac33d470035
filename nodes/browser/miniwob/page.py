"""What the environment runs in a MiniWoB task page, and how it reads the page's own state.

MiniWoB's protocol (miniwob/html/core/core.js): the page calls ``core.startEpisode()`` on load,
which shows the START cover; the driver seeds ``Math.random`` with ``Math.seedrandom(seed)``, sets
the data mode (``core.setDataMode``; the Python package uses ``train``) and calls
``core.startEpisodeReal()``, which generates the instance (``genProblem``) and starts the page's
timer of ``core.EPISODE_MAX_TIME`` ms; the task is ready when ``WOB_TASK_READY`` is true. The task
ends itself through ``core.endEpisode``, which sets ``WOB_DONE_GLOBAL``, ``WOB_RAW_REWARD_GLOBAL``
(the task's reward), ``WOB_REWARD_GLOBAL`` (that reward scaled by the time left, where the task asks
for it) and ``WOB_REWARD_REASON``; the timer ends it with -1 ("timed out").

``endEpisode`` also shows the START cover again, and a click on it starts a new instance that
resets those globals. So when the episode starts, ``START_JS`` wraps ``core.endEpisode`` to keep a
copy of the globals as the first end left them (``window.__framebusEnd``): the env reads the end
the page itself decided, even when a later click on the cover started another instance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LOADED_JS", "READY_JS", "SNAPSHOT_JS", "START_JS", "STATE_JS", "PageEnd", "page_end"]

LOADED_JS = "() => !!(window.core && core.cover_div && typeof core.startEpisodeReal === 'function')"
"""True once the page has loaded and shown its START cover (core.startEpisode ran)."""

READY_JS = "() => window.WOB_TASK_READY === true"

START_JS = """
({seed, mode, limitMs, token}) => {
  if (limitMs !== null) core.EPISODE_MAX_TIME = limitMs;
  const end = core.endEpisode;
  core.endEpisode = function () {
    const live = core.EP_TIMER !== null;  // endEpisode rewards only the first end of an instance
    const out = end.apply(this, arguments);
    if (live && window.__framebusEnd === null) {
      window.__framebusEnd = {done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL,
                              reason: WOB_REWARD_REASON === null || WOB_REWARD_REASON === undefined
                                      ? null : String(WOB_REWARD_REASON)};
    }
    return out;
  };
  window.__framebusEpisode = token;
  window.__framebusEnd = null;
  Math.seedrandom(seed);
  core.setDataMode(mode);
  core.startEpisodeReal();
  return core.EPISODE_MAX_TIME;
}
"""
"""Start the seeded instance; returns the episode's time limit in ms (the task's own, unless overridden)."""

STATE_JS = """
(token) => {
  if (window.__framebusEpisode !== token) return {left: true};
  let u = core.getUtterance();
  if (u && typeof u === 'object') u = u.utterance;
  return {left: false, end: window.__framebusEnd, utterance: typeof u === 'string' ? u : ''};
}
"""
"""The episode's end as the page recorded it (null while it runs), or ``left`` when the tab is no
longer on the page this episode started (the agent navigated away: that page and its timer are gone)."""

SNAPSHOT_JS = """
() => {
  const skip = new Set(['reward-display', 'sync-task-cover', 'click-canvas', 'query']);
  const out = [];
  const own = (el) => Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.data).join(' ')
                        .replace(/\\s+/g, ' ').trim();
  // a point of the element that a click really reaches (the centre, unless another element covers it)
  const hit = (el, r) => {
    for (const fy of [0.5, 0.25, 0.75, 0.1, 0.9]) {
      for (const fx of [0.5, 0.25, 0.75, 0.1, 0.9]) {
        const x = r.left + r.width * fx, y = r.top + r.height * fy;
        const top = document.elementFromPoint(x, y);
        if (top && (top === el || el.contains(top))) return [x, y];
      }
    }
    return [r.left + r.width / 2, r.top + r.height / 2];
  };
  const walk = (el) => {
    if (skip.has(el.id)) return;
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    const shown = r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
    if (shown) {
      const label = el.closest('label');
      const [x, y] = hit(el, r);
      out.push({tag: el.tagName.toLowerCase(), id: el.id || '',
                cls: typeof el.className === 'string' ? el.className : '',
                type: el.type || '', text: own(el).slice(0, 200),
                all: (el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 200),
                value: el.value === undefined ? null : String(el.value),
                checked: el.checked === undefined ? null : !!el.checked,
                dtype: el.getAttribute('data-type') || '',
                label: label ? label.textContent.replace(/\\s+/g, ' ').trim() : '',
                focused: document.activeElement === el,
                options: el.tagName === 'SELECT' ? Array.from(el.options).map(o => o.textContent.trim()) : null,
                selected: el.tagName === 'SELECT' ? el.selectedIndex : null,
                x, y, w: r.width, h: r.height,
                left: r.left, top: r.top});
    }
    if (style.display !== 'none') for (const c of el.children) walk(c);
  };
  walk(document.body);
  let u = core.getUtterance();
  if (u && typeof u === 'object') u = u.utterance;
  return {utterance: typeof u === 'string' ? u : '', elements: out};
}
"""
"""The page as the scripted solver reads it: the utterance and every shown element (tag, id,
classes, own text, value, checked, label, box, and in ``x``/``y`` a point of it that a click
reaches: its centre unless another element covers that) outside MiniWoB's own overlays."""


@dataclass(frozen=True, slots=True)
class PageEnd:
    """How an episode ended, as the task page decided (or the env, when the page was left)."""

    raw_reward: float
    env_reward: float
    reason: str | None


def page_end(state: Any) -> PageEnd | None:
    """The end a ``STATE_JS`` reading reports, or None while the episode runs. A tab that left the
    task page ends the episode as a failure (-1), as MiniWoB's time-out would have."""
    if not isinstance(state, dict):
        raise ValueError(f"the page's state reading is not a mapping: {state!r}")
    if state.get("left"):
        return PageEnd(-1.0, -1.0, "left the task page")
    end = state.get("end")
    if not end:
        return None
    return PageEnd(float(end.get("raw") or 0.0), float(end.get("reward") or 0.0), end.get("reason"))
