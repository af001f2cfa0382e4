//! A scratch directory for the built-ins' unit tests, removed with everything in it when dropped.

use std::path::PathBuf;

pub struct TempDir(pub PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh, empty directory `{prefix}-{pid}-{tag}-{n}` in the system's temp folder (`n` counts
/// the calls, so tests running in parallel never share one).
pub fn scratch_dir(prefix: &str, tag: &str) -> TempDir {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let p = std::env::temp_dir().join(format!("{prefix}-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    TempDir(p)
}
