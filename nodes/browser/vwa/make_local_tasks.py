"""Writes nodes/browser/vwa/data/local_tasks.json: VWA-format tasks over the local sites, drawn from
their seeded content (seed 0, default sizes), so every answer, URL and page check is a stored fact.

    python -m nodes.browser.vwa.make_local_tasks [--out FILE] [--seed 0]

Templates follow VWA's kinds: lookups scored by ``exact_match``/``must_include``, navigation scored
by ``url_match``, state changes (``require_reset``) scored by ``program_html`` on the page that shows
the change, photo questions scored by ``page_image_query`` (the sites' attribute oracle answers
them), tasks with an input ``image``, tasks with several tabs (`` |AND| ``), and unachievable tasks
(answer ``N/A``, VWA's ``string_note`` convention). Each task's ``gold_actions`` name elements by
locators (nodes/browser/gold.py); the environment's oracle turns them into ids. The output is a pure
function of the seed: running it twice writes the same bytes."""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from nodes.browser.sites.classifieds import Classifieds
from nodes.browser.sites.forum import ME, Forum
from nodes.browser.sites.shopping import Shopping
from nodes.browser.sites.wiki import Wiki, article_path

OUT = Path(__file__).resolve().parent / "data" / "local_tasks.json"
C, S, R, W, H = "__CLASSIFIEDS__", "__SHOPPING__", "__REDDIT__", "__WIKIPEDIA__", "__HOMEPAGE__"
A = "__SHOPPING_ADMIN__"  # the shop's admin panel (make_admin_tasks.py)
G = "__GITLAB__"  # the code forge (make_forge_tasks.py)
SITE_OF = {C: "classifieds", S: "shopping", R: "reddit", W: "wikipedia", H: "homepage", A: "shopping_admin",
           G: "gitlab"}

LOGIN = {
    C: [f"goto [{C}/index.php?page=login]", "type [css=input[name=email]] [blake.sullivan@gmail.com] [0]",
        "type [css=input[name=password]] [Password.123] [1]"],
    S: [f"goto [{S}/customer/account/login/]", "type [css=#email] [emma.lopez@gmail.com] [0]",
        "type [css=#pass] [Password.123] [1]"],
    R: [f"goto [{R}/login]", f"type [css=input[name=_username]] [{ME}] [0]",
        "type [css=input[name=_password]] [test1234] [1]"],
    A: [f"goto [{A}/]", "type [css=#username] [admin] [0]", "type [css=#login] [admin1234] [1]"],
    G: [f"goto [{G}/users/sign_in]", "type [css=#user_login] [byteblaze] [0]",
        "type [css=#user_password] [hello1234] [1]"],
}


def money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


class Builder:
    """Collects tasks; a template's id is the order in which it is first used."""

    def __init__(self) -> None:
        self.tasks: list[dict[str, Any]] = []
        self.template_ids: dict[str, int] = {}

    def add(self, *, template: str, values: dict[str, Any], start: str, ev: dict[str, Any], gold: list[str],
            level: tuple[str, str, str], reset: bool = False, image: str | list[str] | None = None,
            comments: str = "") -> None:
        sites = sorted({SITE_OF[key] for key in SITE_OF if key in start or any(key in g for g in gold)},
                       key=list(SITE_OF.values()).index)
        intent = template
        for key, value in values.items():
            intent = intent.replace("{{" + key + "}}", str(value))
        ev = {"eval_types": ev["eval_types"], "reference_answers": ev.get("reference_answers"),
              "reference_url": ev.get("reference_url", ""), "program_html": ev.get("program_html", []),
              "string_note": ev.get("string_note", ""), "url_note": ev.get("url_note", "EXACT"),
              **({"page_image_query": ev["page_image_query"]} if "page_image_query" in ev else {})}
        reasoning, visual, overall = level
        self.tasks.append({
            "task_id": len(self.tasks), "sites": sites, "start_url": start, "intent": intent,
            "intent_template": template,
            "intent_template_id": self.template_ids.setdefault(template, len(self.template_ids)),
            "instantiation_dict": values, "require_reset": reset, "require_login": any(g in LOGIN[k] for k in LOGIN for g in gold),
            "storage_state": None, "viewport_size": {"width": 1280}, "geolocation": None, "image": image,
            "eval": ev, "reasoning_difficulty": reasoning, "visual_difficulty": visual,
            "overall_difficulty": overall, "comments": comments, "gold_actions": gold})


