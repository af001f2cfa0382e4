//! The one bridge from the tokio runtime to asyncio, for the whole binding (MCP, `CLITool`, the
//! LLM clients).
//!
//! An async method spawns its Rust future on the binding's runtime (`crate::py::runtime`, one
//! per process) and returns a plain future of the running loop (`loop.create_future()`). A
//! finished Rust future is pushed onto the loop's queue and, when the queue was empty, one byte
//! is written to a pipe the loop watches with `add_reader`; the loop thread, which holds the GIL
//! anyway, settles every queued future in one pass.
//!
//! Why a pipe of our own rather than `loop.call_soon_threadsafe` (which is what
//! pyo3-async-runtimes' `future_into_py` uses): it must survive a fork. A child forked inside a
//! running coroutine that exits closes its copy of the loop, and closing removes the loop's
//! self-pipe from the epoll instance, which parent and child share: from then on
//! `call_soon_threadsafe` no longer wakes the parent's loop, and a call awaited there hangs for
//! ever (measured with plain asyncio: the callback ran only when a timer woke the loop; and
//! `tests/test_mcp_processes.py::test_a_forked_child_that_exits_leaves_the_parents_server_alone` hangs
//! with that bridge). A reader added with `add_reader` is not removed by `close()`. Two more
//! reasons: no tokio thread waits for the GIL (a worker that does waits for the interpreter's
//! switch interval per completion while the loop thread is busy, and one that touches the
//! interpreter while it shuts down can crash the process), and completions that arrive
//! together are settled together.
//!
//! A loop without `add_reader` (none of the standard ones on Unix) is woken instead by a thread
//! of tokio's blocking pool that calls its `call_soon_threadsafe`. Cancelling a future runs its
//! call's hook (see [`CancelHook`]).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyWeakrefMethods, PyWeakrefReference};
use pyo3::{PyTraverseError, PyVisit};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Turns a finished Rust result into the Python value (or exception) of the future; run on
/// the loop thread, with the GIL.
pub type Deliver = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// Finished results waiting for their loop, and how to wake it.
struct Ready {
    items: Mutex<Vec<(u64, Deliver)>>,
    wake: Wake,
}

enum Wake {
    /// The write end of the pipe the loop watches.
    Pipe(OwnedFd),
    /// The loop (held weakly) cannot watch a pipe.
    Threadsafe(Py<PyWeakrefReference>),
}

impl Ready {
    fn push(self: &Arc<Self>, id: u64, deliver: Deliver) {
        let was_empty = match self.items.lock() {
            Ok(mut items) => {
                items.push((id, deliver));
                items.len() == 1
            }
            Err(_) => return,
        };
        // Only the first completion after a drain wakes the loop; later ones ride along.
        if !was_empty {
            return;
        }
        match &self.wake {
            Wake::Pipe(fd) => {
                let _ = nix::unistd::write(fd, &[1u8]);
            }
            Wake::Threadsafe(_) => {
                // Never on the completing thread (a connection's reader): it would wait for
                // the GIL while the loop runs.
                let ready = self.clone();
                crate::py::runtime().spawn_blocking(move || ready.wake_threadsafe());
            }
        }
    }

    /// Asks a loop that cannot watch our pipe to drain its queue.
    fn wake_threadsafe(&self) {
        let Wake::Threadsafe(event_loop) = &self.wake else {
            return;
        };
        // Counted before the flag is read, and the exit hook sets the flag before it reads the
        // count (both sequentially consistent): either this thread backs out, or the hook
        // waits for it.
        WAKING.fetch_add(1, Ordering::SeqCst);
        let _leave = Leave;
        if EXITING.load(Ordering::SeqCst) {
            return;
        }
        Python::attach(|py| {
            let Some(event_loop) = event_loop.bind(py).upgrade() else {
                return;
            };
            if let Some(queue) = registered(py, &event_loop) {
                // A closed loop refuses: its futures stay pending, as every other one on it does.
                if let Ok(drain) = queue.getattr(intern!(py, "_drain")) {
                    let _ = event_loop.call_method1(intern!(py, "call_soon_threadsafe"), (drain,));
                }
            }
        });
    }
}

