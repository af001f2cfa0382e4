"""``Workspace``: file tools confined to one directory, as a :class:`Toolkit`.

The tools are Rust built-ins (``src/builtins/workspace/``): ``ls``, ``read_file``, ``glob``,
``grep`` and, unless ``read_only=True``, ``write_file``, ``edit_file`` and ``multi_edit``. Every
path is opened from the root's directory descriptor without following symlinks; secret files
(``deny``) are refused; an existing file is overwritten or edited only after the agent read it in
the same run and only if it has not changed since (``read_before_write``). The toolkit's ``instructions`` tell
the model so. See ``docs/guide.md`` ("Workspace").
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from pathlib import Path

from agentmaker._native import WorkspaceTool, _workspace_tools
from agentmaker.tools.toolkit import Toolkit

__all__ = ["Workspace", "WorkspaceTool"]


class Workspace(Toolkit):
    """The file tools of one directory ``root`` (which must exist).

    ``read_only=True`` offers only ``ls``, ``read_file``, ``glob`` and ``grep``. ``deny`` replaces
    the default list of secret-file patterns (``.env*``, ``.ssh``, ``.git/config``, ``*.pem``,
    ``id_rsa*`` ...; ``deny=[]`` turns it off); each pattern matches at any depth.
    ``read_before_write=False`` lets the model overwrite or edit files it has not read (a file
    changed since it read it is still refused). The limits: ``read_lines`` lines per
    ``read_file`` page, ``max_line_chars`` characters per line shown, ``max_read_bytes`` bytes
    per page, ``max_entries`` entries of ``ls`` and default ``head_limit`` of ``glob``/``grep``,
    ``max_output_bytes`` bytes of ``glob``/``grep`` output. ``prompts`` overrides model-facing
    texts by key (``workspace.*``).

    Build one workspace per agent run: what the agent has read is remembered by the workspace.
    A missing root raises ``FileNotFoundError``, a root that is not a directory or a bad option
    ``ToolConfigError``.
    """

    def __init__(
        self,
        root: str | PathLike[str],
        *,
        read_only: bool = False,
        deny: Iterable[str] | None = None,
        read_before_write: bool = True,
        read_lines: int = 2000,
        max_line_chars: int = 2000,
        max_read_bytes: int = 100_000,
        max_entries: int = 500,
        max_output_bytes: int = 50_000,
        prompts: dict[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(deny, str):
            raise TypeError(f"Workspace deny must be a list of patterns, got {deny!r}")
        tools, instructions, self.root = _workspace_tools(
            Path(root),
            read_only=bool(read_only),
            deny=None if deny is None else list(deny),
            read_before_write=bool(read_before_write),
            read_lines=read_lines,
            max_line_chars=max_line_chars,
            max_read_bytes=max_read_bytes,
            max_entries=max_entries,
            max_output_bytes=max_output_bytes,
            prompts=prompts,
        )
        self.read_only = bool(read_only)
        super().__init__(tools, name=name or "workspace", instructions=instructions)

    def __getitem__(self, name: str) -> WorkspaceTool:
        """The tool called ``name`` (``ws["grep"]``)."""
        for t in self.tools:
            if t.name == name and isinstance(t, WorkspaceTool):
                return t
        raise KeyError(f"workspace has no tool {name!r}; its tools are {[t.name for t in self.tools]!r}")