def answer(kind: str, value: Any) -> dict[str, Any]:
    return {"eval_types": ["string_match"], "reference_answers": {kind: value}}


def unachievable(note: str) -> dict[str, Any]:
    return {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}, "string_note": note}


def url(reference: str, note: str = "EXACT") -> dict[str, Any]:
    return {"eval_types": ["url_match"], "reference_url": reference, "url_note": note}


def html(page: str, locator: str, **contents: Any) -> dict[str, Any]:
    return {"eval_types": ["program_html"],
            "program_html": [{"url": page, "locator": locator, "required_contents": contents}]}


def photo(page: str, selector: str, question: str, reply: str, said: str) -> dict[str, Any]:
    return {"eval_types": ["string_match", "page_image_query"], "reference_answers": {"must_include": [said]},
            "page_image_query": [{"eval_image_url": page, "eval_image_class": selector,
                                  "eval_vqa": [{"question": question, "answer": reply}]}]}


def rows(db: sqlite3.Connection, sql: str, *args: Any) -> list[sqlite3.Row]:
    db.row_factory = sqlite3.Row
    return db.execute(sql, args).fetchall()


def pick(rng: random.Random, items: list[Any], n: int) -> list[Any]:
    return rng.sample(items, k=min(n, len(items)))


# ---- classifieds ---------------------------------------------------------------------------------

