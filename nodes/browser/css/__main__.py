"""``python -m nodes.browser.css generate ...``: the instance generator's command line."""

import sys

from nodes.browser.css import generate

if len(sys.argv) < 2 or sys.argv[1] != "generate":
    print("usage: python -m nodes.browser.css generate [--per-project N] [--seed S] [--project NAME] [--out PATH]")
    sys.exit(2)
sys.exit(generate.main(sys.argv[2:]))
