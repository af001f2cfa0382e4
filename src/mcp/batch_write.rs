//! An `AsyncWrite` that hands bytes to one writer task, so messages sent while a write is in
//! flight leave together in a single system call.
//!
//! rmcp's stdio transport writes and flushes every JSON-RPC message on its own: one system call
//! and, when the peer is idle, one wake-up of the peer per message. On virtual machines where a
//! cross-CPU wake-up costs tens of microseconds that caps how many concurrent calls one
//! connection carries. [`BatchWriter`] accepts bytes into a buffer at once (`poll_flush` does
//! not wait for the pipe) and its task writes out whatever has accumulated since its last
//! write. A message with nothing ahead of it still goes out at once (from the appending thread,
//! with [`BatchWriter::with_direct_writes`]); under load, messages coalesce.
//!
//! Guarantees: bytes leave in the order they were accepted, and every write is taken whole (so
//! messages from the writer and from a [`BatchHandle`] never interleave mid-message); the buffer
//! is bounded by [`MAX_PENDING`] plus one message (beyond it writers wait, as they would on a
//! full pipe); a failed write is
//! reported by every later `poll_write`; dropping or shutting down the writer lets the task
//! write what is buffered, then close the underlying stream (the peer sees end of input).

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

/// Bytes that may wait in the buffer before writers are held back.
pub const MAX_PENDING: usize = 4 * 1024 * 1024;

/// A buffer that grew past this for one large message is not kept for the next one.
const KEEP_CAPACITY: usize = 1024 * 1024;

#[derive(Default)]
struct State {
    buf: Vec<u8>,
    error: Option<(io::ErrorKind, String)>,
    closed: bool,
    /// A write to the stream is in progress (by the task, or directly by an appender); the
    /// other side waits, so bytes never interleave and the fd outlives every direct write.
    writing: bool,
    /// The write in progress is a direct one (from an appender, not the task).
    direct_active: bool,
    /// Writers waiting for room in the buffer.
    blocked: Vec<Waker>,
}

struct Shared {
    state: Mutex<State>,
    data: Notify,
    /// Signalled when a direct write ends (the stream's owner waits for it before closing).
    idle: std::sync::Condvar,
    /// The stream's non-blocking fd, when appenders may write to it directly.
    direct: Option<RawFd>,
}

impl State {
    /// The stored write error, or an error for a closed writer; `Ok` while bytes are taken.
    fn check(&self) -> io::Result<()> {
        if let Some((kind, msg)) = &self.error {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if self.closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the stream is closed",
            ));
        }
        Ok(())
    }

    /// Records a failed write; returns the writers waiting for room, to be woken.
    fn fail(&mut self, e: &io::Error) -> Vec<Waker> {
        self.error = Some((e.kind(), e.to_string()));
        std::mem::take(&mut self.blocked)
    }
}

impl Shared {
    /// Appends `bytes` behind what is buffered, releases the lock, and wakes the task if the
    /// buffer was empty (otherwise it has been woken already).
    fn queue(&self, mut st: std::sync::MutexGuard<'_, State>, bytes: &[u8]) {
        let was_empty = st.buf.is_empty();
        st.buf.extend_from_slice(bytes);
        drop(st);
        if was_empty {
            self.data.notify_one();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the state inconsistent (each update is
        // a single assignment), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close(&self) {
        self.lock().closed = true;
        self.data.notify_one();
    }
}

/// See the module documentation. Create it inside a tokio runtime (the writer task is spawned
/// on it).
pub struct BatchWriter {
    shared: Arc<Shared>,
}

impl BatchWriter {
    pub fn new<W>(inner: W) -> BatchWriter
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::start(inner, None)
    }

    /// Like [`BatchWriter::new`], and [`BatchHandle::append`] may write to `inner`'s
    /// non-blocking file descriptor itself when nothing is buffered or being written: such a
    /// message then leaves without waking the writer task (one cross-CPU wake-up less).
    pub fn with_direct_writes<W>(inner: W) -> BatchWriter
    where
        W: AsyncWrite + AsRawFd + Unpin + Send + 'static,
    {
        let fd = inner.as_raw_fd();
        Self::start(inner, Some(fd))
    }

    fn start<W>(inner: W, direct: Option<RawFd>) -> BatchWriter
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            data: Notify::new(),
            idle: std::sync::Condvar::new(),
            direct,
        });
        let owned = Owned {
            _guard: CloseGuard(shared.clone()),
            inner,
        };
        tokio::spawn(write_loop(shared.clone(), owned));
        BatchWriter { shared }
    }
}

