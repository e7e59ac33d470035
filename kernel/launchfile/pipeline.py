"""Loading a launch file: the stages, in order, on one position-carrying tree.

Every stage works on :class:`~kernel.launchfile.tree.Y` (values that remember their file, line and
column), so a mistake found late (after includes, replicas and ``--set``) is still reported where
it was written. The format is specified in ``docs/launch.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from kernel.launchfile.checks import check_references
from kernel.launchfile.entries import check_unique, index_entries
from kernel.launchfile.errors import LaunchError
from kernel.launchfile.finding import resolve_path
from kernel.launchfile.includes import Context, read
from kernel.launchfile.limits import check_process_limits
from kernel.launchfile.overrides import apply_sets, override_episodes
from kernel.launchfile.params import NodeClassLoader, check_params, check_resources
from kernel.launchfile.replicas import expand_replicas
from kernel.launchfile.schema import LaunchFile
from kernel.launchfile.secrets import REDACTED, redacted_at
from kernel.launchfile.translate import translate
from kernel.launchfile.tree import Budget, Y, plain


def load(path: str | Path, *, sets: Sequence[str] = (), episodes: int | None = None,
         environ: Mapping[str, str] | None = None, node_class: NodeClassLoader | None = None,
         resources: type[BaseModel] | None = None) -> LaunchFile:
    """Read, resolve and check a launch file; the only exception is LaunchError.

    With ``node_class`` (``uses`` -> class) each node's params are also checked against its
    ``Params`` model, and the parsed instances are kept on the result (``LaunchFile.parsed_params``).
    With ``resources`` (a backend's model of a node's ``resources:``) each request is checked
    against it and kept as the model normalised it (the format itself only asks for a mapping)."""
    environ = os.environ if environ is None else environ
    try:
        source = resolve_path(path, environ=environ)
        budget = Budget()  # the values built, aliases expanded and copies counted (tree.MAX_VALUES)
        root = read(source, Context(environ, [source.resolve()], budget), None)  # YAML, variables, entries, includes
        expand_replicas(root, budget)
        apply_sets(root, sets, budget)
        override_episodes(root, episodes)
        nodes_y = root.get("nodes")  # a list once there (entries.py), its entries the nodes of ``lf`` in order
        nodes = nodes_y.value if nodes_y is not None else []
        check_unique(index_entries(nodes))
        lf = _validate(root, source)
        lf.node_trees = {spec.id: y for spec, y in zip(lf.nodes, nodes, strict=True)}
        check_process_limits(lf.nodes, nodes, source)
        check_references(lf, nodes)
        check_not_redacted(lf)
        if node_class is not None:
            lf.parsed_params = check_params(lf, nodes, node_class)
        if resources is not None:
            check_resources(lf, nodes, resources)
        return lf
    except LaunchError:
        raise
    except RecursionError:
        raise LaunchError("the file nests too deeply (recursive YAML anchors?)", file=Path(path)) from None
    except Exception as exc:  # a bug here must still not show the user a traceback
        raise LaunchError(f"internal error while loading: {type(exc).__name__}: {exc}", file=Path(path)) from exc


def _validate(root: Y, source: Path) -> LaunchFile:
    data = plain(root)
    data.setdefault("name", source.stem)
    data["source"] = source
    try:
        return LaunchFile.model_validate(data)
    except ValidationError as exc:
        raise translate(exc, root, LaunchFile) from None


def check_not_redacted(lf: LaunchFile) -> None:
    """A secret a run wrote redacted (a run folder's launch.yaml) is refused, named where it is: the
    node would otherwise start with the placeholder as its token or key."""
    for spec in lf.nodes:
        for key in ("params", "env"):
            found = redacted_at(getattr(spec, key))
            if found is not None:
                where = ".".join(map(str, (key, *found)))
                again = f"--set {spec.id}.{'.'.join(map(str, found))}=VALUE, or " if key == "params" else ""
                raise lf.error_at(spec.id, [key, *map(str, found)],
                                  f"node '{spec.id}': {where} is {REDACTED!r}: a run writes secrets so in its "
                                  f"launch.yaml; give the value again ({again}${{VAR}} in the file to take it "
                                  "from the environment)")
