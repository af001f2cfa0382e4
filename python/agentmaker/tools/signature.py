"""From a Python callable to a tool specification: name, description, root JSON Schema, and the
call plan (argument conversion, positional-only parameters, async handling, result wrapping).

Plain functions are read straight from ``__code__`` / ``__defaults__`` / ``__kwdefaults__`` /
``__annotations__`` (``inspect.signature`` alone costs more than the whole analysis); string
annotations (``from __future__ import annotations``) are evaluated once per text and module and
revalidated against the module's current bindings.  Wrapped functions, ``functools.partial``,
callable objects and anything unusual go through ``inspect`` and ``typing.get_type_hints``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, KeysView
from typing import Any, NamedTuple, TypeGuard

from agentmaker._native import (
    ToolResponse,
    _async_in_running_loop_text,
    _tool_name_problem,
    _tool_result,
    _validation_failed_text,
)
from agentmaker.errors import ToolRegistrationError
from agentmaker.tools.docstring import doc_parts
from agentmaker.tools.docstring_check import check_documented
from agentmaker.tools.run_context import RunContext
from agentmaker.tools.schema import infer as _si
from agentmaker.tools.schema.json_values import json_default
from agentmaker.tools.schema.node import _MISSING, ConversionError, Unmappable, closure_defs

__all__ = ["CallableSpec", "ParamInfo", "analyze", "check_tool_name", "to_response"]

_NAME_RE = re.compile(r"[^\s\x00-\x1f\x7f-\x9f]{1,128}")
_CO_VARARGS = inspect.CO_VARARGS
_CO_VARKEYWORDS = inspect.CO_VARKEYWORDS
_CO_GENERATOR = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY


class ParamInfo(NamedTuple):
    name: str
    type: str  # JSON type word for ToolParameter
    description: str
    required: bool
    default: Any  # the Python default (None when required)
    schema: dict[str, Any]  # the property schema as it appears in the root schema


def check_tool_name(name: object) -> TypeGuard[str]:
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None


class CallableSpec:
    """Everything the registry needs to expose and call a Python callable as a tool.

    Fast path contract (``plain`` is True): drop argument keys not in ``param_names``, drop a key
    in ``null_defaults`` whose value is None, then ``func(**args)``.  Otherwise call
    ``prepare(args)`` for ``(positional, keyword)`` arguments or an error text.
    """

    __slots__ = (
        "_convs",
        "_defaults",
        "_fills",
        "_posonly",
        "_types",
        "contexts",
        "description",
        "func",
        "is_async",
        "name",
        "null_defaults",
        "plain",
        "schema",
    )

    def __init__(
        self,
        name: str,
        description: str,
        func: Callable[..., Any],
        is_async: bool,
        rows: tuple[tuple[str, ...], tuple[Any, ...]],
        schema: dict[str, Any],
        convs: tuple[tuple[str, Any], ...],
        null_defaults: tuple[str, ...],
        posonly: tuple[tuple[str, Any], ...],
        fills: tuple[tuple[str, Any], ...] = (),
        contexts: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.description = description
        self.func = func
        self.is_async = is_async
        # Per parameter, in the schema's order, what the schema does not hold: the type word
        # and the Python default (two flat tuples: the rest of ParamInfo is read off the schema).
        self._types, self._defaults = rows
        self.schema = schema
        self.null_defaults = null_defaults
        self._convs = convs
        self._posonly = posonly
        self._fills = fills
        # Parameters annotated RunContext: filled by the agent, never in the schema.
        self.contexts = contexts
        self.plain = not convs and not posonly and not fills and not contexts

    @property
    def param_names(self) -> KeysView[str]:
        """The parameters the schema shows (a live view of its properties: no copy kept)."""
        properties: dict[str, Any] = self.schema["properties"]
        return properties.keys()

    @property
    def params(self) -> list[ParamInfo]:
        """The parameters in declaration order."""
        props = self.schema["properties"]
        required = self.schema["required"]
        out = []
        for (name, prop), type_word, default in zip(props.items(), self._types, self._defaults, strict=True):
            text = prop.get("description")
            out.append(
                ParamInfo(
                    name, type_word, text if isinstance(text, str) else "", name in required, default, prop
                )
            )
        return out

    def prepare(self, args: dict[str, Any]) -> tuple[list[Any], dict[str, Any]] | str:
        """Validated JSON arguments -> call arguments; an error text names the failing path."""
        names = self.param_names
        kwargs = {k: v for k, v in args.items() if k in names}
        for k in self.null_defaults:
            if k in kwargs and kwargs[k] is None:
                del kwargs[k]
        for k, field_info in self._fills:
            if k not in kwargs:
                if field_info.is_required():
                    return _validation_failed_text(self.name, f"'{k}' is a required property")
                kwargs[k] = field_info.get_default(call_default_factory=True)
        for k, conv in self._convs:
            if k in kwargs:
                try:
                    kwargs[k] = conv(kwargs[k])
                except ConversionError as exc:
                    exc.path.insert(0, k)
                    return _validation_failed_text(self.name, exc.render())
                except Exception as exc:  # a converter must never let an exception escape  # noqa: BLE001 - user code / third-party errors become messages
                    return _validation_failed_text(self.name, f"parameter '{k}': {type(exc).__name__}: {exc}")
        for k in self.contexts:  # only the agent's own context object, never a model's value
            v = args.get(k)
            kwargs[k] = v if isinstance(v, RunContext) else None
        positional: list[Any] = []
        if self._posonly:
            present = [k for k, _ in self._posonly if k in kwargs]
            if present:
                last = present[-1]
                for k, default in self._posonly:
                    if k in kwargs:
                        positional.append(kwargs.pop(k))
                    elif default is _MISSING:
                        return _validation_failed_text(self.name, f"'{k}' is a required property")
                    else:
                        positional.append(default)
                    if k == last:
                        break
        return positional, kwargs

    def call(self, args: dict[str, Any]) -> ToolResponse:
        """Run synchronously and wrap the result in a ToolResponse."""
        if self.plain:
            names = self.param_names
            kwargs = {
                k: v for k, v in args.items() if k in names and not (v is None and k in self.null_defaults)
            }
            result = self.func(**kwargs)
        else:
            prepared = self.prepare(args)
            if isinstance(prepared, str):
                return ToolResponse.error(prepared)
            result = self.func(*prepared[0], **prepared[1])
        if self.is_async or inspect.isawaitable(result):
            result = self._finish_sync(result)
            if result is _LOOP_RUNNING:
                return ToolResponse.error(_async_in_running_loop_text(self.name))
        return _tool_result(self.name, result)

    def _call_in_worker(self, args: dict[str, Any]) -> ToolResponse:
        # asyncio cannot carry StopIteration through a Future: the awaiting task would never wake.
        # Re-raised as RuntimeError, as PEP 479 does for generators (and Tool.arun for run()).
        try:
            return self.call(args)
        except StopIteration as exc:
            raise RuntimeError(f"the function raised StopIteration: {exc}") from exc

    async def acall(self, args: dict[str, Any]) -> ToolResponse:
        """Run on the async path: async functions are awaited, sync ones run in a worker thread."""
        if not self.is_async:
            return await asyncio.to_thread(self._call_in_worker, args)
        prepared = self.prepare(args)
        if isinstance(prepared, str):
            return ToolResponse.error(prepared)
        result = self.func(*prepared[0], **prepared[1])
        if inspect.isawaitable(result):
            result = await result
        return _tool_result(self.name, result)

    @staticmethod
    def _finish_sync(result: Any) -> Any:
        if asyncio.events._get_running_loop() is not None:
            if inspect.iscoroutine(result):
                result.close()
            return _LOOP_RUNNING
        if inspect.iscoroutine(result):
            return asyncio.run(result)

        async def wait() -> Any:
            return await result

        return asyncio.run(wait())


_LOOP_RUNNING = object()


def to_response(tool_name: str, value: Any) -> ToolResponse:
    """A tool function's return value as its ToolResponse (the rules: agentmaker.tools.return_values)."""
    return _tool_result(tool_name, value)