def classifieds(b: Builder, rng: random.Random, seed: int) -> None:
    db = Classifieds(seed=seed).db
    listings = rows(db, "SELECT l.*, c.name AS category, (SELECT COUNT(*) FROM comments m WHERE m.listing_id = l.id) "
                    "AS n_comments, i.colour, i.count AS shapes, i.kind FROM listings l JOIN categories c ON "
                    "c.id = l.category_id JOIN images i ON i.id = l.image_id ORDER BY l.id")
    titles = Counter(row["title"] for row in listings)
    unique = [row for row in listings if titles[row["title"]] == 1]
    home = f"{C}/"

    def item(row: sqlite3.Row) -> str:
        return f"{C}/index.php?page=item&id={row['id']}"

    def open_item(row: sqlite3.Row) -> list[str]:
        return [f"type [css=input[name=sPattern]] [{row['title']}] [1]", f"click [css=.cards a[href$='id={row['id']}']]"]

    for row in pick(rng, unique, 5):
        b.add(template="How much is the seller asking for the {{item}}?", values={"item": row["title"]}, start=home,
              ev=answer("exact_match", f"${row['price']:,}"), gold=[*open_item(row), f"stop [${row['price']:,}]"],
              level=("easy", "easy", "easy"))
    for cid, name in rows(db, "SELECT id, name FROM categories ORDER BY id")[::2]:
        b.add(template="Show me every listing in the {{category}} category.", values={"category": name}, start=home,
              ev=url(f"{C}/index.php?page=search&sCategory={cid}", "GOLD in PRED"),
              gold=[f"click [css=ul.categories a[href$='sCategory={cid}']]", "stop"], level=("easy", "easy", "easy"))
    for noun, cap in (("lamp", 500), ("bike", 100), ("vase", 50), ("camera", 300)):
        b.add(template="Search for {{item}} listings that cost at most ${{price}}.", values={"item": noun, "price": cap},
              start=f"{C}/index.php?page=search",
              ev=url(f"{C}/index.php?page=search&sPattern={noun}&sPriceMax={cap}", "GOLD in PRED"),
              gold=[f"type [css=input[name=sPattern]] [{noun}] [0]",
                    f"type [css=input[name=sPriceMax]] [{cap}] [1]", "stop"], level=("medium", "easy", "medium"))
    comments = ("Is this still available?", "Would you take $5 less?", "Can I pick it up on Saturday?",
                "Does it come with the original box?", "Is the price negotiable?")
    for row, text in zip(pick(rng, unique, 5), comments):
        b.add(template="Leave the comment \"{{comment}}\" on the {{item}} listing.",
              values={"comment": text, "item": row["title"]}, start=item(row), reset=True,
              ev=html(item(row), "document.querySelector('#comments').outerText", must_include=[text]),
              gold=[f"type [css=textarea[name=body]] [{text}] [0]", "click [css=form[action*=add_comment] button]",
                    "stop"], level=("easy", "easy", "medium"),
              comments="The site is reset first, so an earlier run's comment does not count.")
    for title, price in (("Blue ceramic teapot", 35), ("Folding camping chair", 20), ("Oak picture frame", 15)):
        b.add(template="Post an ad for a \"{{title}}\" in Antiques at ${{price}}.", values={"title": title, "price": price},
              start=home, reset=True,
              ev=html(f"{C}/index.php?page=user&action=items", "document.querySelector('main').outerText",
                      must_include=[title, f"${price}"]),
              gold=[*LOGIN[C], "click [css=a[href$='action=item_add']]",
                    f"type [css=input[name=title]] [{title}] [0]",
                    f"type [css=textarea[name=description]] [{title}, in good shape.] [0]",
                    f"type [css=input[name=price]] [{price}] [0]", "click [css=main form button[type=submit]]", "stop"],
              level=("medium", "easy", "hard"))
    for row in pick(rng, [r for r in unique if r["n_comments"]], 3):
        b.add(template="How many comments does the {{item}} listing have?", values={"item": row["title"]}, start=home,
              ev=answer("exact_match", str(row["n_comments"])), gold=[*open_item(row), f"stop [{row['n_comments']}]"],
              level=("medium", "easy", "medium"))
    for row in pick(rng, unique, 4):
        ask, reply = (("What colour are the shapes?", row["colour"]) if row["id"] % 2 else
                      ("How many shapes are there?", str(row["shapes"])))
        b.add(template="Open the {{item}} listing and answer: {{question}}",
              values={"item": row["title"], "question": ask}, start=home,
              ev=photo("last", ".item-photo", ask, reply, reply), gold=[*open_item(row), f"stop [{reply}]"],
              level=("easy", "medium", "medium"))
    for row in pick(rng, unique, 4):
        b.add(template="What is the asking price of the listing in the {{category}} category whose photo is this "
              "image?", values={"category": row["category"]}, start=home,
              image=f"{C}/images/{row['image_id']}.png", ev=answer("exact_match", f"${row['price']:,}"),
              gold=[f"click [css=ul.categories a[href$='sCategory={row['category_id']}']]",
                    f"click [css=.cards a[href$='id={row['id']}']]", f"stop [${row['price']:,}]"],
              level=("medium", "hard", "hard"))
    for missing in ("Golden harp", "Antique submarine", "Racing sailboat"):
        b.add(template="How much is the seller asking for the {{item}}?", values={"item": missing}, start=home,
              ev=unachievable(f"No {missing.lower()} is listed."),
              gold=[f"type [css=input[name=sPattern]] [{missing}] [1]", "stop [N/A]"], level=("medium", "easy", "medium"))
    for a, z in [pick(rng, unique, 2) for _ in range(3)]:
        if a["price"] == z["price"]:
            continue
        cheaper = a if a["price"] < z["price"] else z
        b.add(template="Of the listings open in my two tabs, which is cheaper? Answer with its title.",
              values={}, start=f"{item(a)} |AND| {item(z)}", ev=answer("exact_match", cheaper["title"]),
              gold=["tab_focus [1]", "tab_focus [0]", f"stop [{cheaper['title']}]"], level=("medium", "easy", "medium"))
    for (cid, name), in [rows(db, "SELECT id, name FROM categories WHERE id = ?", k) for k in (2, 4, 6)]:
        cheapest = min((r for r in listings if r["category_id"] == cid), key=lambda r: (r["price"], -r["id"]))
        b.add(template="Take me to the cheapest listing in {{category}}.", values={"category": name}, start=home,
              ev=url(item(cheapest)),
              gold=[f"click [css=ul.categories a[href$='sCategory={cid}']]",
                    f"click [css=.cards a[href$='id={cheapest['id']}']]", "stop"], level=("medium", "easy", "medium"))


# ---- shopping ------------------------------------------------------------------------------------