impl BatchWriter {
    /// A second way in to the same stream, for whole messages (see [`BatchHandle::append`]).
    /// It does not keep the stream open: once the writer is dropped, appends fail.
    pub fn handle(&self) -> BatchHandle {
        BatchHandle {
            shared: self.shared.clone(),
        }
    }
}

/// Appends complete messages to a [`BatchWriter`]'s stream from any thread, without waiting.
#[derive(Clone)]
pub struct BatchHandle {
    shared: Arc<Shared>,
}

impl BatchHandle {
    /// Queues `message` (one or more complete lines) behind what is already buffered, or, on a
    /// writer made with [`BatchWriter::with_direct_writes`] when nothing is buffered or being
    /// written, writes it from this thread at once (as much as the pipe takes; the rest is
    /// queued). Never waits. Fails when the stream is closed or broken, or when `limit` bytes
    /// are already waiting (a peer that stopped reading): the caller reports that instead of
    /// waiting for room.
    pub fn append(&self, message: &[u8], limit: usize) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.check()?;
        if st.buf.len() >= limit {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!(
                    "{} bytes are already waiting to be written: the peer is not reading",
                    st.buf.len()
                ),
            ));
        }
        let Some(fd) = self
            .shared
            .direct
            .filter(|_| st.buf.is_empty() && !st.writing)
        else {
            self.shared.queue(st, message);
            return Ok(());
        };
        st.writing = true;
        st.direct_active = true;
        drop(st);
        // The task does not write to the stream while `writing` is set, and the stream is not
        // closed while `direct_active` is (see `CloseGuard`).
        let (sent, failure) = write_now(fd, message);
        let mut st = self.shared.lock();
        st.writing = false;
        st.direct_active = false;
        self.shared.idle.notify_all();
        if let Some(e) = failure {
            let blocked = st.fail(&e);
            drop(st);
            self.shared.data.notify_one();
            blocked.into_iter().for_each(Waker::wake);
            return Err(e);
        }
        if sent < message.len() {
            // The pipe is full: the rest goes first, before anything appended meanwhile.
            st.buf.splice(0..0, message[sent..].iter().copied());
        }
        let wake = !st.buf.is_empty() || st.closed;
        drop(st);
        if wake {
            self.shared.data.notify_one();
        }
        Ok(())
    }
}

/// Writes as much of `message` as the non-blocking `fd` takes now: (bytes written, error).
fn write_now(fd: RawFd, message: &[u8]) -> (usize, Option<io::Error>) {
    // SAFETY: the caller holds the `writing` flag, so the writer task (which owns the stream)
    // neither writes to nor closes this fd until the flag is cleared.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let mut sent = 0;
    while sent < message.len() {
        match nix::unistd::write(fd, &message[sent..]) {
            Ok(0) => break,
            Ok(n) => sent += n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(nix::errno::Errno::EAGAIN) => break,
            Err(e) => return (sent, Some(io::Error::from(e))),
        }
    }
    (sent, None)
}

/// Dropped before the stream (however the task ends: done, failed, or dropped with its
/// runtime): marks the writer closed, so no direct write starts, and waits for one in progress,
/// so the fd is never closed under it (or reused by another file while it runs).
struct CloseGuard(Arc<Shared>);

