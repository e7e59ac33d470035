"""VAB-OmniGibson household tasks, rebuilt offline as a symbolic household."""
