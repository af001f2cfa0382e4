"""Which of an LLM object's ``chat`` and ``achat`` the agent calls.

The rule: the most-derived definition wins, so an inherited ``achat`` never shadows an
overridden ``chat`` (a ``ScriptedLLM`` subclass that overrides ``chat`` to record or rewrite
replies is honoured by ``Agent.arun`` too), and an overridden ``achat`` is not bypassed by an
inherited ``chat`` (``Agent.run`` drives it on its event loop, as it does any awaitable a
model returns). "Most derived" looks at the object's own ``__dict__`` first (a method set on
the instance), then along the class's MRO; the first place that defines either name decides.
Where one place defines both, the async path (``Agent.arun``) uses ``achat`` and the sync path
(``Agent.run``) uses ``chat``. A name set to None there counts as not defined.

One exception keeps an overridden blocking ``chat`` off the event loop: an inherited ``achat``
marked as running ``self.chat`` on a worker thread (``LLMClient.achat``) is used by the async
path even below an overridden ``chat``, since what it runs is that ``chat``.

The class part of the decision is cached per type; only the instance ``__dict__`` is looked at
on each run.
"""

from __future__ import annotations

import weakref
from typing import Any

# (sync name, async name) per class, or None where the class defines neither (then only the
# instance's own attributes can, and the agent's constructor already checked ``chat``).
_by_type: weakref.WeakKeyDictionary[type, tuple[str, str]] = weakref.WeakKeyDictionary()

_THREAD_WRAPPER = "_agentmaker_runs_chat_on_a_thread"


def runs_chat_on_a_thread(func: Any) -> Any:
    """Marks an ``achat`` that only runs ``self.chat`` on a worker thread (see the module doc)."""
    setattr(func, _THREAD_WRAPPER, True)
    return func


def _defines(namespace: Any, name: str) -> bool:
    return namespace.get(name) is not None


def _choice(chat_here: bool, achat_here: bool) -> tuple[str, str]:
    if chat_here and achat_here:
        return "chat", "achat"
    return ("chat", "chat") if chat_here else ("achat", "achat")


def _kept_off_the_loop(cls: type, choice: tuple[str, str]) -> tuple[str, str]:
    if choice[1] == "chat" and getattr(getattr(cls, "achat", None), _THREAD_WRAPPER, False):
        return ("chat", "achat")
    return choice


def _for_type(cls: type) -> tuple[str, str]:
    try:
        return _by_type[cls]
    except (KeyError, TypeError):
        pass
    choice = ("chat", "chat")
    for klass in cls.__mro__:
        ns = klass.__dict__
        chat_here, achat_here = _defines(ns, "chat"), _defines(ns, "achat")
        if chat_here or achat_here:
            choice = _kept_off_the_loop(cls, _choice(chat_here, achat_here))
            break
    try:
        _by_type[cls] = choice
    except TypeError:  # a class that cannot be weakly referenced: decided on every run
        pass
    return choice


def chat_method(llm: Any, sync: bool) -> Any:
    """The bound method the agent calls for one run: ``sync`` is True for ``Agent.run``."""
    own = getattr(llm, "__dict__", None)
    chat_here = achat_here = False
    if own:
        chat_here, achat_here = _defines(own, "chat"), _defines(own, "achat")
    if chat_here or achat_here:
        choice = _kept_off_the_loop(type(llm), _choice(chat_here, achat_here))
    else:
        choice = _for_type(type(llm))
    method = getattr(llm, choice[0] if sync else choice[1], None)
    if not callable(method):  # e.g. an achat that only __getattr__ answers: the checked chat
        method = llm.chat
    return method
