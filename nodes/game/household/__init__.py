"""VAB-OmniGibson's household tasks, rebuilt offline as a symbolic household driven by BEHAVIOR's
BDDL activity definitions: the data model (``model``), the rules (``world``, ``actions``, ``backend``)
and a program solver (``solver``); the pictures are drawn from the same model."""
