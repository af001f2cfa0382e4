"""Tools made from Python callables: ``@tool``, ``Tool.from_callable``,
``ToolRegistry.register_callable`` and ``ToolRegistry.register_function``.

How the registry runs these (see src/py/registry.rs): a tool whose ``_fast_call`` is
``(func, names)`` or ``(func, names, null_defaults)`` is called from Rust as ``func(**kwargs)``
with only the declared keys, skipping keys in ``null_defaults`` whose value is None (null means
"use the default"); its result is wrapped by the rules of ``agentmaker.tools.return_values``.
Every other callable tool runs through ``run`` / ``arun`` here, which convert the arguments
(Enum members, dataclasses, datetimes ...) and wrap the result.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeAlias, TypedDict, TypeVar, overload

from agentmaker._native import Tool, ToolParameter, ToolResponse, _async_in_running_loop_text
from agentmaker.errors import ToolRegistrationError
from agentmaker.isolation.settings import Isolation, check_importable, setting
from agentmaker.tools.guardrail_setting import check_guardrails
from agentmaker.tools.signature import (
    _LOOP_RUNNING,
    CallableSpec,
    _is_async,
    analyze,
    is_coroutine_function,
    to_response,
)

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "DictFunctionTool",
    "FunctionTool",
    "RepairSetting",
    "ToolFlags",
    "check_repair",
    "from_callable",
    "function_tool",
    "tool",
]

P = ParamSpec("P")
R = TypeVar("R")

RepairSetting: TypeAlias = Literal["full", "coerce", "off"]
"""What may be repaired in a call's arguments (``@tool(repair=...)``, ``RunPolicy(repair=...)``)."""

_REPAIR_SETTINGS = ("full", "coerce", "off")


def check_repair(value: object, where: str) -> None:
    """Refuse a repair setting that is not one of ``"full"``, ``"coerce"``, ``"off"``."""
    if not isinstance(value, str) or value not in _REPAIR_SETTINGS:
        raise ValueError(f'{where}: repair must be "full", "coerce" or "off", got {value!r}')


class ToolFlags(TypedDict, total=False):
    """The behaviour flags ``@tool``, ``from_callable`` and ``register_callable`` accept."""

    requires_confirmation: bool
    external_content: bool
    supports_parallel: bool
    timeout: float | None
    stop_after_tool_call: bool
    isolate: bool | Isolation | None
    # Text an Agent adds to its system prompt while this tool is offered (docs/guide.md).
    instructions: str | None
    # What may be repaired in the arguments a model sends; None follows RunPolicy(repair=...).
    repair: RepairSetting | None
    # The most characters of a result the model reads: a longer one is cut and marked partial
    # (None follows RunPolicy(max_result_chars=...)).
    max_result_chars: int | None
    # Callables checking this tool's calls and results (agentmaker.agent.guardrails), after the
    # agent's and the run's.
    input_guardrails: Any
    output_guardrails: Any
    # Hints an MCP client reads (docs/mcp.md): served as readOnlyHint, destructiveHint,
    # idempotentHint and openWorldHint. None (the default) leaves a hint out.
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None


_HINTS = ("read_only", "destructive", "idempotent", "open_world")
_FLAGS = (
    "requires_confirmation",
    "external_content",
    "supports_parallel",
    "timeout",
    "stop_after_tool_call",
    "isolate",
    "instructions",
    "repair",
    "max_result_chars",
    "input_guardrails",
    "output_guardrails",
    *_HINTS,
)
_FLAG_SET = frozenset(_FLAGS)


def _check_flags(flags: Mapping[str, object], allowed: tuple[str, ...], where: str) -> None:
    if not flags or flags.keys() == _FLAG_SET:  # what register_function and @tool pass
        return
    unknown = sorted(set(flags) - set(allowed))
    if unknown:
        raise TypeError(
            f"{where} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"accepted: {', '.join(allowed)}"
        )