impl Drop for CloseGuard {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.closed = true;
        while st.direct_active {
            st = self.0.idle.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The stream with its guard; fields drop in order, so the guard runs first.
struct Owned<W> {
    _guard: CloseGuard,
    inner: W,
}

/// Takes the stream already wrapped with its guard, so the guard also runs if the task is
/// dropped before it was ever polled.
async fn write_loop<W: AsyncWrite + Unpin>(shared: Arc<Shared>, mut owned: Owned<W>) {
    let inner = &mut owned.inner;
    let mut out: Vec<u8> = Vec::new();
    loop {
        let next = {
            let mut st = shared.lock();
            if st.writing || st.error.is_some() {
                // An appender is writing directly; it notifies when done. (After a failed
                // direct write nothing more is written.)
                if st.error.is_some() {
                    return;
                }
                None
            } else if !st.buf.is_empty() {
                std::mem::swap(&mut st.buf, &mut out);
                st.writing = true;
                Some(std::mem::take(&mut st.blocked))
            } else if st.closed {
                break;
            } else {
                None
            }
        };
        let Some(blocked) = next else {
            // A notification sent after the check above is kept as a permit: none is lost.
            shared.data.notified().await;
            continue;
        };
        blocked.into_iter().for_each(Waker::wake);
        let written = inner.write_all(&out).await;
        let mut st = shared.lock();
        st.writing = false;
        if let Err(e) = written {
            let blocked = st.fail(&e);
            drop(st);
            blocked.into_iter().for_each(Waker::wake);
            return;
        }
        drop(st);
        out.clear();
        if out.capacity() > KEEP_CAPACITY {
            out = Vec::new();
        }
    }
    let _ = inner.shutdown().await;
}

impl AsyncWrite for BatchWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut st = self.shared.lock();
        if let Err(e) = st.check() {
            return Poll::Ready(Err(e));
        }
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if st.buf.len() >= MAX_PENDING {
            if !st.blocked.iter().any(|w| w.will_wake(cx.waker())) {
                st.blocked.push(cx.waker().clone());
            }
            return Poll::Pending;
        }
        // Taken whole, never in part: rmcp hands over one complete message per write, and a
        // message appended through a [`BatchHandle`] must never land inside another.
        self.shared.queue(st, buf);
        Poll::Ready(Ok(buf.len()))
    }

    /// Accepted bytes are on their way; flushing does not wait for the pipe.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &self.shared.lock().error {
            Some((kind, msg)) => Poll::Ready(Err(io::Error::new(*kind, msg.clone()))),
            None => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.close();
        Poll::Ready(Ok(()))
    }
}

