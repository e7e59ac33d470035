"""The code forge's git repositories: real bare repositories on disk, written and read with dulwich.

Each project owns one bare repository under ``<root>/live/<key>.git`` (the key is the project's id,
which survives renames). After the seeded history is written, every repository is packed and copied
to ``<root>/pristine``; a write through the site (a commit, a merge, a new project, a fork) marks its
key as touched, and ``restore`` copies the pristine repositories of the touched keys back (a key with
no pristine copy, a project made after seeding, is deleted). A packed repository is a handful of
files, so a reset copies a few files per touched project rather than rebuilding anything.

Nothing here knows about users or permissions: the site checks those before it calls in, and calls
in under its lock (dulwich's ``Repo`` objects are cached per key and are not shared across threads).
"""

from __future__ import annotations

import io
import posixpath
import shutil
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dulwich.diff_tree import tree_changes
from dulwich.graph import can_fast_forward, find_merge_base
from dulwich.merge import three_way_merge
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob, Commit, Tree
from dulwich.patch import write_tree_diff
from dulwich.repo import MemoryRepo, Repo

FILE_MODE = 0o100644
DIR_MODE = 0o040000
#: the longest file the web editor writes and the file view shows in full (bytes)
MAX_SHOWN_BYTES = 512 * 1024


class GitError(ValueError):
    """A repository operation that cannot be done as asked (the message says why, for a 400/409 page)."""


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    title: str
    message: str
    author_name: str
    author_email: str
    authored: datetime  # UTC
    parents: tuple[str, ...]

    @property
    def short(self) -> str:
        return self.sha[:8]


@dataclass(frozen=True)
class Entry:
    """One row of a tree listing."""

    name: str
    path: str
    is_dir: bool


def _identity(raw: bytes) -> tuple[str, str]:
    text = raw.decode("utf-8", "replace")
    name, _, rest = text.partition(" <")
    return name.strip(), rest.rstrip(">").strip()


def _info(commit: Commit) -> CommitInfo:
    message = commit.message.decode("utf-8", "replace")
    name, email = _identity(commit.author)
    return CommitInfo(sha=commit.id.decode(), title=message.strip().split("\n", 1)[0], message=message.strip(),
                      author_name=name, author_email=email,
                      authored=datetime.fromtimestamp(commit.author_time, tz=timezone.utc),
                      parents=tuple(p.decode() for p in commit.parents))


def clean_path(path: str) -> str:
    """A repository-relative file path, or GitError naming what is wrong with it."""
    if "\x00" in path:
        raise GitError("a file path must not contain NUL bytes")
    parts = [p for p in path.strip().strip("/").split("/") if p not in ("", ".")]
    if not parts:
        raise GitError("a file path is required")
    if any(p == ".." or p.lower() == ".git" for p in parts):
        raise GitError(f"a file path must not contain '..' or '.git' segments: {path[:80]!r}")
    if len("/".join(parts)) > 255 or any(len(p.encode()) > 200 for p in parts):
        raise GitError("a file path is at most 255 characters, and each name at most 200 bytes")
    return "/".join(parts)


