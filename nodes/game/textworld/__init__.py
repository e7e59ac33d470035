"""TextWorld as BALROG plays it: ``games`` generates BALROG's three games locally with TextWorld's
own generator (tw-make's challenges), cached by task and seed; ``node`` is the environment node
(``textworld.env``); ``tasks`` holds the per-task settings, limits and help text."""
