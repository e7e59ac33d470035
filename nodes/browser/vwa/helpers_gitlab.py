"""The ``func:`` helpers of WebArena's GitLab tasks, registered into the shared registry.

``gitlab_get_project_memeber_role(__page__, 'vinta')`` (WebArena's spelling, kept so task files run
unchanged) reads the members table of the page the evaluator has open (a project's
``/-/project_members``): the row whose account cell says ``@vinta`` and, at the same position, the
"Max role" cell. It answers "" when the account is not listed or the page has no such table, as
WebArena's does, so a missing member fails the check rather than the evaluation. It reads the
page only through ``evaluate``, so it works on the local forge and on a real GitLab alike.
"""

from __future__ import annotations

import json
from typing import Any

from nodes.browser.vwa.helpers import REGISTRY, HelperContext, _require_page

# The account cells' "@username" labels and the role cells are read in document order and paired by
# position (one of each per row), which is how GitLab's members table lays them out.
_MEMBER_ROLE_JS = """(account) => {
  try {
    const accounts = [...document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
    const index = accounts.findIndex((el) => el.outerText === '@' + account);
    if (index < 0) return '';
    const role = document.querySelectorAll('td.col-max-role span')[index];
    return role ? role.outerText : '';
  } catch (e) { return ''; }
}"""


@REGISTRY.register("gitlab_get_project_memeber_role")
async def gitlab_get_project_memeber_role(ctx: HelperContext, page: Any, account_name: str) -> str:
    """The role ("Guest" ... "Owner") of ``account_name`` on the open members page, or ""."""
    services = _require_page(page, "gitlab_get_project_memeber_role")
    if not isinstance(account_name, str):
        raise ValueError(f"gitlab_get_project_memeber_role takes an account name (text), got {account_name!r}")
    value = await services.evaluate(f"({_MEMBER_ROLE_JS})({json.dumps(account_name)})")
    return value if isinstance(value, str) else ""
