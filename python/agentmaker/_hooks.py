"""Hands the Rust core the package's hooks, once, at import: the Python objects the binding
calls back into (see ``src/py/hooks.rs``). The binding imports no module of the package."""

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
import agentmaker.errors as errors  # noqa: PLR0402 - the module, not a name of the package
from agentmaker._coroutines import await_later, call_later, raise_later
from agentmaker.isolation.workers import call_async, call_sync
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.decorator import from_callable
from agentmaker.tools.return_values import result_to_response

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