/// The per-loop queue; private to the binding.
#[pyclass(
    module = "agentmaker._native",
    name = "_LoopCompletions",
    frozen,
    weakref
)]
pub struct Completions {
    ready: Arc<Ready>,
    /// The pipe's read end; `None` for a loop woken with `call_soon_threadsafe`.
    read_end: Option<OwnedFd>,
    waiters: Mutex<HashMap<u64, Waiter>>,
    next_id: AtomicU64,
}

#[pymethods]
impl Completions {
    /// Run by the event loop when woken: settles every finished call.
    fn _drain(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(read_end) = &self.read_end {
            let mut buf = [0u8; 256];
            while let Ok(n) = nix::unistd::read(read_end, &mut buf) {
                if n < buf.len() {
                    break;
                }
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
        drop(self.take_waiters());
    }
}

impl Completions {
    fn new(wake: Wake, read_end: Option<OwnedFd>) -> Self {
        let items = Mutex::new(Vec::new());
        Completions {
            ready: Arc::new(Ready { items, wake }),
            read_end,
            waiters: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        }
    }

    fn take_waiters(&self) -> HashMap<u64, Waiter> {
        let taken = self.waiters.lock().map(|mut w| std::mem::take(&mut *w));
        taken.unwrap_or_default()
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

/// A loop's queue, under the loop's address; the weak reference tells the loop from a later
/// one at a reused address, and keeps the loop collectable.
struct Registered {
    event_loop: Py<PyWeakrefReference>,
    queue: Py<Completions>,
}

/// Every loop's queue. Only touched with the GIL held; values are dropped outside the lock
/// (dropping a queue may run Python code).
static QUEUES: Mutex<BTreeMap<usize, Registered>> = Mutex::new(BTreeMap::new());

fn registered<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
) -> Option<Bound<'py, Completions>> {
    let queues = QUEUES.lock().ok()?;
    let entry = queues.get(&(event_loop.as_ptr() as usize))?;
    let known = entry.event_loop.bind(py).upgrade()?;
    known.is(event_loop).then(|| entry.queue.bind(py).clone())
}

/// The queue of the running loop, made (and registered with `add_reader`) on first use.
fn queue_for<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, Completions>> {
    if let Some(queue) = registered(py, event_loop) {
        return Ok(queue);
    }
    release_closed_loops(py);
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    let fd = read_end.as_raw_fd();
    let mut queue = Bound::new(py, Completions::new(Wake::Pipe(write_end), Some(read_end)))?;
    if event_loop
        .call_method1(intern!(py, "add_reader"), (fd, queue.getattr("_drain")?))
        .is_err()
    {
        let weak = PyWeakrefReference::new(event_loop)?.unbind();
        queue = Bound::new(py, Completions::new(Wake::Threadsafe(weak), None))?;
    }
    let entry = Registered {
        event_loop: PyWeakrefReference::new(event_loop)?.unbind(),
        queue: queue.clone().unbind(),
    };
    let replaced = QUEUES
        .lock()
        .ok()
        .and_then(|mut q| q.insert(event_loop.as_ptr() as usize, entry));
    drop(replaced);
    Ok(queue)
}

/// A loop closed while calls were pending would be kept alive by its own queue (the registry
/// holds the queue, the queue its futures, a future its loop). Each new loop's queue first
/// drops the queues of loops closed or gone, with their pending futures (whose hooks cancel
/// the calls nobody can await any more), so those loops, queues and pipes are freed.
fn release_closed_loops(py: Python<'_>) {
    // Looked at outside the lock: `is_closed` is Python code, which may let other threads in.
    let seen: Vec<_> = match QUEUES.lock() {
        Ok(queues) => queues
            .iter()
            .map(|(key, e)| {
                (
                    *key,
                    e.event_loop.bind(py).upgrade(),
                    e.queue.bind(py).clone(),
                )
            })
            .collect(),
        Err(_) => return,
    };
    for (key, event_loop, queue) in seen {
        let stale = match event_loop {
            None => true,
            Some(l) => l
                .call_method0(intern!(py, "is_closed"))
                .and_then(|c| c.is_truthy())
                .unwrap_or(false),
        };
        if !stale {
            continue;
        }
        let removed = QUEUES.lock().ok().and_then(|mut queues| {
            let same = queues.get(&key).is_some_and(|e| e.queue.is(&queue));
            same.then(|| queues.remove(&key)).flatten()
        });
        if removed.is_some() {
            drop(queue.get().take_waiters());
        }
    }
}

/// The other end of a future made by [`pending_for_loop`]: `complete` resolves it from any
/// thread without the GIL. Dropped without completing, it fails the future (so an awaiting
/// coroutine never hangs on a lost result).
pub struct Completer {
    target: Option<(Arc<Ready>, u64)>,
    /// What the future gets if this is dropped unused (default: a `ToolError`).
    lost: Option<Deliver>,
}

impl Completer {
    /// Sets what the future resolves to should this completer be dropped without completing
    /// (an MCP call resolves to an error response, never an exception).
    pub fn if_lost(mut self, deliver: Deliver) -> Self {
        self.lost = Some(deliver);
        self
    }

    pub fn complete(mut self, deliver: Deliver) {
        if let Some((ready, id)) = self.target.take() {
            ready.push(id, deliver);
        }
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        if let Some((ready, id)) = self.target.take() {
            ready.push(id, self.lost.take().unwrap_or_else(|| Box::new(abandoned)));
        }
    }
}

/// What a future gets when its result was lost (its [`Completer`] dropped unused).
fn abandoned(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let _ = py;
    Err(crate::py::errors::tool_error(
        "the MCP call was abandoned before it finished".to_string(),
    ))
}

/// Set by an `atexit` hook: once the interpreter starts shutting down, no thread of ours takes
/// the GIL (a thread that tries during finalization is ended under its Rust frames, which
/// aborts the process).
static EXITING: AtomicBool = AtomicBool::new(false);

/// Threads inside [`Ready::wake_threadsafe`]. `call_soon_threadsafe` releases the GIL while it
/// writes to the loop's self-pipe, so a thread that entered before the hook ran must be let
/// finish before finalization starts.
static WAKING: AtomicUsize = AtomicUsize::new(0);

/// Leaves the count of [`WAKING`] threads, also on a panic.
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        WAKING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Registered with `atexit` when the module loads: from now on loops without `add_reader` are
/// no longer woken, and the threads already waking one get (at most 2 s, with the GIL
/// released) to finish.
#[pyfunction]
fn _interpreter_exiting(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while WAKING.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
}

pub fn register_exit_hook(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(_interpreter_exiting, m)?;
    m.py().import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
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
}

/// The done-callback of a future made by [`pending_for_loop`]: runs the hook when the future
/// ended cancelled (a task awaiting it was cancelled: `wait_for`, a tool timeout,
/// `task.cancel()`). Settling the future normally disarms and removes it first, so a call
/// that completes pays no callback.
///
/// Dropped still armed, it runs the hook too. That covers what a callback cannot: a future
/// cancelled on a closed loop fails to schedule its callbacks (`cancel()` raises) and drops
/// them, and a future dropped pending (its loop closed, see [`release_closed_loops`]) is
/// never awaited. Either way the server must hear of it.
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
            if let Some(cancel) = cancel {
                cancel();
            }
        }
        Ok(())
    }
}

impl Drop for CancelHook {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.take() {
            cancel();
        }
    }
}

/// A future of [`pending_for_loop`] and, weakly (so that a future that drops its callbacks
/// frees it), its [`CancelHook`].
struct Waiter {
    fut: Py<PyAny>,
    hook: Py<PyWeakrefReference>,
}

/// A plain asyncio future on the running loop, the [`Completer`] that resolves it and the
/// hook its cancellation runs.
pub fn pending_for_loop<'py>(
    py: Python<'py>,
) -> PyResult<(Bound<'py, PyAny>, Completer, OnCancel)> {
    static GET_RUNNING_LOOP: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
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
    let queue = queue_for(py, &event_loop)?;
    let q = queue.get();
    let id = q.next_id.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut waiters) = q.waiters.lock() {
        waiters.insert(id, waiter);
    }
    let completer = Completer {
        target: Some((q.ready.clone(), id)),
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