# ---------------------------------------------------------------------------------------------
# Analysis


def _fn_label(func: Any) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def _fail(func: Any, message: str) -> ToolRegistrationError:
    return ToolRegistrationError(f"Tool function '{_fn_label(func)}' {message}")


# A callable's parameters as the analysis needs them (a plain tuple: built once per definition):
# (what to call, the function whose annotations/globals apply, [(name, default or _MISSING,
# positional-only)], annotations or None to resolve the slow way, docstring, default tool name).
_Shape = tuple[
    Callable[..., Any], Any, list[tuple[str, Any, bool]], "dict[str, Any] | None", "str | None", "str | None"
]


def analyze(func: Any, *, name: str | None = None, description: str | None = None) -> CallableSpec:
    """Build the spec for ``func``; raise ToolRegistrationError for anything that cannot work."""
    shape = _shape(func)
    target, code_owner, params, hints, raw_doc, default_name = shape
    tool_name = name or default_name
    # An inferred name is a Python identifier; '<lambda>' would name every lambda alike.
    if name and isinstance(name, str) and (problem := _tool_name_problem(name)) is not None:
        raise ToolRegistrationError(problem)
    if not check_tool_name(tool_name) or (not name and not str(tool_name).isidentifier()):
        raise ToolRegistrationError(
            f"Cannot infer a valid tool name from {func!r} (got {tool_name!r}): pass name= explicitly; "
            "a tool name is 1 to 128 characters with no whitespace or control characters"
        )
    summary, docs = doc_parts(raw_doc)
    if hints is None:
        hints = _hints_slow(code_owner, func)
    globalns = getattr(code_owner, "__globals__", None) or {}
    with _si.LOCK:
        built = _build_schema(func, params, hints, globalns, docs)
    schema, rows, convs, null_defaults, posonly, fills, contexts = built
    if docs:  # a RunContext parameter may be documented; it is just not the model's business
        shown = {k: v for k, v in docs.items() if k not in contexts}
        check_documented(_fn_label(func), code_owner, shown, schema["properties"])
    is_async = _is_async(func, target)
    return CallableSpec(
        tool_name,
        description if description else summary,
        target,
        is_async,
        rows,
        schema,
        convs,
        null_defaults,
        posonly,
        fills,
        contexts,
    )


