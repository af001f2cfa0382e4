//! The one bridge from the tokio runtime to asyncio, for the whole binding (MCP, `CLITool`).
//!
//! An async method spawns its Rust future on the binding's runtime (`crate::py::runtime`, one
//! per process) and awaits an asyncio future on the running loop. A finished future is pushed
//! onto a queue and, when the queue was empty, one byte is written to a pipe the loop watches
//! with `add_reader`; the loop thread, which holds the GIL anyway, resolves every queued future
//! in one pass. One queue exists per event loop (kept in a `WeakKeyDictionary`).
//!
//! Why a pipe of our own rather than `loop.call_soon_threadsafe` (which is what
//! pyo3-async-runtimes' `future_into_py` uses): it must survive a fork. A child forked inside a
//! running coroutine that exits closes its copy of the loop, and closing removes the loop's
//! self-pipe from the epoll instance, which parent and child share: from then on
//! `call_soon_threadsafe` no longer wakes the parent's loop, and a call awaited there hangs for
//! ever (measured with plain asyncio: the callback ran only when a timer woke the loop; and
//! `tests/test_mcp.py::test_a_forked_child_that_exits_leaves_the_parents_server_alone` hangs
//! with that bridge). A reader added with `add_reader` is not removed by `close()`. Two more
//! reasons: no tokio thread waits for the GIL (a worker that does waits for the interpreter's
//! switch interval per completion while the loop thread is busy, and one that touches the
//! interpreter while it shuts down can crash the process), and completions that arrive
//! together are settled together. On a loop without `add_reader` (none of the standard ones on
//! Unix) the futures are settled through `call_soon_threadsafe` from a blocking thread.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyWeakrefMethods, PyWeakrefReference};
use pyo3::{PyTraverseError, PyVisit};
use std::collections::HashMap;
use std::future::Future;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Turns a finished Rust result into the Python value (or exception) of the future; run on
/// the loop thread, with the GIL.
pub type Deliver = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

struct Ready {
    items: Mutex<Vec<(u64, Deliver)>>,
    wake: OwnedFd,
}

impl Ready {
    fn push(&self, id: u64, deliver: Deliver) {
        let was_empty = match self.items.lock() {
            Ok(mut items) => {
                let empty = items.is_empty();
                items.push((id, deliver));
                empty
            }
            Err(_) => return,
        };
        // Only the first completion after a drain wakes the loop; later ones ride along.
        if was_empty {
            let _ = nix::unistd::write(&self.wake, &[1u8]);
        }
    }
}

/// The per-loop queue; private to the binding.
#[pyclass(
    module = "agentmaker._native",
    name = "_McpCompletions",
    frozen,
    weakref
)]
pub struct Completions {
    ready: Arc<Ready>,
    read_end: OwnedFd,
    waiters: Mutex<HashMap<u64, Waiter>>,
    next_id: AtomicU64,
}