def shopping(b: Builder, rng: random.Random, seed: int) -> None:
    db = Shopping(seed=seed).db
    products = rows(db, "SELECT p.*, c.name AS category, c.slug AS category_slug, i.colour, i.count AS shapes, "
                    "(SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id AND r.status = 1) AS n_reviews, "
                    "(SELECT AVG(rating) FROM reviews r WHERE r.product_id = p.id AND r.status = 1) AS average "
                    "FROM products p JOIN categories c ON c.id = p.category_id JOIN images i ON i.id = p.image_id "
                    "ORDER BY p.id")
    names = Counter(row["name"] for row in products)
    unique = [row for row in products if names[row["name"]] == 1]
    home = f"{S}/"

    def page(row: sqlite3.Row) -> str:
        return f"{S}/{row['slug']}.html"

    def open_product(row: sqlite3.Row) -> list[str]:
        return [f"type [css=input[name=q]] [{row['name']}] [1]",
                f"click [css=a.product-item-link[href$='/{row['slug']}.html']]"]

    for row in pick(rng, unique, 5):
        b.add(template="What is the price of the {{product}}?", values={"product": row["name"]}, start=home,
              ev=answer("exact_match", money(row["price_cents"])),
              gold=[*open_product(row), f"stop [{money(row['price_cents'])}]"], level=("easy", "easy", "easy"))
    for row in pick(rng, unique, 3):
        b.add(template="What is the SKU of the {{product}}?", values={"product": row["name"]}, start=home,
              ev=answer("must_include", [row["sku"]]), gold=[*open_product(row), f"stop [The SKU is {row['sku']}.]"],
              level=("easy", "easy", "easy"))
    for _, name, slug in rows(db, "SELECT id, name, slug FROM categories ORDER BY id")[:4]:
        b.add(template="Show me the products in the {{category}} category.", values={"category": name}, start=home,
              ev=url(f"{S}/{slug}.html", "GOLD in PRED"), gold=[f"click [css=ul.categories a[href='/{slug}.html']]", "stop"],
              level=("easy", "easy", "easy"))
    for word in ("hoodie", "mug", "backpack"):
        b.add(template="Search the store for {{term}}.", values={"term": word}, start=home,
              ev=url(f"{S}/catalogsearch/result/?q={word}", "GOLD in PRED"),
              gold=[f"type [css=input[name=q]] [{word}] [1]", "stop"], level=("easy", "easy", "easy"))
    for row in pick(rng, [r for r in unique if r["n_reviews"] >= 2], 3):
        avg = f"{row['average']:.1f}"
        b.add(template="What is the average review rating of the {{product}}?", values={"product": row["name"]},
              start=home, ev=answer("must_include", [avg]), gold=[*open_product(row), f"stop [{avg}]"],
              level=("medium", "easy", "medium"))
    for row in pick(rng, unique, 4):
        b.add(template="Add the {{product}} to my cart.", values={"product": row["name"]}, start=home, reset=True,
              ev=html(f"{S}/checkout/cart/", "document.querySelector('#shopping-cart-table').outerText",
                      must_include=[row["name"]]),
              gold=[*LOGIN[S], *open_product(row), "click [css=#product-addtocart-button]", "stop"],
              level=("easy", "easy", "medium"))
    for row in pick(rng, unique, 3):
        b.add(template="Add the {{product}} to my wish list.", values={"product": row["name"]}, start=home, reset=True,
              ev=html(f"{S}/wishlist/", "document.querySelector('.wishlist').outerText", must_include=[row["name"]]),
              gold=[*LOGIN[S], *open_product(row), "click [css=button.towishlist]", "stop"],
              level=("easy", "easy", "medium"))
    next_order = rows(db, "SELECT MAX(id) + 1 AS n FROM orders")[0]["n"]
    for row in pick(rng, unique, 3):
        b.add(template="Buy the {{product}} and ship it to my default address.", values={"product": row["name"]},
              start=home, reset=True,
              ev=html(f"{S}/sales/order/view/order_id/{next_order}/", "document.querySelector('.items-ordered').outerText",
                      must_include=[row["name"], row["sku"]]),
              gold=[*LOGIN[S], *open_product(row), "click [css=#product-addtocart-button]", "click [css=a.checkout]",
                    "click [css=#place-order]", "stop"], level=("medium", "easy", "hard"),
              comments=f"{next_order - 1} orders are seeded, so the new one is order {next_order} after a reset.")
    reviews = ("Soft and warm, would buy again.", "Arrived quickly, great quality.", "Exactly as pictured.")
    for row, text in zip(pick(rng, unique, 3), reviews):
        b.add(template="Write a {{stars}}-star review of the {{product}} saying \"{{review}}\".",
              values={"stars": 5, "product": row["name"], "review": text},
              start=page(row), reset=True,
              ev=html(page(row), "document.querySelector('#product-review-container').outerText",
                      must_include=[text]),
              gold=[f"type [css=textarea[name=detail]] [{text}] [0]", "click [css=form[action*='/review/'] button]",
                    "stop"], level=("easy", "easy", "medium"))
    orders = rows(db, "SELECT id, total_cents FROM orders WHERE username = ? ORDER BY id", Shopping.accounts[0][0])
    for order in orders:
        b.add(template="What was the order total of my order number {{number}}?", values={"number": order["id"]},
              start=home, ev=answer("must_include", [money(order["total_cents"])]),
              gold=[*LOGIN[S], "click [css=header a[href='/sales/order/history/']]",
                    f"click [css=a[href$='/order_id/{order['id']}/']]", f"stop [{money(order['total_cents'])}]"],
              level=("medium", "easy", "medium"))
    for row in pick(rng, unique, 4):
        ask, reply = (("What colour are the shapes?", row["colour"]) if row["id"] % 2 else
                      ("How many shapes are there?", str(row["shapes"])))
        b.add(template="Look at the photo of the {{product}} and answer: {{question}}",
              values={"product": row["name"], "question": ask}, start=home,
              ev=photo("last", ".product-image-photo.big", ask, reply, reply), gold=[*open_product(row), f"stop [{reply}]"],
              level=("easy", "medium", "medium"))
    for row in pick(rng, unique, 3):
        b.add(template="Which product in {{category}} is shown in this picture? Answer with its name.",
              values={"category": row["category"]}, start=home, image=f"{S}/images/{row['image_id']}.png",
              ev=answer("exact_match", row["name"]),
              gold=[f"click [css=ul.categories a[href='/{row['category_slug']}.html']]", f"stop [{row['name']}]"],
              level=("easy", "hard", "hard"))
    for missing in ("Titanium Snowboard", "Electric Kettle"):
        b.add(template="What is the price of the {{product}}?", values={"product": missing}, start=home,
              ev=unachievable(f"The store sells no {missing.lower()}."),
              gold=[f"type [css=input[name=q]] [{missing}] [1]", "stop [N/A]"], level=("medium", "easy", "medium"))
    for a, z in [pick(rng, unique, 2) for _ in range(2)]:
        dearer = a if a["price_cents"] > z["price_cents"] else z
        b.add(template="Which of the two products open in my tabs costs more? Answer with its SKU.", values={},
              start=f"{page(a)} |AND| {page(z)}", ev=answer("exact_match", dearer["sku"]),
              gold=["tab_focus [1]", f"stop [{dearer['sku']}]"], level=("medium", "easy", "medium"))


