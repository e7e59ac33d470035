"""NetHack (the NetHack Learning Environment, ``nle``) as BALROG plays it: ``actions`` holds the
named action vocabulary, ``language`` the text rendering of a state, ``progress`` BALROG's
dungeon/experience progression, ``tty_image`` the terminal drawn as a picture, ``node`` the
environment node (``nethack.env``)."""