impl Drop for BatchWriter {
    fn drop(&mut self) {
        self.shared.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn bytes_arrive_in_order_and_drop_closes_the_stream() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut w = BatchWriter::new(a);
        let mut expected = Vec::new();
        for i in 0..2000u32 {
            let line = format!("{{\"id\":{i}}}\n");
            w.write_all(line.as_bytes()).await.unwrap();
            w.flush().await.unwrap();
            expected.extend_from_slice(line.as_bytes());
        }
        drop(w);
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, expected);
    }

    #[tokio::test]
    async fn messages_written_while_the_pipe_is_busy_coalesce() {
        // A reader that takes one chunk at a time: while the first write is in flight the next
        // messages pile up and leave in fewer, larger writes.
        let (a, mut b) = tokio::io::duplex(16);
        let mut w = BatchWriter::new(a);
        for _ in 0..100 {
            w.write_all(b"0123456789\n").await.unwrap();
        }
        drop(w);
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        assert_eq!(got.len(), 1100);
    }

    #[tokio::test]
    async fn a_full_buffer_holds_writers_back_until_the_reader_drains() {
        let (a, mut b) = tokio::io::duplex(1024);
        let mut w = BatchWriter::new(a);
        let chunk = vec![b'x'; 1 << 20];
        // Nobody reads yet: the task takes the first 4 MiB and blocks on the pipe, the next
        // 4 MiB fill the buffer, and the write after that must wait.
        for _ in 0..4 {
            w.write_all(&chunk).await.unwrap();
        }
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        for _ in 0..4 {
            w.write_all(&chunk).await.unwrap();
        }
        let blocked =
            tokio::time::timeout(std::time::Duration::from_millis(200), w.write_all(&chunk)).await;
        assert!(blocked.is_err(), "a write past MAX_PENDING must wait");
        let reader = tokio::spawn(async move {
            let mut n = 0usize;
            let mut buf = vec![0u8; 65536];
            loop {
                let k = b.read(&mut buf).await.unwrap();
                if k == 0 {
                    return n;
                }
                n += k;
            }
        });
        w.write_all(&chunk).await.unwrap();
        drop(w);
        // The timed-out write may have put part of its chunk in before it was dropped.
        let n = reader.await.unwrap();
        assert!((9 << 20..=10 << 20).contains(&n), "{n}");
    }

    #[tokio::test]
    async fn handle_appends_interleave_only_between_whole_messages() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut w = BatchWriter::new(a);
        let h = w.handle();
        let other = std::thread::spawn(move || {
            for i in 0..500 {
                h.append(format!("{{\"h\":{i}}}\n").as_bytes(), usize::MAX)
                    .unwrap();
            }
            h
        });
        for i in 0..500 {
            w.write_all(format!("{{\"w\":{i},\"pad\":\"{}\"}}\n", "p".repeat(i % 50)).as_bytes())
                .await
                .unwrap();
        }
        let h = other.join().unwrap();
        drop(w);
        let mut got = String::new();
        b.read_to_string(&mut got).await.unwrap();
        let (mut hs, mut ws) = (0, 0);
        for line in got.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect(line);
            if let Some(i) = v.get("h") {
                assert_eq!(i, hs);
                hs += 1;
            } else {
                assert_eq!(v["w"], ws);
                ws += 1;
            }
        }
        assert_eq!((hs, ws), (500, 500));
        // The writer is gone: the handle does not keep the stream open.
        let e = h.append(b"{}\n", usize::MAX).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn direct_writes_to_a_real_pipe_keep_order_and_whole_messages() {
        // `cat` echoes what it reads: direct writes, writes through the task and a message
        // larger than the pipe (written in part directly, the rest by the task) all come back
        // whole and in order.
        let mut child = tokio::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut w = BatchWriter::with_direct_writes(child.stdin.take().unwrap());
        let mut out = child.stdout.take().unwrap();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            out.read_to_end(&mut got).await.unwrap();
            got
        });
        let h = w.handle();
        let big = format!("{{\"big\":\"{}\"}}\n", "b".repeat(300_000));
        let other = std::thread::spawn(move || {
            for i in 0..300 {
                h.append(format!("{{\"h\":{i}}}\n").as_bytes(), usize::MAX)
                    .unwrap();
                if i == 150 {
                    h.append(big.as_bytes(), usize::MAX).unwrap();
                }
            }
        });
        for i in 0..300 {
            w.write_all(format!("{{\"w\":{i}}}\n").as_bytes())
                .await
                .unwrap();
        }
        other.join().unwrap();
        drop(w);
        let got = String::from_utf8(reader.await.unwrap()).unwrap();
        let (mut hs, mut ws, mut bigs) = (0, 0, 0);
        for line in got.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("whole lines only");
            if let Some(i) = v.get("h") {
                assert_eq!(i, hs);
                if hs == 150 {
                    assert_eq!(bigs, 0);
                }
                hs += 1;
            } else if let Some(i) = v.get("w") {
                assert_eq!(i, ws);
                ws += 1;
            } else {
                assert_eq!(v["big"].as_str().unwrap().len(), 300_000);
                assert_eq!(hs, 151, "the big message follows h=150");
                bigs += 1;
            }
        }
        assert_eq!((hs, ws, bigs), (300, 300, 1));
        let _ = child.wait().await;
    }

    #[test]
    fn a_handle_never_writes_to_the_fd_of_a_writer_dropped_with_its_runtime() {
        // The runtime goes away with the writer task in it (its stream, and fd, are closed).
        // A handle that outlives it must refuse, not write to a closed or reused fd.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (handle, mut child) = rt.block_on(async {
            let mut child = tokio::process::Command::new("cat")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let w = BatchWriter::with_direct_writes(child.stdin.take().unwrap());
            let h = w.handle();
            h.append(b"{}\n", usize::MAX).unwrap();
            // Keep the writer alive past the runtime: only the task's own drop closes it.
            std::mem::forget(w);
            (h, child)
        });
        drop(rt);
        let e = handle.append(b"{}\n", usize::MAX).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        let _ = child.start_kill();
    }

    #[tokio::test]
    async fn handle_refuses_past_its_limit_instead_of_waiting() {
        let (a, _b) = tokio::io::duplex(8);
        let w = BatchWriter::new(a);
        let h = w.handle();
        h.append(&[b'x'; 100], 64).unwrap();
        let e = h.append(b"y", 64).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        assert!(e.to_string().contains("not reading"), "{e}");
    }

    #[tokio::test]
    async fn a_write_error_is_reported_to_later_writes() {
        let (a, b) = tokio::io::duplex(8);
        drop(b);
        let mut w = BatchWriter::new(a);
        w.write_all(b"hello\n").await.unwrap();
        let mut failed = None;
        for _ in 0..100 {
            tokio::task::yield_now().await;
            if let Err(e) = w.write_all(b"x\n").await {
                failed = Some(e);
                break;
            }
        }
        let e = failed.expect("the broken pipe must surface");
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        assert!(w.flush().await.is_err());
    }
}