# ---- forum (VWA's "reddit") ------------------------------------------------------------------------

def forum(b: Builder, rng: random.Random, seed: int) -> None:
    db = Forum(seed=seed).db
    posts = rows(db, "SELECT s.*, (SELECT COUNT(*) FROM comments c WHERE c.submission_id = s.id) AS n_comments, "
                 "i.colour, i.count AS shapes, i.text AS words FROM submissions s LEFT JOIN images i ON "
                 "i.id = s.image_id ORDER BY s.id")
    forums = rows(db, "SELECT name, title FROM forums ORDER BY name COLLATE NOCASE")

    def link(row: sqlite3.Row) -> str:
        return f"{R}/f/{row['forum']}/{row['id']}/{row['slug']}"

    def open_post(row: sqlite3.Row) -> list[str]:
        # the forum's own page (a post further down than the 2048-pixel viewport carries no id there)
        return [f"goto [{R}/f/{row['forum']}/{row['id']}]"]

    others = [p for p in posts if p["author"] != ME]
    for f in forums[:4]:
        b.add(template="Take me to the forum called {{title}}.", values={"title": f["title"]}, start=f"{R}/forums",
              ev=url(f"{R}/f/{f['name']}"), gold=[f"click [css=main a[href='/f/{f['name']}']]", "stop"],
              level=("easy", "easy", "easy"))
    for row in pick(rng, others, 4):
        b.add(template="Who submitted the post \"{{title}}\" in /f/{{forum}}?",
              values={"title": row["title"], "forum": row["forum"]}, start=f"{R}/forums",
              ev=answer("exact_match", row["author"]),
              gold=[f"click [css=main a[href='/f/{row['forum']}']]", f"stop [{row['author']}]"],
              level=("easy", "easy", "easy"))
    for row in pick(rng, posts, 4):
        b.add(template="How many comments does the post \"{{title}}\" in /f/{{forum}} have?",
              values={"title": row["title"], "forum": row["forum"]}, start=f"{R}/f/{row['forum']}",
              ev=answer("exact_match", str(row["n_comments"])),
              gold=[*open_post(row), f"stop [{row['n_comments']}]"], level=("easy", "easy", "easy"))
    for row in pick(rng, posts, 3):
        b.add(template="What is the score of the post \"{{title}}\" in /f/{{forum}}?",
              values={"title": row["title"], "forum": row["forum"]}, start=f"{R}/f/{row['forum']}",
              ev=answer("exact_match", str(row["base_score"])), gold=[f"stop [{row['base_score']}]"],
              level=("easy", "easy", "easy"))
    replies = ("Great shot!", "Where was this taken?", "I have the same one.", "Thanks for sharing.")
    for row, text in zip(pick(rng, others, 4), replies):
        b.add(template="Reply \"{{comment}}\" to the post \"{{title}}\" in /f/{{forum}}.",
              values={"comment": text, "title": row["title"], "forum": row["forum"]}, start=f"{R}/", reset=True,
              ev=html(link(row), "[...document.querySelectorAll('.comment__body')].map(e => e.outerText).join(' | ')",
                      must_include=[text]),
              gold=[*LOGIN[R], *open_post(row), f"type [css=textarea[name=comment]] [{text}] [0]",
                    "click [css=form[action$='/-/comment'] button]", "stop"], level=("easy", "easy", "medium"))
    for row in pick(rng, [p for p in others if p["forum"] != "pics"], 3):
        b.add(template="Upvote the post \"{{title}}\" in /f/{{forum}}.",
              values={"title": row["title"], "forum": row["forum"]}, start=f"{R}/", reset=True,
              ev=html(link(row), "document.querySelector('.vote__up').getAttribute('aria-pressed')", exact_match="true"),
              gold=[*LOGIN[R], *open_post(row), "click [css=button.vote__up]", "stop"], level=("easy", "easy", "medium"))
    for f, title in zip(forums[::2], ("Weekend hike photos", "Best budget headphones?", "My first bookshelf")):
        b.add(template="Create a post titled \"{{title}}\" in /f/{{forum}}.", values={"title": title, "forum": f["name"]},
              start=f"{R}/f/{f['name']}", reset=True,
              ev=html(f"{R}/f/{f['name']}/new", "document.querySelector('main').outerText", must_include=[title]),
              gold=[*LOGIN[R], f"goto [{R}/f/{f['name']}]", "click [css=main a[href^='/submit/']]",
                    f"type [css=input[name=title]] [{title}] [0]", "click [css=main form button[type=submit]]", "stop"],
              level=("medium", "easy", "hard"))
    authors = sorted({p["author"] for p in others})
    for name in pick(rng, authors, 3):
        b.add(template="Block the user {{user}}.", values={"user": name}, start=f"{R}/", reset=True,
              ev=html(f"{R}/user/{ME}/block_list", "document.querySelector('.block-list').outerText", must_include=[name]),
              gold=[*LOGIN[R], f"goto [{R}/user/{name}]", "click [css=button.block-user]", "stop"],
              level=("easy", "easy", "medium"))
    pictured = [p for p in posts if p["image_id"]]
    for i, row in enumerate(pick(rng, pictured, 5)):
        if row["words"]:
            ask, reply = "What text does the image say?", row["words"]
        elif i % 2:
            ask, reply = "What colour are the shapes?", row["colour"]
        else:
            ask, reply = "How many shapes are there?", str(row["shapes"])
        b.add(template="Open the post \"{{title}}\" in /f/{{forum}} and answer: {{question}}",
              values={"title": row["title"], "forum": row["forum"], "question": ask}, start=f"{R}/f/{row['forum']}",
              ev=photo("last", ".submission__image", ask, reply, reply),
              gold=[*open_post(row), f"stop [{reply}]"], level=("easy", "medium", "medium"))
    for row in pick(rng, [p for p in pictured if p["forum"] == "pics"], 3):
        b.add(template="Who posted this picture in /f/pics?", values={}, start=f"{R}/f/pics",
              image=f"{R}/images/{row['image_id']}.png", ev=answer("exact_match", row["author"]),
              gold=[*open_post(row), f"stop [{row['author']}]"],
              level=("easy", "hard", "hard"))
    for topic in ("Knitting", "Motorcycles"):
        b.add(template="Take me to the forum called {{title}}.", values={"title": topic}, start=f"{R}/forums",
              ev=unachievable(f"There is no {topic.lower()} forum."), gold=["stop [N/A]"],
              level=("medium", "easy", "medium"))
    for a, z in [pick(rng, [p for p in posts if p["n_comments"]], 2) for _ in range(2)]:
        if a["n_comments"] == z["n_comments"]:
            z = next(p for p in posts if p["n_comments"] not in (0, a["n_comments"]))
        busier = a if a["n_comments"] > z["n_comments"] else z
        b.add(template="Which of the two posts open in my tabs has more comments? Answer with its author's name.",
              values={}, start=f"{link(a)} |AND| {link(z)}", ev=answer("exact_match", busier["author"]),
              gold=["tab_focus [1]", f"stop [{busier['author']}]"], level=("medium", "easy", "medium"))
    for row in pick(rng, others, 3):
        b.add(template="Open the profile of the user who submitted \"{{title}}\" in /f/{{forum}}.",
              values={"title": row["title"], "forum": row["forum"]}, start=f"{R}/f/{row['forum']}",
              ev=url(f"{R}/user/{row['author']}"),
              gold=[f"click [css=article[data-id='{row['id']}'] a.submission__submitter]", "stop"],
              level=("easy", "easy", "easy"))


