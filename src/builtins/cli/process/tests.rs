use super::*;
use std::sync::Arc;

fn plan(script: &str) -> SpawnPlan {
    SpawnPlan {
        path: CString::new("/bin/sh").unwrap(),
        argv: vec![
            CString::new("sh").unwrap(),
            CString::new("-c").unwrap(),
            CString::new(script).unwrap(),
        ],
        env: vec![CString::new("PATH=/usr/bin:/bin").unwrap()],
        cwd: None,
    }
}

fn limits(timeout_ms: u64, max_bytes: usize) -> Limits {
    Limits {
        timeout: Duration::from_millis(timeout_ms),
        max_bytes,
        grace: Duration::from_millis(200),
    }
}

/// Every process (alive or zombie) whose process group is `pgid`, read from /proc.
pub(crate) fn group_members(pgid: i32) -> Vec<(i32, char)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which is parenthesised and may contain spaces).
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) {
            found.push((pid, fields[0].chars().next().unwrap_or('?')));
        }
    }
    found
}

#[test]
fn captures_both_streams_and_the_exit_code() {
    let o = run(
        &plan("echo out; echo err >&2; exit 3"),
        &limits(5000, 1000),
        None,
    )
    .unwrap();
    assert_eq!(o.stdout, b"out\n");
    assert_eq!(o.stderr, b"err\n");
    assert_eq!(o.exit, Some(ExitInfo::Code(3)));
    assert_eq!(o.ending, Ending::Exited);
    assert!(!o.stragglers_killed);
    assert!(group_members(o.pid.unwrap()).is_empty());
}

#[test]
fn stdin_is_dev_null_and_env_is_exactly_the_plan() {
    let mut p = plan("cat; env");
    p.env = vec![CString::new("ONLY=1").unwrap()];
    let t = Instant::now();
    let o = run(&p, &limits(30_000, 1000), None).unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    let text = String::from_utf8(o.stdout).unwrap();
    let vars: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("PWD=") && !l.starts_with("SHLVL=") && !l.starts_with("_="))
        .collect();
    assert_eq!(vars, ["ONLY=1"]);
}

#[test]
fn a_timeout_kills_the_whole_group_and_reaps_it() {
    let t = Instant::now();
    let o = run(
        &plan("sleep 30 & sleep 30 & sleep 30"),
        &limits(300, 1000),
        None,
    )
    .unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(o.ending, Ending::Timeout);
    assert_eq!(o.exit, Some(ExitInfo::Signal(9)));
    assert!(group_members(o.pid.unwrap()).is_empty());
}

#[test]
fn a_grandchild_holding_the_pipe_does_not_turn_success_into_a_timeout() {
    let t = Instant::now();
    let o = run(
        &plan("sleep 30 & echo finished"),
        &limits(20_000, 1000),
        None,
    )
    .unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(o.ending, Ending::Exited);
    assert_eq!(o.exit, Some(ExitInfo::Code(0)));
    assert_eq!(o.stdout, b"finished\n");
    assert!(o.stragglers_killed);
    assert!(group_members(o.pid.unwrap()).is_empty());
}

#[test]
fn background_processes_detached_from_the_pipes_are_killed_too() {
    let o = run(
        &plan("sleep 30 >/dev/null 2>&1 & echo ok"),
        &limits(5000, 1000),
        None,
    )
    .unwrap();
    assert_eq!(o.exit, Some(ExitInfo::Code(0)));
    assert!(!o.stragglers_killed);
    assert!(group_members(o.pid.unwrap()).is_empty());
}

#[test]
fn an_output_flood_is_cut_at_the_cap_at_once() {
    let t = Instant::now();
    let o = run(&plan("yes"), &limits(10_000, 16_000), None).unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(o.ending, Ending::Overflow);
    assert_eq!(o.stdout.len(), 16_000);
    assert!(o.stdout_truncated && !o.stderr_truncated);
    assert!(group_members(o.pid.unwrap()).is_empty());
}

#[test]
fn cancellation_from_another_thread_stops_the_run() {
    let token = Arc::new(CancelToken::new().unwrap());
    let t2 = token.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        t2.cancel();
    });
    let t = Instant::now();
    let o = run(&plan("sleep 30"), &limits(20_000, 1000), Some(&token)).unwrap();
    h.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(o.ending, Ending::Cancelled);
    assert!(group_members(o.pid.unwrap()).is_empty());
}

#[test]
fn exec_and_chdir_failures_are_reported() {
    let mut p = plan("true");
    p.path = CString::new("/nonexistent/prog").unwrap();
    assert_eq!(
        run(&p, &limits(5000, 100), None).unwrap_err(),
        SpawnError::Exec(Errno::ENOENT)
    );
    let mut p = plan("true");
    p.cwd = Some(CString::new("/nonexistent/dir").unwrap());
    assert_eq!(
        run(&p, &limits(5000, 100), None).unwrap_err(),
        SpawnError::Chdir(Errno::ENOENT)
    );
}

#[test]
fn inheritable_descriptors_of_the_host_do_not_reach_the_command() {
    let f = std::fs::File::open("/etc/hostname").unwrap();
    // SAFETY: dup2 onto an unused high descriptor without CLOEXEC, as a careless host would.
    let leaked = unsafe { libc::dup2(f.as_raw_fd(), 77) };
    assert_eq!(leaked, 77);
    let o = run(&plan("ls /proc/self/fd"), &limits(5000, 1000), None).unwrap();
    unsafe { libc::close(77) };
    let fds: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert!(!fds.contains(&"77".to_string()), "{fds:?}");
}

#[test]
fn a_descendant_that_escapes_into_its_own_session_cannot_hang_the_call() {
    let pidfile = std::env::temp_dir().join(format!("escapee-{}", std::process::id()));
    let _ = std::fs::remove_file(&pidfile);
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 30' & echo started",
        pidfile.display()
    );
    let t = Instant::now();
    let o = run(&plan(&script), &limits(10_000, 1000), None).unwrap();
    let elapsed = t.elapsed();
    assert_eq!(o.exit, Some(ExitInfo::Code(0)));
    assert_eq!(o.stdout, b"started\n");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(group_members(o.pid.unwrap()).is_empty());
    // It left the group on purpose, but it is still a descendant: it was killed and reaped.
    let escapee: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = std::fs::read_to_string(format!("/proc/{escapee}/stat")).is_ok();
    if alive {
        let _ = kill(Pid::from_raw(escapee), Signal::SIGKILL);
    }
    assert!(!alive, "escaped descendant {escapee} survived");
    let _ = std::fs::remove_file(&pidfile);
}
