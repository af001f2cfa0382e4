"""The command-line confirmation prompt for high-risk tool calls."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["cli_confirm", "mask_secrets"]

# Parameter names whose values are credentials more often than not.
_SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"auth|credential|cookie|session|signature|bearer",
    re.IGNORECASE,
)
# Values that look like credentials wherever they appear (including inside a command line).
_SECRET_VALUE = re.compile(
    r"(?i:bearer\s+)[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bxox[abpr]-[A-Za-z0-9-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
    r"|(?i:(?:password|passwd|pwd|token|secret|api[_-]?key)\s*[=:]\s*)\S+"
    r"|://[^/\s:@]+:[^/\s@]+@"
)
MASK = "****"


def _mask_text(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        if s.startswith("://"):
            return "://" + MASK + "@"
        for sep in ("=", ":"):
            head, found, _ = s.partition(sep)
            if found and _SECRET_KEY.search(head):
                return head + sep + MASK
        if s.lower().startswith("bearer"):
            return s[:7] + MASK
        return MASK

    return _SECRET_VALUE.sub(repl, text)


def mask_secrets(value: Any, _key: str | None = None) -> Any:
    """A copy of ``value`` with secret-looking entries replaced by ``****``.

    A value is masked when its key names a credential (``password``, ``api_key``, ``token``, ...)
    or when the text itself looks like one (bearer tokens, ``sk-...`` keys, GitHub/Slack/AWS
    tokens, JWTs, ``password=...`` pairs, credentials in URLs).
    """
    if _key is not None and _SECRET_KEY.search(_key) and value not in (None, "", [], {}):
        return MASK
    if isinstance(value, dict):
        return {k: mask_secrets(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_secrets(v) for v in value]
    if isinstance(value, str):
        return _mask_text(value)
    return value


def cli_confirm(tool: Any, parameters: dict[str, Any]) -> bool:
    """Ask on stdin whether a high-risk tool call may run.

    Shows the tool and its arguments (secret-looking values masked) and returns True only for an
    answer of ``y`` or ``yes``. End of input (no terminal, closed stdin) counts as no.
    """
    name = getattr(tool, "name", str(tool))
    shown = json.dumps(mask_secrets(parameters), ensure_ascii=False, indent=2, default=repr)
    print(f"\nTool '{name}' wants to run a high-risk operation with these arguments:\n{shown}", flush=True)
    try:
        answer = input("Allow it? [y/N] ")
    except EOFError:
        print("(no input: not allowed)", flush=True)
        return False
    return answer.strip().lower() in ("y", "yes")
