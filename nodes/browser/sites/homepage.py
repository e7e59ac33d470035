"""Homepage: the list of the local sites (their base URLs come from the launch file, since ports
are picked at start) and ``/password.html`` with the fixture accounts, as VWA's homepage has."""

from __future__ import annotations

import random
import sqlite3

from starlette.responses import Response

from nodes.browser.sites.classifieds import Classifieds
from nodes.browser.sites.forge import Forge
from nodes.browser.sites.forum import Forum
from nodes.browser.sites.framework import Ctx, Handler, Site, layout
from nodes.browser.sites.shopping import Shopping
from nodes.browser.sites.shopping_data import ADMIN_PASSWORD, ADMIN_USER

DESCRIPTIONS = {"classifieds": "Classifieds: buy and sell second-hand items", "shopping": "One Stop Market: an online store",
                "forum": "Postmill: a forum of communities", "wiki": "Wikipedia: an offline encyclopedia",
                "forge": "GitLab: a code forge", "shopping_admin": "One Stop Market's admin panel"}
ACCOUNT_SITES = {"classifieds": Classifieds, "shopping": Shopping, "forum": Forum, "forge": Forge}
#: back offices whose account is not a customer's (WebArena's password page lists the shop admin too)
OTHER_ACCOUNTS = (("shopping_admin", ADMIN_USER, ADMIN_PASSWORD),)

TEMPLATES = {
    "layout.html": layout("Homepage", ' <a href="/password.html">Accounts</a>'),
    "home.html": """{% extends "layout.html" %}{% block content %}<h1>Websites</h1><ul class="sites">
{% for name, url in links %}<li><a href="{{ url }}" class="site-link" data-site="{{ name }}">{{ describe(name) }}</a></li>
{% else %}<li>No sites are configured.</li>{% endfor %}</ul>
<p>Account names and passwords: <a href="/password.html">password.html</a></p>{% endblock %}""",
    "password.html": """{% extends "layout.html" %}{% block title %}Accounts{% endblock %}{% block content %}
<h1>Accounts</h1><table id="accounts"><tr><th>Site</th><th>Username</th><th>Password</th></tr>
{% for site, username, password in accounts %}<tr><td>{{ site }}</td><td class="username">{{ username }}</td>
<td class="password">{{ password }}</td></tr>{% endfor %}</table>{% endblock %}""",
}


class Homepage(Site):
    name = "homepage"
    templates_source = TEMPLATES
    default_size = 1

    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        """Nothing to seed: the page lists what the launch file passed in ``links``."""

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        return [("/", self.home, ["GET"]), ("/password.html", self.passwords, ["GET"])]

    def home(self, ctx: Ctx) -> Response:
        return ctx.render("home.html", links=sorted(self.links.items()),
                          describe=lambda name: DESCRIPTIONS.get(name, name))

    def passwords(self, ctx: Ctx) -> Response:
        rows = [(site, username, password) for site, cls in ACCOUNT_SITES.items()
                for username, _, password, _ in cls.accounts] + list(OTHER_ACCOUNTS)
        return ctx.render("password.html", accounts=rows)