# ---- wiki and homepage -----------------------------------------------------------------------------

def wiki_and_homepage(b: Builder, rng: random.Random, seed: int) -> None:
    db = Wiki(seed=seed).db
    people = rows(db, "SELECT a.title, f.value FROM articles a JOIN facts f ON f.article_id = a.id "
                  "WHERE f.name = 'Born' ORDER BY a.id")
    for title, born in pick(rng, people, 3):
        year = born.split(",")[0].strip()
        b.add(template="In which year was {{person}} born?", values={"person": title}, start=f"{W}/",
              ev=answer("must_include", [year]),
              gold=[f"click [css=a[href='{article_path(title)}']]", f"stop [{title} was born in {year}.]"],
              level=("easy", "easy", "easy"))
    b.add(template="What is the password of the {{site}} account?", values={"site": "shopping"}, start=f"{H}/",
          ev=answer("exact_match", Shopping.accounts[0][2]),
          gold=["click [css=main a[href='/password.html']]", f"stop [{Shopping.accounts[0][2]}]"],
          level=("easy", "easy", "easy"))


def build(seed: int = 0) -> list[dict[str, Any]]:
    b = Builder()
    for part in (classifieds, shopping, forum, wiki_and_homepage):
        part(b, random.Random(f"tasks:{part.__name__}:{seed}"), seed)
    return b.tasks


def generator_main(argv: list[str] | None, doc: str, out: Path, build_tasks: Callable[[int], list[dict[str, Any]]],
                   seeded: str = "the sites'") -> int:
    """The command line every task generator shares: ``--out FILE --seed N``, one JSON file written."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--seed", type=int, default=0, help=f"{seeded} content seed (the launch file's)")
    args = parser.parse_args(argv)
    tasks = build_tasks(args.seed)
    args.out.write_text(json.dumps(tasks, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(tasks)} tasks to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return generator_main(argv, __doc__ or "", OUT, build)


if __name__ == "__main__":
    raise SystemExit(main())
