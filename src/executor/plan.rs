//! How the calls of one model response run: which run together, and where each one runs.

use std::ops::Range;

/// What a tool needs to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Rust built-in that never blocks: always run on the calling thread.
    Inline,
    /// May block: on the calling thread for a lone call of a blocking run, else on a worker.
    Sync,
    /// Blocks when called synchronously but has a cancellable `arun` needing no thread (an MCP
    /// tool, the CLI): on the calling thread for a lone call of a blocking run, else awaited.
    Dual,
    /// Only `arun`: awaited.
    Async,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Inline => "inline",
            Kind::Sync => "sync",
            Kind::Dual => "dual",
            Kind::Async => "async",
        }
    }
}

/// Where one call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// On the thread that drives the run, now.
    Inline,
    /// On a worker thread, so nothing else waits for it.
    Thread,
    /// Awaited on the event loop.
    Await,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Inline => "inline",
            Route::Thread => "thread",
            Route::Await => "await",
        }
    }
}

/// The route of a call. `blocking_run`: the run was started by the blocking `run` (nothing
/// else shares its thread); `in_batch`: the call runs beside others; a call with a timeout
/// must be waited for from outside, so it never runs inline unless it cannot block.
pub fn route(kind: Kind, blocking_run: bool, in_batch: bool, timeout: Option<f64>) -> Route {
    let alone = blocking_run && !in_batch && timeout.is_none();
    match kind {
        Kind::Inline => Route::Inline,
        Kind::Async => Route::Await,
        Kind::Dual if alone => Route::Inline,
        Kind::Dual => Route::Await,
        Kind::Sync if alone => Route::Inline,
        Kind::Sync => Route::Thread,
    }
}

/// What a call of a response is, for planning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Admitted, and may run beside adjacent parallel calls.
    Parallel,
    /// Admitted, and runs by itself.
    Alone,
    /// Already refused by a gate: it runs nowhere and splits no batch.
    Refused,
}

/// A run of calls: a batch when at least two of its calls run in parallel; otherwise its calls
/// run one after the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub calls: Range<usize>,
    pub batch: bool,
}

/// The calls of one response in the order they run: adjacent parallel calls form one batch (a
/// refused call between them keeps its place without splitting it); every other call runs
/// alone. Results reach the model in call order either way.
pub fn groups(slots: &[Slot]) -> Vec<Group> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < slots.len() {
        let mut j = i + 1;
        if slots[i] == Slot::Parallel {
            while j < slots.len() && slots[j] != Slot::Alone {
                j += 1;
            }
        }
        let parallel = slots[i..j].iter().filter(|s| **s == Slot::Parallel).count();
        out.push(Group {
            calls: i..j,
            batch: parallel >= 2,
        });
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_blocking_call_runs_inline_only_without_a_timeout() {
        assert_eq!(route(Kind::Sync, true, false, None), Route::Inline);
        assert_eq!(route(Kind::Sync, true, false, Some(1.0)), Route::Thread);
        assert_eq!(route(Kind::Sync, false, false, None), Route::Thread);
        assert_eq!(route(Kind::Sync, true, true, None), Route::Thread);
        assert_eq!(route(Kind::Dual, true, false, None), Route::Inline);
        assert_eq!(route(Kind::Dual, true, false, Some(1.0)), Route::Await);
        assert_eq!(route(Kind::Dual, false, false, None), Route::Await);
        assert_eq!(route(Kind::Inline, false, true, Some(1.0)), Route::Inline);
        assert_eq!(route(Kind::Async, true, false, None), Route::Await);
    }

    fn plan(slots: &[Slot]) -> Vec<(Range<usize>, bool)> {
        groups(slots)
            .into_iter()
            .map(|g| (g.calls, g.batch))
            .collect()
    }

    #[test]
    fn adjacent_parallel_calls_form_batches() {
        use Slot::*;
        assert_eq!(plan(&[]), vec![]);
        assert_eq!(plan(&[Parallel]), vec![(0..1, false)]);
        assert_eq!(
            plan(&[Parallel, Parallel, Alone, Parallel, Parallel, Parallel]),
            vec![(0..2, true), (2..3, false), (3..6, true)]
        );
        assert_eq!(plan(&[Alone, Alone]), vec![(0..1, false), (1..2, false)]);
        assert_eq!(
            plan(&[Parallel, Alone, Parallel]),
            vec![(0..1, false), (1..2, false), (2..3, false)]
        );
    }

    #[test]
    fn a_refused_call_keeps_its_place_without_splitting_a_batch() {
        use Slot::*;
        assert_eq!(
            plan(&[Parallel, Refused, Parallel, Refused]),
            vec![(0..4, true)]
        );
        assert_eq!(
            plan(&[Refused, Parallel, Parallel]),
            vec![(0..1, false), (1..3, true)]
        );
        assert_eq!(
            plan(&[Parallel, Refused, Alone]),
            vec![(0..2, false), (2..3, false)]
        );
    }
}