#[pymethods]
impl Completions {
    /// Called by the event loop when the pipe is readable: resolves every finished call.
    fn _drain(&self, py: Python<'_>) -> PyResult<()> {
        let mut buf = [0u8; 256];
        while let Ok(n) = nix::unistd::read(&self.read_end, &mut buf) {
            if n < buf.len() {
                break;
            }
        }
        let items = self
            .ready
            .items
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        // Every future of the batch is settled even if one step raises (a KeyboardInterrupt,
        // a custom loop's future): the first error is raised after the loop.
        let mut first_error = None;
        for (id, deliver) in items {
            let waiter = self.waiters.lock().ok().and_then(|mut w| w.remove(&id));
            let Some(waiter) = waiter else { continue };
            if let Err(e) = settle(py, waiter, deliver) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // A pending future refers to its loop, and the loop's reader callback to this queue:
        // the collector must see that cycle to free a closed loop with calls still pending.
        if let Ok(waiters) = self.waiters.try_lock() {
            for waiter in waiters.values() {
                visit.call(&waiter.fut)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let taken = self.waiters.lock().map(|mut w| std::mem::take(&mut *w));
        drop(taken);
    }
}

fn settle(py: Python<'_>, waiter: Waiter, deliver: Deliver) -> PyResult<()> {
    let fut = waiter.fut.bind(py);
    // A cancelled future (asyncio.wait_for timeout) no longer wants the result; its hook ran.
    if fut.call_method0(intern!(py, "done"))?.is_truthy()? {
        return Ok(());
    }
    if let Some(hook) = waiter.hook.bind(py).upgrade_as::<CancelHook>()? {
        drop(hook.get().0.take());
        fut.call_method1(intern!(py, "remove_done_callback"), (hook,))?;
    }
    match deliver(py) {
        Ok(value) => fut.call_method1(intern!(py, "set_result"), (value,))?,
        Err(err) => fut.call_method1(intern!(py, "set_exception"), (err.into_value(py),))?,
    };
    Ok(())
}

/// Weak references to the loop a thread used last and to its queue: most calls come from the
/// same loop, and the dictionary lookup costs more than the rest of the call set-up. Weak, so
/// the cache keeps neither the loop nor the queue (and its pipe) alive.
struct LastQueue(Option<(Py<PyAny>, Py<PyAny>)>);

impl Drop for LastQueue {
    fn drop(&mut self) {
        // Runs at thread exit, possibly after the interpreter is gone: the two weak reference
        // objects (a few dozen bytes) are left behind rather than released without the GIL.
        std::mem::forget(self.0.take());
    }
}

thread_local! {
    static LAST: std::cell::RefCell<LastQueue> = const { std::cell::RefCell::new(LastQueue(None)) };
}

fn cached_queue_for<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, Completions>>> {
    let hit = LAST.with(|last| {
        let last = last.borrow();
        let (loop_ref, queue_ref) = last.0.as_ref()?;
        // A dead weak reference returns None, so a new loop at a reused address never matches.
        let alive = loop_ref.bind(py).call0().ok()?;
        if !alive.is(event_loop) {
            return None;
        }
        queue_ref
            .bind(py)
            .call0()
            .ok()?
            .cast_into::<Completions>()
            .ok()
    });
    if hit.is_some() {
        return Ok(hit);
    }
    let queue = queue_for(py, event_loop)?;
    if let Some(q) = &queue {
        let weak = py.import("weakref")?.getattr("ref")?;
        if let (Ok(loop_ref), Ok(queue_ref)) = (weak.call1((event_loop,)), weak.call1((q,))) {
            // Replaced with the GIL held, so the previous pair is released normally.
            let new = Some((loop_ref.unbind(), queue_ref.unbind()));
            let old = LAST.with(|last| std::mem::replace(&mut last.borrow_mut().0, new));
            drop(old);
        }
    }
    Ok(queue)
}

/// The queue of the running loop, created (and registered with `add_reader`) on first use.
/// `None` when the loop cannot watch file descriptors (then the caller settles its futures
/// with `call_soon_threadsafe`); such a loop is remembered, so it is asked only once.
fn queue_for<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, Completions>>> {
    static QUEUES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let queues = QUEUES
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("weakref")?
                    .getattr("WeakKeyDictionary")?
                    .call0()?
                    .unbind(),
            )
        })?
        .bind(py);
    let known = queues.call_method1("get", (event_loop,))?;
    if known.is(&*pyo3::types::PyBool::new(py, false)) {
        return Ok(None);
    }
    if let Ok(q) = known.cast_into::<Completions>() {
        return Ok(Some(q));
    }
    release_closed_loops(py, queues)?;
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    let fd = read_end.as_raw_fd();
    let q = Bound::new(
        py,
        Completions {
            ready: Arc::new(Ready {
                items: Mutex::new(Vec::new()),
                wake: write_end,
            }),
            read_end,
            waiters: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        },
    )?;
    if event_loop
        .call_method1("add_reader", (fd, q.getattr("_drain")?))
        .is_err()
    {
        queues.set_item(event_loop, false)?;
        return Ok(None);
    }
    queues.set_item(event_loop, &q)?;
    Ok(Some(q))
}

/// The other end of a future made by [`pending_for_loop`]: `complete` resolves it from any
/// thread without the GIL. Dropped without completing, it fails the future (so an awaiting
/// coroutine never hangs on a lost result).
pub struct Completer {
    target: Option<Target>,
    /// What the future gets if this is dropped unused (default: a `ToolError`).
    lost: Option<Deliver>,
}

enum Target {
    Queue(Arc<Ready>, u64),
    /// The loop cannot watch our pipe: the future is settled through the loop's
    /// `call_soon_threadsafe`, from a thread of tokio's blocking pool that takes the GIL.
    Threadsafe(Py<PyAny>, Waiter),
}

impl Completer {
    /// Sets what the future resolves to should this completer be dropped without completing
    /// (an MCP call resolves to an error response, never an exception).
    pub fn if_lost(mut self, deliver: Deliver) -> Self {
        self.lost = Some(deliver);
        self
    }

