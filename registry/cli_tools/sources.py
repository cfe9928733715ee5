"""Where schema texts are read from: the working tree, or a git revision (real ``git``)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from registry.cli_tools.errors import ToolError


class Source:
    """Files as they are somewhere: ``read`` gives ``None`` for a file that does not exist."""

    label = "working tree"

    def read(self, path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise ToolError(f"{path}: cannot read: {exc}") from None

    def list_dir(self, directory: Path) -> list[Path]:
        if not directory.is_dir():
            return []
        return sorted(p for p in directory.iterdir() if p.is_file())


WORK_TREE = Source()


@dataclass
class GitRevision(Source):
    """Files as they were at ``rev`` in the git repository that holds the working directory."""

    rev: str
    cwd: Path = field(default_factory=Path.cwd)
    root: Path = field(init=False)
    commit: str = field(init=False)

    def __post_init__(self) -> None:
        self.root = Path(self._git("rev-parse", "--show-toplevel").strip()).resolve()
        try:
            self.commit = self._git("rev-parse", "--verify", "--quiet", f"{self.rev}^{{commit}}")
        except ToolError:
            raise ToolError(f"git: unknown revision {self.rev!r}") from None
        self.commit = self.commit.strip()
        self.label = f"git:{self.rev}"

    def _git(self, *args: str) -> str:
        try:
            done = subprocess.run(
                ["git", *args], cwd=self.cwd, capture_output=True, text=True, check=False
            )
        except FileNotFoundError:
            raise ToolError("git is not installed") from None
        if done.returncode != 0:
            raise ToolError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
        return done.stdout

    def relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            raise ToolError(f"{path}: not inside the git repository {self.root}") from None

    def read(self, path: Path, commit: str | None = None) -> str | None:
        done = subprocess.run(
            ["git", "show", f"{commit or self.commit}:{self.relative(path)}"],
            cwd=self.root,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            return None
        try:
            return done.stdout.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{path} at {self.label}: cannot read: {exc}") from None

    def list_dir(self, directory: Path) -> list[Path]:
        rel = self.relative(directory)
        prefix = "" if rel == "." else rel + "/"
        out = self._git("ls-tree", "--name-only", self.commit, prefix or ".")
        return sorted(self.root / line for line in out.splitlines() if line)

    def history(self, path: Path) -> list[str]:
        """Every distinct text the file had in the history leading to the revision, oldest
        first (the versions a transitive check compares with)."""
        out = self._git("log", "--format=%H", self.commit, "--", self.relative(path))
        texts: list[str] = []
        for commit in reversed(out.split()):
            text = self.read(path, commit)
            if text is not None and (not texts or texts[-1] != text):
                texts.append(text)
        return texts
