//! The one table of package hooks: the Python objects of `agentmaker` the binding calls back
//! into (besides the user's own callables). The package hands them over once, at import
//! (`agentmaker._hooks` calls `_native._install_hooks`), so the binding never imports a module
//! of the package itself and the package is free to move its modules around.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

pub struct Hooks {
    /// `agentmaker.errors`: the exception classes are read from it by name ([`super::errors`]).
    pub errors: Py<PyAny>,
    /// `ToolCallRecord`: the record the pipeline makes for each call.
    pub record_class: Py<PyAny>,
    /// `result_to_response(tool, value)`: a tool function's value that has no plain JSON form
    /// (dataclasses, pydantic models, Enums ...) as its ToolResponse.
    pub result_to_response: Py<PyAny>,
    /// `from_callable(func, **kwargs)`: `Tool.from_callable`, exactly like `@tool`.
    pub from_callable: Py<PyAny>,
    /// `call_later`, `await_later`, `raise_later`: the `async def` helpers whose coroutines the
    /// native async methods return ([`super::coroutines`]).
    pub coroutines: [Py<PyAny>; 3],
    /// `call_sync(tool, params, isolation, timeout)` and `call_async(tool, params, isolation)`:
    /// an isolated tool's call in a worker process.
    pub isolated_sync: Py<PyAny>,
    pub isolated_async: Py<PyAny>,
}

static HOOKS: PyOnceLock<Hooks> = PyOnceLock::new();

/// The table, or the error that says the package never installed it (only `_native` imported
/// on its own, which nothing supported does).
pub fn hooks(py: Python<'_>) -> PyResult<&'static Hooks> {
    HOOKS.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "agentmaker._native was used before the agentmaker package installed its hooks; import agentmaker first",
        )
    })
}

/// `_native._install_hooks(...)`: called once by the package at import. A second call (a
/// reloaded package) keeps the first table.
#[pyfunction]
#[pyo3(signature = (*, errors, record_class, result_to_response, from_callable, call_later, await_later, raise_later, isolated_sync, isolated_async))]
#[allow(clippy::too_many_arguments)] // one keyword per hook, named at the one call site
pub fn _install_hooks(
    py: Python<'_>,
    errors: Py<PyAny>,
    record_class: Py<PyAny>,
    result_to_response: Py<PyAny>,
    from_callable: Py<PyAny>,
    call_later: Py<PyAny>,
    await_later: Py<PyAny>,
    raise_later: Py<PyAny>,
    isolated_sync: Py<PyAny>,
    isolated_async: Py<PyAny>,
) {
    let _ = HOOKS.set(
        py,
        Hooks {
            errors,
            record_class,
            result_to_response,
            from_callable,
            coroutines: [call_later, await_later, raise_later],
            isolated_sync,
            isolated_async,
        },
    );
}