    pub fn complete(mut self, deliver: Deliver) {
        match self.target.take() {
            Some(Target::Queue(ready, id)) => ready.push(id, deliver),
            Some(Target::Threadsafe(event_loop, waiter)) => {
                // Never on the thread that completes (the connection's reader): it would wait
                // for the GIL while the loop runs.
                crate::py::runtime()
                    .spawn_blocking(move || settle_threadsafe(event_loop, waiter, deliver));
            }
            None => {}
        }
    }
}

/// Set by an `atexit` hook: once the interpreter starts shutting down, no thread of ours takes
/// the GIL (a thread that tries during finalization is ended under its Rust frames, which
/// aborts the process).
static EXITING: AtomicBool = AtomicBool::new(false);

/// Threads inside [`settle_threadsafe`]. `call_soon_threadsafe` releases the GIL while it
/// writes to the loop's self-pipe, so a thread that entered before the hook ran must be let
/// finish before finalization starts.
static SETTLING: AtomicUsize = AtomicUsize::new(0);

/// Registered with `atexit` when the module loads (see [`register_exit_hook`]): from now on
/// answers on the fallback path are dropped, and the threads already delivering one get (at
/// most 2 s, with the GIL released) to finish.
#[pyfunction]
fn _interpreter_exiting(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while SETTLING.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
}

pub fn register_exit_hook(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(_interpreter_exiting, m)?;
    m.py().import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}

fn settle_threadsafe(event_loop: Py<PyAny>, waiter: Waiter, deliver: Deliver) {
    // Counted before the flag is read, and the hook sets the flag before it reads the count
    // (both sequentially consistent): either this thread backs out, or the hook waits for it.
    SETTLING.fetch_add(1, Ordering::SeqCst);
    let _leave = Leave;
    if EXITING.load(Ordering::SeqCst) {
        // Nobody will await the result any more; the references are released by pyo3 later.
        return;
    }
    Python::attach(|py| {
        let settle = SettleLater(Mutex::new(Some((waiter, deliver))));
        if let Ok(settle) = Bound::new(py, settle) {
            // A closed loop refuses: its future stays pending, as every other one on it does.
            let _ = event_loop
                .bind(py)
                .call_method1(intern!(py, "call_soon_threadsafe"), (settle,));
        }
    });
}

/// Leaves the count of [`SETTLING`] threads, also when the delivery panics.
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        SETTLING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A callback run on the loop thread: settles one future of the fallback path.
#[pyclass(module = "agentmaker._native", name = "_McpSettle", frozen)]
struct SettleLater(Mutex<Option<(Waiter, Deliver)>>);

#[pymethods]
impl SettleLater {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self.0.lock().ok().and_then(|mut s| s.take());
        match taken {
            Some((waiter, deliver)) => settle(py, waiter, deliver),
            None => Ok(()),
        }
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        if self.target.is_some() {
            let lost = self.lost.take().unwrap_or_else(|| Box::new(abandoned));
            Completer {
                target: self.target.take(),
                lost: None,
            }
            .complete(lost);
        }
    }
}

/// A loop closed while calls were pending would be kept alive by its own queue (the dictionary
/// holds the queue, the queue its futures, a future its loop). Each new loop's queue drops the
/// pending futures of closed loops, so those loops, queues and pipes can be freed.
fn release_closed_loops(py: Python<'_>, queues: &Bound<'_, PyAny>) -> PyResult<()> {
    let entries = pyo3::types::PyList::new(
        py,
        queues
            .call_method0("items")?
            .try_iter()?
            .collect::<PyResult<Vec<_>>>()?,
    )?;
    for entry in entries.iter() {
        let (event_loop, queue): (Bound<'_, PyAny>, Bound<'_, PyAny>) = entry.extract()?;
        if !event_loop
            .call_method0(intern!(py, "is_closed"))?
            .is_truthy()?
        {
            continue;
        }
        if let Ok(queue) = queue.cast::<Completions>() {
            let pending = queue
                .get()
                .waiters
                .lock()
                .map(|mut w| std::mem::take(&mut *w));
            drop(pending);
        }
    }
    Ok(())
}

/// What a future gets when its result was lost (its [`Completer`] dropped unused).
fn abandoned(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Err(crate::py::errors::tool_error(
        py,
        "the MCP call was abandoned before it finished".to_string(),
    ))
}

/// What cancelling the future of [`pending_for_loop`] runs, once: set with
/// [`OnCancel::set`] after the call is made. Nothing runs when the future completes normally.
#[derive(Clone, Default)]
pub struct OnCancel(Arc<Mutex<Option<CancelFn>>>);