def _build_schema(
    func: Any,
    params: list[tuple[str, Any, bool]],
    hints: dict[str, Any],
    globalns: dict[str, Any],
    docs: dict[str, str],
) -> tuple[Any, ...]:
    resolve = _resolver(globalns, func)
    props: dict[str, Any] = {}
    required: list[str] = []
    types: list[str] = []  # with defaults: the ParamInfo fields the schema lacks
    defaults: list[Any] = []
    convs: list[tuple[str, Any]] = []
    null_defaults: list[str] = []
    posonly: list[tuple[str, Any]] = []
    fills: list[tuple[str, Any]] = []
    contexts: list[str] = []
    refs: set[str] = set()
    cached = _si._CACHE.get
    for pname, default, is_posonly in params:
        ann = hints.get(pname, _MISSING)
        if ann is _MISSING:
            hint = (
                " (it looks like a method of a class body: register the bound method obj.method instead)"
                if pname in ("self", "cls")
                else ""
            )
            raise _fail(
                func,
                f"parameter '{pname}' is missing a type annotation; @tool infers the schema from "
                f"annotations, add the annotation or construct a Tool subclass explicitly{hint}",
            )
        if type(ann) is str:
            try:
                ann = _eval_annotation(ann, globalns)
            except Exception as exc:  # noqa: BLE001 - user code / third-party errors become messages
                raise _fail(
                    func,
                    f"parameter '{pname}' annotation {ann!r} cannot be resolved ({type(exc).__name__}: "
                    f"{exc}): make the type visible at module level, or construct a Tool subclass",
                ) from None
        if ann is RunContext or typing.get_origin(ann) is RunContext:
            contexts.append(pname)
            continue
        if default is not _MISSING and type(default).__name__ == "FieldInfo":
            # `x: int = Field(3, ge=0)`: the Field carries the real default and the constraints.
            fills.append((pname, default))
            ann = typing.Annotated[ann, default]
            default = _field_default(default)
        try:
            node = cached(ann) if type(ann) is type else None  # the common case, without a call
            if node is None:
                node = _si.infer(ann, resolve)
        except Unmappable as exc:
            raise _fail(
                func,
                f"parameter '{pname}' annotation {ann!r} cannot be mapped to JSON Schema: {exc}. "
                "Use JSON-shaped types (str, int, float, bool, list[T], dict[str, T], Literal, Enum, "
                "dataclasses, TypedDict, pydantic models) or construct a Tool subclass explicitly",
            ) from None
        except RecursionError:
            raise _fail(func, f"parameter '{pname}' annotation {ann!r} nests too deeply") from None
        has_default = default is not _MISSING
        # A default does not make the parameter nullable: the schema says what the function
        # accepts. A null sent for it anyway (OpenAI strict mode makes optional properties
        # nullable) is dropped by the registry's validation and here, so the default applies.
        if has_default and not node.accepts_none:
            null_defaults.append(pname)
        prop = dict(node.schema)
        text = prop.get("description")
        if text is None:
            text = docs.get(pname, "")
            if text:
                prop["description"] = text
        if has_default and default is not _FROM_FACTORY:
            t = type(default)
            shown = default if t is str or t is int or t is bool or default is None else json_default(default)
            if shown is not _MISSING:
                prop["default"] = shown
        elif not has_default:
            required.append(pname)
        props[pname] = prop
        types.append(node.type_word)
        defaults.append(default if has_default and default is not _FROM_FACTORY else None)
        if node.conv is not None:
            convs.append((pname, node.conv))
        if is_posonly:
            posonly.append((pname, default))
        refs |= node.refs
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if refs:
        schema["$defs"] = closure_defs(frozenset(refs))
    rows = (tuple(types), tuple(defaults))
    return schema, rows, tuple(convs), tuple(null_defaults), tuple(posonly), tuple(fills), tuple(contexts)


