"""Hands the Rust core the package's hooks, once, at import: the Python objects the binding
calls back into (see ``src/py/hooks.rs``). The binding imports no module of the package."""

from agentmaker import _native, errors
from agentmaker._callable import from_callable
from agentmaker._coroutines import await_later, call_later, raise_later
from agentmaker._results import result_to_response
from agentmaker._tool_call import ToolCallRecord
from agentmaker.isolation import call_async, call_sync

_native._install_hooks(
    errors=errors,
    record_class=ToolCallRecord,
    result_to_response=result_to_response,
    from_callable=from_callable,
    call_later=call_later,
    await_later=await_later,
    raise_later=raise_later,
    isolated_sync=call_sync,
    isolated_async=call_async,
)
