"""Does a tool function's docstring agree with its signature?  A parameter section that names
a parameter the function does not have, or leaves one out while describing the others, would
give the model a wrong or missing description: defining the tool warns
(:class:`agentmaker.errors.ToolDefinitionWarning`), pointing at the function."""

from __future__ import annotations

import warnings
from typing import Any

from agentmaker.errors import ToolDefinitionWarning

__all__ = ["check_documented"]


def check_documented(label: str, code_owner: Any, docs: dict[str, str], props: dict[str, Any]) -> None:
    """Warn (ToolDefinitionWarning) about a docstring parameter section that names a parameter
    the function does not have, or leaves out one the others are documented beside: the model
    would read a wrong or missing description.  A parameter described by its annotation
    (``Annotated[..., Field(description=...)]``) needs no entry."""
    unknown = [n for n in docs if n not in props]
    missing = [n for n, prop in props.items() if n not in docs and "description" not in prop]
    if not unknown and not missing:
        return
    code = getattr(code_owner, "__code__", None)
    filename = code.co_filename if code is not None else "<unknown>"
    lineno = code.co_firstlineno if code is not None else 0
    module = getattr(code_owner, "__module__", None) or "agentmaker"
    import difflib

    for n in unknown:
        near = difflib.get_close_matches(n, missing, n=1)
        if near:  # a misspelt entry: one warning, not a second one for the parameter it meant
            missing.remove(near[0])
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        _warn(
            f"Tool function '{label}': its docstring describes '{n}', which is not one of its "
            f"parameters{hint}; rename the entry to the parameter it describes or remove it",
            filename,
            lineno,
            module,
        )
    for n in missing:
        _warn(
            f"Tool function '{label}': parameter '{n}' has no entry in the docstring's parameter "
            f"section while other parameters do, so the model gets no description for it; add "
            f"an entry for '{n}'",
            filename,
            lineno,
            module,
        )


def _warn(message: str, filename: str, lineno: int, module: str) -> None:
    warnings.warn_explicit(message, ToolDefinitionWarning, filename, lineno, module=module)