class Repos:
    """Every project's bare repository, the pristine copies and the set of keys written since the last reset."""

    def __init__(self, root: Path) -> None:
        self.live = root / "live"
        self.pristine = root / "pristine"
        self.live.mkdir(parents=True, exist_ok=True)
        self.touched: set[str] = set()
        self._open: dict[str, Repo] = {}
        # Until ``freeze``, repositories are built in memory and then written as one pack each: the seeded
        # history is hundreds of objects, and a loose object per file is most of the build time on disk.
        self._memory: dict[str, MemoryRepo] | None = {}

    # ---- access ---------------------------------------------------------------------------------
    def _dir(self, key: str, base: Path | None = None) -> Path:
        return (base or self.live) / f"{key}.git"

    def repo(self, key: str) -> Repo | MemoryRepo:
        if self._memory is not None:
            if key not in self._memory:
                raise GitError(f"no repository {key}")
            return self._memory[key]
        cached = self._open.get(key)
        if cached is None:
            if not self._dir(key).is_dir():
                raise GitError(f"no repository {key}")
            cached = self._open[key] = Repo(str(self._dir(key)))
        return cached

    def exists(self, key: str) -> bool:
        return key in self._memory if self._memory is not None else self._dir(key).is_dir()

    def _forget(self, key: str) -> None:
        repo = self._open.pop(key, None)
        if repo is not None:
            repo.close()

    # ---- writing --------------------------------------------------------------------------------
    def create(self, key: str, default_branch: str) -> None:
        """An empty bare repository whose HEAD names ``default_branch``."""
        self.touched.add(key)
        if self._memory is not None:
            self._memory[key] = MemoryRepo()
            self._memory[key].refs.set_symbolic_ref(b"HEAD", f"refs/heads/{default_branch}".encode())
            return
        self._forget(key)
        Repo.init_bare(str(self._dir(key)), mkdir=True, default_branch=default_branch.encode()).close()

    def fork(self, source: str, key: str) -> None:
        """A copy of ``source``'s repository (every branch and object) under ``key``."""
        self.touched.add(key)
        self._forget(key)
        shutil.copytree(self._dir(source), self._dir(key))

    def delete(self, key: str) -> None:
        self.touched.add(key)
        self._forget(key)
        shutil.rmtree(self._dir(key), ignore_errors=True)

    def commit(self, key: str, branch: str, changes: Mapping[str, bytes | None], author: str, message: str,
               when: int, start: str | None = None) -> str:
        """A commit on ``branch`` applying ``changes`` (path -> content, None deletes) to its head, or to
        ``start`` (a branch or sha) when the branch does not exist yet; returns the new sha."""
        repo = self.repo(key)
        self.touched.add(key)  # before any object is written: even a refused commit's stray blobs go at reset
        ref = f"refs/heads/{branch}".encode()
        refs = repo.refs.as_dict()
        parent = old = refs.get(ref)
        if parent is None and start is not None:
            parent = self._sha(repo, start)
            if parent is None:
                raise GitError(f"no branch or commit {start!r} to start {branch!r} from")
        files = self._files(repo, repo[parent].tree) if parent is not None else {}
        for path, data in changes.items():
            path = clean_path(path)
            if data is None:
                if path not in files:
                    raise GitError(f"no file {path!r} on {branch!r} to delete")
                del files[path]
            else:
                if any(p == path or p.startswith(path + "/") for p in files if p != path) or \
                        any(path.startswith(p + "/") for p in files):
                    raise GitError(f"{path!r} clashes with an existing file or folder of that name")
                blob = Blob.from_string(data)
                repo.object_store.add_object(blob)
                files[path] = blob.id
        tree = self._write_tree(repo, files)
        if parent is not None and repo[parent].tree == tree:
            raise GitError("nothing to commit: the files are unchanged")
        sha = self._write_commit(repo, tree, [parent] if parent else [], author, message, when)
        if not repo.refs.set_if_equals(ref, old, sha):
            raise GitError(f"branch {branch!r} moved while committing")
        return sha.decode()

    def create_branch(self, key: str, branch: str, start: str) -> str:
        repo = self.repo(key)
        sha = self._sha(repo, start)
        if sha is None:
            raise GitError(f"no branch or commit {start!r}")
        ref = f"refs/heads/{branch}".encode()
        self.touched.add(key)
        if not repo.refs.add_if_new(ref, sha):
            raise GitError(f"branch {branch!r} already exists")
        return sha.decode()

    def merge(self, key: str, source: str, target: str, author: str, message: str, when: int) -> str:
        """Merge branch ``source`` into branch ``target`` with a merge commit (git's three-way merge);
        GitError when the branches conflict or there is nothing to merge."""
        repo = self.repo(key)
        self.touched.add(key)  # the merge may write blobs before it finds a conflict
        src, dst = self._branch(repo, source), self._branch(repo, target)
        if can_fast_forward(repo, src, dst):
            raise GitError(f"{source!r} has no commits that {target!r} lacks: nothing to merge")
        bases = find_merge_base(repo, [dst, src])
        merged, conflicts = three_way_merge(repo.object_store, repo[bases[0]] if bases else None, repo[dst], repo[src])
        if conflicts:
            names = ", ".join(c.decode("utf-8", "replace") for c in conflicts[:5])
            raise GitError(f"merge blocked: {source!r} and {target!r} conflict in {names}")
        repo.object_store.add_object(merged)
        sha = self._write_commit(repo, merged.id, [dst, src], author, message, when)
        if not repo.refs.set_if_equals(f"refs/heads/{target}".encode(), dst, sha):
            raise GitError(f"branch {target!r} moved while merging")
        return sha.decode()

    def _write_tree(self, repo: Repo, files: Mapping[str, bytes]) -> bytes:
        """The tree object of ``files`` (path -> blob sha), written with all its subtrees."""
        nested: dict[str, object] = {}
        for path, blob in files.items():
            node = nested
            *dirs, name = path.split("/")
            for d in dirs:
                node = node.setdefault(d, {})  # type: ignore[assignment]
            node[name] = blob

        def write(node: Mapping[str, object]) -> bytes:
            tree = Tree()
            for name, value in node.items():
                if isinstance(value, dict):
                    tree.add(name.encode(), DIR_MODE, write(value))
                else:
                    tree.add(name.encode(), FILE_MODE, value)  # type: ignore[arg-type]
            repo.object_store.add_object(tree)
            return tree.id

        return write(nested)

    def _write_commit(self, repo: Repo, tree: bytes, parents: list[bytes], author: str, message: str,
                      when: int) -> bytes:
        commit = Commit()
        commit.tree, commit.parents = tree, parents
        commit.author = commit.committer = author.encode()
        commit.author_time = commit.commit_time = when
        commit.author_timezone = commit.commit_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = message.strip().encode() + b"\n"
        repo.object_store.add_object(commit)
        return commit.id

    def _files(self, repo: Repo, tree: bytes, prefix: str = "") -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for item in repo[tree].items():
            path = posixpath.join(prefix, item.path.decode())
            if stat.S_ISDIR(item.mode):
                out.update(self._files(repo, item.sha, path))
            else:
                out[path] = item.sha
        return out

    # ---- reading --------------------------------------------------------------------------------
    def _sha(self, repo: Repo, ref: str) -> bytes | None:
        """A branch, tag or (abbreviated, at least 7 hex digits) commit sha -> commit sha."""
        refs = repo.refs.as_dict()
        for name in (f"refs/heads/{ref}", f"refs/tags/{ref}"):
            if name.encode() in refs:
                return refs[name.encode()]
        if 7 <= len(ref) <= 40 and all(c in "0123456789abcdef" for c in ref):
            if len(ref) == 40 and ref.encode() in repo.object_store:
                return ref.encode() if isinstance(repo[ref.encode()], Commit) else None
            matches = [sha for sha in repo.object_store if sha.startswith(ref.encode())]
            commits = [sha for sha in matches if isinstance(repo[sha], Commit)]
            return commits[0] if len(commits) == 1 else None
        return None

    def _branch(self, repo: Repo, branch: str) -> bytes:
        sha = repo.refs.as_dict().get(f"refs/heads/{branch}".encode())
        if sha is None:
            raise GitError(f"no branch {branch!r}")
        return sha

    def resolve(self, key: str, ref: str) -> str | None:
        sha = self._sha(self.repo(key), ref)
        return None if sha is None else sha.decode()

    def split_ref(self, key: str, rest: str) -> tuple[str, str] | None:
        """``main/src/app.py`` -> (``main``, ``src/app.py``): the longest leading run of segments that
        names a branch, tag or commit (branch names may hold slashes, as GitLab resolves them)."""
        parts = rest.strip("/").split("/")
        for cut in range(len(parts), 0, -1):
            ref = "/".join(parts[:cut])
            if self.resolve(key, ref) is not None:
                return ref, "/".join(parts[cut:])
        return None

    def branches(self, key: str) -> dict[str, str]:
        """Branch name -> head sha, by name."""
        if not self.exists(key):
            return {}
        refs = self.repo(key).refs.as_dict(b"refs/heads")
        return {name.decode(): sha.decode() for name, sha in sorted(refs.items())}

    def default_branch(self, key: str) -> str:
        target = self.repo(key).refs.get_symrefs().get(b"HEAD", b"refs/heads/main")
        return target.decode().removeprefix("refs/heads/")

    def is_empty(self, key: str) -> bool:
        return not self.branches(key)

    def log(self, key: str, ref: str, limit: int | None = None, skip: int = 0, path: str = "") -> list[CommitInfo]:
        """Commits reachable from ``ref``, newest first (git log's date order)."""
        repo = self.repo(key)
        sha = self._sha(repo, ref)
        if sha is None:
            return []
        walker = repo.get_walker(include=[sha], max_entries=None if limit is None else limit + skip,
                                 paths=[path.encode()] if path else None)
        return [_info(entry.commit) for entry in walker][skip:]

    def commit_info(self, key: str, ref: str) -> CommitInfo | None:
        repo = self.repo(key)
        sha = self._sha(repo, ref)
        return None if sha is None else _info(repo[sha])

    def ahead(self, key: str, source: str, target: str) -> list[CommitInfo]:
        """Commits on branch ``source`` that branch ``target`` lacks (what a merge request brings)."""
        repo = self.repo(key)
        src, dst = self._branch(repo, source), self._branch(repo, target)
        return [_info(e.commit) for e in repo.get_walker(include=[src], exclude=[dst])]

    def _lookup(self, repo: Repo, ref: str, path: str) -> tuple[int, bytes] | None:
        sha = self._sha(repo, ref)
        if sha is None:
            return None
        root = repo[sha].tree
        if not path.strip("/"):
            return DIR_MODE, root
        try:
            return tree_lookup_path(repo.__getitem__, root, path.strip("/").encode())
        except KeyError:
            return None

    def list_tree(self, key: str, ref: str, path: str = "") -> list[Entry] | None:
        """Folders first, then files, each by name; None when ``path`` is no folder at ``ref``."""
        repo = self.repo(key)
        found = self._lookup(repo, ref, path)
        if found is None or not stat.S_ISDIR(found[0]):
            return None
        items = [(stat.S_ISDIR(i.mode), i.path.decode("utf-8", "replace")) for i in repo[found[1]].items()]
        items.sort(key=lambda x: (not x[0], x[1].lower()))
        base = path.strip("/")
        return [Entry(name, posixpath.join(base, name) if base else name, is_dir) for is_dir, name in items]

    def read(self, key: str, ref: str, path: str) -> bytes | None:
        """A file's bytes at ``ref``; None when there is no such file."""
        repo = self.repo(key)
        found = self._lookup(repo, ref, path)
        if found is None or stat.S_ISDIR(found[0]):
            return None
        return bytes(repo[found[1]].as_raw_string())

    def changes(self, key: str, sha: str) -> tuple[list[tuple[str, str]], str]:
        """A commit's changed files (kind, path) and its unified diff against its first parent."""
        repo = self.repo(key)
        commit = repo[sha.encode()]
        old = repo[commit.parents[0]].tree if commit.parents else None
        files = []
        for change in tree_changes(repo.object_store, old, commit.tree):
            path = (change.new.path or change.old.path or b"").decode("utf-8", "replace")
            files.append((change.type, path))
        out = io.BytesIO()
        write_tree_diff(out, repo.object_store, old, commit.tree)
        return files, out.getvalue().decode("utf-8", "replace")

    def contributors(self, key: str, ref: str) -> list[tuple[str, str, int]]:
        """(name, email, commits) on ``ref``, most commits first (merge commits left out, as git shortlog
        --no-merges counts)."""
        counts: dict[tuple[str, str], int] = {}
        for c in self.log(key, ref):
            if len(c.parents) < 2:
                counts[(c.author_name, c.author_email)] = counts.get((c.author_name, c.author_email), 0) + 1
        return sorted(((n, e, k) for (n, e), k in counts.items()), key=lambda x: (-x[2], x[0]))

    # ---- the pristine copies ----------------------------------------------------------------------
    def freeze(self) -> None:
        """Write the repositories built in memory to disk, one pack each, and keep them as the pristine state."""
        for key, mem in sorted((self._memory or {}).items()):
            head = mem.refs.get_symrefs()[b"HEAD"].removeprefix(b"refs/heads/")
            with Repo.init_bare(str(self._dir(key)), mkdir=True, default_branch=head) as repo:
                store = mem.object_store
                repo.object_store.add_objects([(store[sha], None) for sha in sorted(store)])
                repo.refs.add_packed_refs({name: sha for name, sha in mem.refs.as_dict(b"refs/heads").items()
                                           for name in [b"refs/heads/" + name]})
        self._memory = None
        for key in list(self._open):
            self._forget(key)
        for path in sorted(self.live.glob("*.git")):  # anything written to disk before: packed too
            with Repo(str(path)) as repo:
                repo.object_store.pack_loose_objects()
        shutil.rmtree(self.pristine, ignore_errors=True)
        shutil.copytree(self.live, self.pristine)
        self.touched.clear()

    def restore(self) -> int:
        """Every touched repository back to its pristine copy (or gone, if it had none); returns how many."""
        restored = len(self.touched)
        for key in sorted(self.touched):
            self._forget(key)
            shutil.rmtree(self._dir(key), ignore_errors=True)
            if self._dir(key, self.pristine).is_dir():
                shutil.copytree(self._dir(key, self.pristine), self._dir(key))
        self.touched.clear()
        return restored

    def keys(self) -> Iterator[str]:
        for path in sorted(self.live.glob("*.git")):
            yield path.name.removesuffix(".git")

    def close(self) -> None:
        for key in list(self._open):
            self._forget(key)