def _apply_flags(obj: Tool, flags: Mapping[str, object]) -> None:
    if not flags:
        return
    for key in ("requires_confirmation", "external_content", "supports_parallel", "stop_after_tool_call"):
        if flags.get(key):  # the class attributes already say False
            setattr(obj, key, True)
    if flags.get("timeout") is not None:
        timeout = flags["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ToolRegistrationError(f"timeout must be a positive number of seconds, got {timeout!r}")
        setattr(obj, "timeout", float(timeout))  # noqa: B010 - a class-level setting, set per tool here
    if flags.get("max_result_chars") is not None:
        limit = flags["max_result_chars"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ToolRegistrationError(
                f"tool '{obj.name}': max_result_chars must be an integer >= 1 or None, got {limit!r}"
            )
        setattr(obj, "max_result_chars", limit)  # noqa: B010 - a class-level setting, set per tool here
    for key in ("input_guardrails", "output_guardrails"):
        if flags.get(key) is not None:
            setattr(obj, key, check_guardrails(flags[key], f"tool '{obj.name}': {key}"))
    isolate = setting(flags.get("isolate"), f"tool '{obj.name}'")
    if isolate is not None:
        if isolate and isinstance(obj, FunctionTool):
            check_importable(obj.func, obj.name)  # a worker finds the function by its name
        elif isolate:
            raise ToolRegistrationError(
                f"tool '{obj.name}': isolate is for @tool functions and Tool subclasses; a "
                "register_function tool cannot be sent to a worker process"
            )
        setattr(obj, "isolate", isolate)  # noqa: B010 - a class-level setting, set per tool here
    instructions = flags.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str) or not instructions.strip():
            raise ToolRegistrationError(
                f"tool '{obj.name}': instructions must be a non-empty string or None, got {instructions!r}"
            )
        setattr(obj, "instructions", instructions)  # noqa: B010 - a class-level setting, set per tool here
    repair = flags.get("repair")
    if repair is not None:
        try:
            check_repair(repair, f"tool '{obj.name}'")
        except ValueError as e:
            raise ToolRegistrationError(str(e)) from None
        setattr(obj, "repair", repair)  # noqa: B010 - a class-level setting, set per tool here
    for key in _HINTS:
        value = flags.get(key)
        if value is not None:
            if not isinstance(value, bool):
                raise ToolRegistrationError(f"{key} must be True, False or None, got {value!r}")
            setattr(obj, key, value)


class FunctionTool(Tool, Generic[P, R]):
    """A tool inferred from a typed function. Calling it calls the function.

    It is generic in the function's parameters and return type, so a type checker sees
    ``get_weather("Paris", days=2)`` on a ``@tool`` function exactly as on the function itself.
    """

    # The inferred schema never changes: the registry checks it at the first registration and
    # every later registry (one per agent or request) reuses that check.
    _fixed_schema = True

    def __init__(self, spec: CallableSpec, **flags: Unpack[ToolFlags]) -> None:
        super().__init__(spec.name, spec.description)
        self._spec = spec
        _apply_flags(self, flags)
        self.__doc__ = getattr(spec.func, "__doc__", None)

    @property
    def _fast_call(self) -> tuple[Any, ...] | None:
        """How the registry calls the function straight (see the module doc); read once, at the
        tool's first registration, so it is made then rather than kept."""
        spec = self._spec
        if not spec.plain:
            return None
        names = list(spec.schema["properties"])
        return (spec.func, names, list(spec.null_defaults)) if spec.null_defaults else (spec.func, names)

    @property
    def __wrapped__(self) -> Callable[P, R]:
        """The wrapped function (what ``inspect.signature`` and ``functools`` follow)."""
        func: Callable[P, R] = self._spec.func
        return func

    @property
    def func(self) -> Callable[P, R]:
        """The wrapped function."""
        func: Callable[P, R] = self._spec.func
        return func

    @property
    def is_async(self) -> bool:
        """True for an ``async def`` function: the Agent awaits it instead of using a thread."""
        return self._spec.is_async

    def get_parameters(self) -> list[ToolParameter]:
        return [
            ToolParameter(
                p.name, p.type, p.description, required=p.required, default=p.default, schema=p.schema
            )
            for p in self._spec.params
        ]

    def get_input_schema(self) -> dict[str, Any]:
        return self._spec.schema

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return self._spec.call(parameters)

    async def arun(self, parameters: dict[str, Any]) -> ToolResponse:
        return await self._spec.acall(parameters)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        result: R = self._spec.func(*args, **kwargs)
        return result

    def _worker_recipe(self) -> tuple[Callable[..., Any], tuple[str, ...]]:
        """How an isolated call's worker process rebuilds this tool: it imports the function by
        its module and qualified name (see :mod:`agentmaker.isolation`)."""
        func = self.func
        check_importable(func, self.name)
        return _rebuilt, (func.__module__, func.__qualname__, self.name, self.description)


def _rebuilt(module: str, qualname: str, name: str, description: str) -> FunctionTool[Any, Any]:
    """In a worker process: the tool of ``_worker_recipe``, made again from its function."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, FunctionTool):
        obj = obj.func
    return from_callable(obj, name=name, description=description)


def from_callable(
    func: Callable[P, R],
    *,
    name: str | None = None,
    description: str | None = None,
    **flags: Unpack[ToolFlags],
) -> FunctionTool[P, R]:
    """Infer a tool from a typed callable (what ``@tool`` does)."""
    _check_flags(flags, _FLAGS, "from_callable()")
    if isinstance(func, Tool):
        raise ToolRegistrationError(f"{func!r} already is a Tool; register it directly")
    return FunctionTool(analyze(func, name=name, description=description), **flags)


@overload
def tool(
    _func: Callable[P, R],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **flags: Unpack[ToolFlags],
) -> FunctionTool[P, R]: ...


@overload
def tool(
    _func: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **flags: Unpack[ToolFlags],
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    _func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **flags: Unpack[ToolFlags],
) -> FunctionTool[Any, Any] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Turn a type-annotated function into a :class:`Tool`.

    Use bare (``@tool``) or with keywords (``@tool(name=..., requires_confirmation=True)``); the
    flags are those of :class:`ToolFlags`. The schema is inferred from the signature and the
    docstring; a signature that cannot be mapped raises :class:`ToolRegistrationError` right
    here, at definition time.
    """
    if _func is not None and name is None and description is None and not flags:
        if isinstance(_func, Tool):
            raise ToolRegistrationError(f"{_func!r} already is a Tool; register it directly")
        return FunctionTool(analyze(_func))  # bare @tool: nothing to check or apply
    _check_flags(flags, _FLAGS, "@tool()")

    def decorate(func: Callable[P, R]) -> FunctionTool[P, R]:
        return from_callable(func, name=name, description=description, **flags)

    if _func is not None:
        return decorate(_func)
    return decorate


class DictFunctionTool(Tool):
    """A tool whose function takes the whole parameter dict (``register_function``)."""

    def __init__(
        self,
        func: Callable[[dict[str, Any]], Any],
        name: str,
        description: str,
        parameters: list[Any],
        **flags: Any,
    ) -> None:
        if not callable(func):
            raise ToolRegistrationError(f"register_function() needs a callable, got {func!r}")
        super().__init__(name, description)
        for p in parameters:
            if not isinstance(p, ToolParameter):
                raise ToolRegistrationError(
                    f"register_function() parameters must be ToolParameter objects, got {type(p).__name__}"
                )
        self._func = func
        self._params = list(parameters)
        # For a plain function the code flags and marks say it all; _is_async would read the
        # function's __dict__, which makes one (64 bytes a tool in a large catalog).
        if type(func) is types.FunctionType:
            self._is_async = is_coroutine_function(func)
        else:
            self._is_async = _is_async(func, func)
        _apply_flags(self, flags)
        functools.update_wrapper(self, func, assigned=("__doc__",), updated=())

    @property
    def is_async(self) -> bool:
        """True for an async function: the Agent awaits it instead of using a thread."""
        return self._is_async

    def get_parameters(self) -> list[ToolParameter]:
        return list(self._params)

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        result = self._func(dict(parameters))
        if self._is_async or inspect.isawaitable(result):
            result = CallableSpec._finish_sync(result)
            if result is _LOOP_RUNNING:
                return ToolResponse.error(_async_in_running_loop_text(self.name))
        return to_response(self.name, result)

    async def arun(self, parameters: dict[str, Any]) -> ToolResponse:
        if not self._is_async:
            return await super().arun(parameters)
        result = self._func(dict(parameters))
        if inspect.isawaitable(result):
            result = await result
        return to_response(self.name, result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._func(*args, **kwargs)


def function_tool(
    func: Callable[[dict[str, Any]], Any], name: str, description: str, parameters: list[Any], **flags: Any
) -> DictFunctionTool:
    _check_flags(flags, _FLAGS, "register_function()")
    return DictFunctionTool(func, name, description, parameters, **flags)