_FROM_FACTORY = object()


def _field_default(field_info: Any) -> Any:
    """The default a pydantic FieldInfo stands for: a value, _FROM_FACTORY, or _MISSING (required)."""
    if getattr(field_info, "default_factory", None) is not None:
        return _FROM_FACTORY
    value = getattr(field_info, "default", _MISSING)
    if type(value).__name__ == "PydanticUndefinedType":
        return _MISSING
    return value


# asyncio's mark for a plain function returning a coroutine (Python 3.11; 3.12 has
# inspect.markcoroutinefunction, which inspect.iscoroutinefunction sees).
_ASYNCIO_MARK = getattr(asyncio.coroutines, "_is_coroutine", object())


def is_coroutine_function(func: Any) -> bool:
    """inspect.iscoroutinefunction, also true for a function marked the 3.11 way (such as
    ``ToolRegistry.aexecute_tool``, a plain function whose result is awaited)."""
    return inspect.iscoroutinefunction(func) or getattr(func, "_is_coroutine", None) is _ASYNCIO_MARK


def _is_async(func: Any, target: Any) -> bool:
    if type(func) is types.FunctionType:
        if func.__code__.co_flags & inspect.CO_COROUTINE:
            return True
        marks = func.__dict__  # empty for nearly every function: the marks live here
        return bool(marks) and is_coroutine_function(func)
    if is_coroutine_function(target) or is_coroutine_function(func):
        return True
    call = getattr(type(func), "__call__", None)  # noqa: B004 - the class's __call__ itself is wanted
    return (
        call is not None
        and not isinstance(func, (types.FunctionType, types.MethodType, functools.partial))
        and is_coroutine_function(call)
    )


def _code_params(fn: types.FunctionType, skip: int) -> list[tuple[str, Any, bool]]:
    code = fn.__code__
    if code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS):
        npos = code.co_argcount + code.co_kwonlyargcount
        var = code.co_varnames[npos]
        star = "*" if code.co_flags & _CO_VARARGS else "**"
        raise _fail(
            fn,
            f"has variadic parameter '{star}{var}' (*args / **kwargs), cannot be mapped to a named schema parameter",
        )
    if code.co_flags & _CO_GENERATOR:
        raise _fail(
            fn, "is a generator; a tool must return its result (return a list or a str instead of yielding)"
        )
    argc = code.co_argcount
    names = code.co_varnames
    defaults = fn.__defaults__ or ()
    first_default = argc - len(defaults)
    posonly = code.co_posonlyargcount
    out = []
    for i in range(skip, argc):
        out.append((names[i], defaults[i - first_default] if i >= first_default else _MISSING, i < posonly))
    kwdefaults = fn.__kwdefaults__ or {}
    for i in range(argc, argc + code.co_kwonlyargcount):
        out.append((names[i], kwdefaults.get(names[i], _MISSING), False))
    return out


def _shape(func: Any) -> _Shape:
    if isinstance(func, staticmethod):
        func = func.__func__
    if isinstance(func, classmethod):
        raise ToolRegistrationError(
            f"Tool function {func!r} is an unbound classmethod: register the bound form (Cls.method) instead"
        )
    t = type(func)
    if t is types.FunctionType and "__wrapped__" not in func.__dict__:
        return (func, func, _code_params(func, 0), func.__annotations__, func.__doc__, func.__name__)
    if (
        t is types.MethodType
        and type(func.__func__) is types.FunctionType
        and "__wrapped__" not in func.__func__.__dict__
    ):
        inner = func.__func__
        return (
            func,
            inner,
            _code_params(inner, 1),
            None if _needs_class_ns(inner) else inner.__annotations__,
            inner.__doc__,
            inner.__name__,
        )
    if isinstance(func, type):
        raise ToolRegistrationError(
            f"Tool function {func!r} is a class; decorate a function, or construct a Tool subclass"
        )
    if not callable(func):
        raise ToolRegistrationError(f"Tool function {func!r} is not callable")
    return _inspect_shape(func)