type CancelFn = Box<dyn FnOnce() + Send>;

impl OnCancel {
    pub fn set(&self, cancel: impl FnOnce() + Send + 'static) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(Box::new(cancel));
        }
    }

    fn take(&self) -> Option<CancelFn> {
        self.0.lock().ok().and_then(|mut c| c.take())
    }

    fn run(&self) {
        if let Some(cancel) = self.take() {
            cancel();
        }
    }
}

/// The done-callback of a future made by [`pending_for_loop`]: runs the hook when the future
/// ended cancelled (a task awaiting it was cancelled: `wait_for`, a tool timeout,
/// `task.cancel()`). Settling the future normally disarms and removes it first, so a call
/// that completes pays no callback.
///
/// Dropped still armed, it runs the hook too. That is the case the callback cannot cover: a
/// future cancelled on a closed loop fails to schedule its callbacks (`cancel()` raises) and
/// drops them, and a future dropped pending (its loop closed, see [`release_closed_loops`])
/// will never be awaited. Either way the server must hear of it.
#[pyclass(module = "agentmaker._native", name = "_CancelHook", frozen, weakref)]
struct CancelHook(OnCancel);

#[pymethods]
impl CancelHook {
    fn __call__(&self, fut: &Bound<'_, PyAny>) -> PyResult<()> {
        let cancel = self.0.take();
        if fut
            .call_method0(intern!(fut.py(), "cancelled"))?
            .is_truthy()?
        {
            cancel.map(|c| c());
        }
        Ok(())
    }
}

impl Drop for CancelHook {
    fn drop(&mut self) {
        self.0.run();
    }
}

/// A future of [`pending_for_loop`] and (weakly, so that a future that drops its callbacks
/// frees it) its [`CancelHook`].
struct Waiter {
    fut: Py<PyAny>,
    hook: Py<PyWeakrefReference>,
}

/// A plain asyncio future on the running loop (`loop.create_future()`), the [`Completer`]
/// that resolves it and the hook its cancellation runs. On a loop that cannot watch our pipe
/// (no `add_reader`; no standard loop on Unix) the completer goes through
/// `call_soon_threadsafe` instead of the queue.
pub fn pending_for_loop<'py>(
    py: Python<'py>,
) -> PyResult<(Bound<'py, PyAny>, Completer, OnCancel)> {
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get_running_loop = GET_RUNNING_LOOP.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
    })?;
    // asyncio's own error when no loop runs ("no running event loop").
    let event_loop = get_running_loop.bind(py).call0()?;
    let fut = event_loop.call_method0(intern!(py, "create_future"))?;
    let on_cancel = OnCancel::default();
    let hook = Bound::new(py, CancelHook(on_cancel.clone()))?;
    fut.call_method1(intern!(py, "add_done_callback"), (&hook,))?;
    let waiter = Waiter {
        fut: fut.clone().unbind(),
        hook: PyWeakrefReference::new(&hook)?.unbind(),
    };
    let target = match cached_queue_for(py, &event_loop)? {
        Some(queue) => {
            let q = queue.get();
            let id = q.next_id.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut waiters) = q.waiters.lock() {
                waiters.insert(id, waiter);
            }
            Target::Queue(q.ready.clone(), id)
        }
        None => Target::Threadsafe(event_loop.unbind(), waiter),
    };
    let completer = Completer {
        target: Some(target),
        lost: None,
    };
    Ok((fut, completer, on_cancel))
}

/// An asyncio future on the running loop that resolves to what `fut` (run on the shared tokio
/// runtime) delivers. No tokio thread takes the GIL on this path. Cancelling the future only
/// stops the wait: `fut` runs to its end (what closing a client needs).
pub fn spawn_for_loop<'py, F>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Deliver> + Send + 'static,
{
    spawn_with(py, fut, false)
}

/// Like [`spawn_for_loop`], but cancelling the future also aborts the task: `fut` is dropped
/// at its next await (a handshake given up on kills the server it started).
pub fn spawn_abortable_for_loop<'py, F>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Deliver> + Send + 'static,
{
    spawn_with(py, fut, true)
}

fn spawn_with<'py, F>(py: Python<'py>, fut: F, abortable: bool) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Deliver> + Send + 'static,
{
    let (waiter, completer, on_cancel) = pending_for_loop(py)?;
    let task = crate::py::runtime().spawn(async move {
        completer.complete(fut.await);
    });
    if abortable {
        on_cancel.set(move || task.abort());
    }
    Ok(waiter)
}
