//! Real coroutines for the async methods written in Rust (see `agentmaker._coroutines`).
//!
//! `inspect.iscoroutine()` is true only for what a Python `async def` returns, and asyncio's
//! `create_task`, `asyncio.run` and `TaskGroup` take nothing else; so an async method here
//! returns the coroutine of one of that module's small `async def` helpers, whose body does
//! the native work when (and on the loop where) the coroutine runs.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Which helper of `agentmaker._coroutines` to make a coroutine of.
#[derive(Clone, Copy)]
pub enum Later {
    /// `call_later(fn, *args)`: returns `fn(*args)` (work that never waits).
    Call = 0,
    /// `await_later(fn, *args)`: awaits `fn(*args)`, which starts the work on the running loop.
    Await = 1,
    /// `raise_later(exc)`: raises `exc` where the coroutine is awaited.
    Raise = 2,
}

/// A coroutine of the helper `which` over `args` (nothing runs until it is awaited).
pub fn later<'py>(
    py: Python<'py>,
    which: Later,
    args: Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::py::hooks::hooks(py)?.coroutines[which as usize]
        .bind(py)
        .call1(args)
}

/// The coroutine of `obj.method(*args)` awaited on the loop that runs it (`Later::Await`).
pub fn await_method<'py>(
    obj: &Bound<'py, PyAny>,
    method: &str,
    args: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let mut all = Vec::with_capacity(args.len() + 1);
    all.push(obj.getattr(method)?);
    all.extend(args);
    later(py, Later::Await, PyTuple::new(py, all)?)
}