def _needs_class_ns(fn: types.FunctionType) -> bool:
    # String annotations on a method may name classes nested in its class: resolve the slow way.
    return any(type(a) is str for a in fn.__annotations__.values())


def _inspect_shape(func: Any) -> _Shape:
    """functools.partial, functools.wraps wrappers, callable objects and other callables."""
    owner: Any = inspect.unwrap(func) if not isinstance(func, functools.partial) else func
    bound_kw: set[str] = set()
    while isinstance(owner, functools.partial):
        bound_kw |= set(owner.keywords)
        owner = inspect.unwrap(owner.func)
    default_name = getattr(owner, "__name__", None)
    doc = getattr(func, "__doc__", None) if not isinstance(func, functools.partial) else owner.__doc__
    if not isinstance(
        func, (types.FunctionType, types.MethodType, functools.partial, types.BuiltinFunctionType)
    ):
        call = getattr(type(func), "__call__", None)  # noqa: B004 - the class's __call__ itself is wanted
        if call is not None and not isinstance(call, (types.WrapperDescriptorType, types.MethodWrapperType)):
            owner = inspect.unwrap(call)
            default_name = getattr(func, "__name__", None) or type(func).__name__
            doc = call.__doc__ or type(func).__doc__
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolRegistrationError(
            f"Tool function {func!r} has no inspectable signature ({exc}); construct a Tool subclass"
        ) from None
    params = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            star = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise _fail(
                func,
                f"has variadic parameter '{star}{p.name}' (*args / **kwargs), cannot be mapped to a named schema parameter",
            )
        if p.name in bound_kw:
            continue  # fixed by functools.partial: not the model's to choose (may be a secret)
        params.append((p.name, _MISSING if p.default is p.empty else p.default, p.kind is _POSITIONAL_ONLY))
    if inspect.isgeneratorfunction(owner) or inspect.isasyncgenfunction(owner):
        raise _fail(
            func, "is a generator; a tool must return its result (return a list or a str instead of yielding)"
        )
    return (func, owner, params, None, doc, default_name)


def _hints_slow(owner: Any, func: Any) -> dict[str, Any]:
    localns: dict[str, Any] | None = None
    self_obj = getattr(func, "__self__", None)
    cls = self_obj if isinstance(self_obj, type) else type(self_obj) if self_obj is not None else None
    if cls is not None and cls is not type(None):
        localns = {}
        for klass in reversed(cls.__mro__):
            localns.update(vars(klass))
        localns[cls.__name__] = cls
    try:
        return typing.get_type_hints(owner, localns=localns, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - user code / third-party errors become messages
        raise _fail(
            func,
            f"type annotations cannot be resolved ({type(exc).__name__}: {exc}): ensure the annotated "
            "types are visible in module scope, or construct a Tool subclass explicitly",
        ) from None


_EVAL_CACHE: dict[tuple[str, int], tuple[Any, tuple[tuple[str, Any], ...]]] = {}


def _eval_annotation(text: str, globalns: dict[str, Any]) -> Any:
    """Evaluate a string annotation; cached per (text, module) and reused only while every name
    it mentions is still bound to the same object."""
    key = (text, id(globalns))
    hit = _EVAL_CACHE.get(key)
    if hit is not None:
        value, snapshot = hit
        for n, obj in snapshot:
            if globalns.get(n, _MISSING) is not obj:
                break
        else:
            return value
    code = compile(text, "<annotation>", "eval")
    value = eval(code, globalns)
    if len(_EVAL_CACHE) < 65536:
        _EVAL_CACHE[key] = (value, tuple((n, globalns.get(n, _MISSING)) for n in code.co_names))
    return value


def _resolver(globalns: dict[str, Any], func: Any) -> Callable[[Any], Any]:
    def resolve(ref: Any) -> Any:
        text = ref.__forward_arg__ if isinstance(ref, typing.ForwardRef) else ref
        try:
            return _eval_annotation(text, globalns)
        except Exception as exc:  # noqa: BLE001 - user code / third-party errors become messages
            raise Unmappable(
                f"forward reference {text!r} cannot be resolved ({type(exc).__name__}: {exc})"
            ) from None

    return resolve
