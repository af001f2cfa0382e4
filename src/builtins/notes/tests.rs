use super::*;
use crate::builtins::scratch_dir::{scratch_dir, TempDir};
use crate::response::ToolStatus;
use nix::sys::stat::SFlag;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;

fn tempdir(tag: &str) -> TempDir {
    scratch_dir("notes-test", tag)
}

fn tool_in(dir: &Path) -> NotesTool {
    NotesTool::new(&dir.join("root"), NotesOptions::default()).unwrap()
}
fn read(t: &NotesTool, path: &str) -> ToolResponse {
    t.call(&json!({"action": "read", "path": path}))
}
fn append(t: &NotesTool, path: &str, content: &str) -> ToolResponse {
    t.call(&json!({"action": "append", "path": path, "content": content}))
}

#[test]
fn root_is_created_private_and_checked() {
    let d = tempdir("root");
    let t = tool_in(&d.0);
    let mode = std::fs::metadata(d.0.join("root"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    assert_eq!(t.spec().name, "notes");
    assert!(t
        .spec()
        .description
        .contains(&d.0.join("root").to_string_lossy().to_string()));

    let open = d.0.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(matches!(
        NotesTool::new(&open, NotesOptions::default()),
        Err(NotesSetupError::Permission(_))
    ));
    let link = d.0.join("link");
    std::os::unix::fs::symlink(d.0.join("root"), &link).unwrap();
    assert_eq!(
        NotesTool::new(&link, NotesOptions::default())
            .err()
            .unwrap(),
        NotesSetupError::Config("notes root must be a directory and must not be a symlink".into())
    );
    std::fs::write(d.0.join("file"), "x").unwrap();
    assert!(matches!(
        NotesTool::new(&d.0.join("file"), NotesOptions::default()),
        Err(NotesSetupError::Config(_))
    ));
    assert!(matches!(
        NotesTool::new(&d.0.join("r2"), NotesOptions { max_read_chars: 0, ..Default::default() }),
        Err(NotesSetupError::Config(m)) if m == "max_read_chars must be a positive integer, got 0"
    ));
    if effective_uid() == 0 {
        let theirs = d.0.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        assert_eq!(
            NotesTool::new(&theirs, NotesOptions::default())
                .err()
                .unwrap(),
            NotesSetupError::Permission("notes root must be owned by the current user".into())
        );
    }
}

#[test]
fn append_then_read_round_trip() {
    let d = tempdir("rt");
    let t = tool_in(&d.0);
    let r = read(&t, "progress.md");
    assert_eq!(r.text, "(note progress.md does not exist yet or is empty)");
    assert_eq!(
        r.data,
        Some(json!({"path": "progress.md", "exists": false}))
    );
    let r = append(&t, "./sub//x.md", "hello");
    assert_eq!(r.status, ToolStatus::Error, "{}", r.text);
    let r = append(&t, "./sub/x.md", "hello");
    assert_eq!(r.text, "Appended 6 characters to note sub/x.md.");
    assert_eq!(
        r.data,
        Some(json!({"path": "sub/x.md", "appended_chars": 6}))
    );
    append(&t, "sub/x.md", "wörld\r\n");
    let r = read(&t, "sub/x.md");
    assert_eq!(r.text, "hello\nwörld\r\n");
    assert_eq!(r.status, ToolStatus::Success);
    let mode = std::fs::metadata(d.0.join("root/sub/x.md"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(t.needs_confirmation(&json!({"action": "append"})));
    assert!(!t.needs_confirmation(&json!({"action": "read"})));
    assert!(t.is_external_content(&json!({"action": "read"})));
    assert!(!t.is_external_content(&json!({"action": "append"})));
}

#[test]
fn bad_paths_and_actions_are_refused() {
    let d = tempdir("paths");
    let t = tool_in(&d.0);
    let root = d.0.join("root").to_string_lossy().to_string();
    for p in ["/etc/passwd", "../x", "a/../../x", "a/.."] {
        assert_eq!(
            read(&t, p).text,
            format!("Error: path out of bounds; only files under {root} are accessible"),
            "{p}"
        );
    }
    for p in [
        "a//b",
        "a/",
        ".hidden",
        "a/.git/config",
        "a\0b",
        "a\nb",
        "a\u{202e}b",
        &"x/".repeat(40),
    ] {
        assert!(read(&t, p).text.starts_with("Error: path "), "{p:?}");
    }
    assert_eq!(read(&t, "  ").text, "Error: path must not be empty");
    assert_eq!(read(&t, "./.").text, "Error: path must not be empty");
    let r = t.call(&json!({"action": "delete", "path": "a"}));
    assert_eq!(r.text, "Error: action must be read / append, got 'delete'");
    assert_eq!(
        append(&t, "a", "  \n").text,
        "Error: append content must not be empty"
    );
    let long = "n".repeat(300);
    assert!(append(&t, &long, "x").text.contains("File name too long"));
}

#[test]
fn links_and_special_files_are_never_followed() {
    let d = tempdir("links");
    let t = tool_in(&d.0);
    let root = d.0.join("root");
    let outside = d.0.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), "SECRET").unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("dirlink")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("a/dirlink")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), root.join("a/b/filelink")).unwrap();
    std::fs::hard_link(outside.join("secret"), root.join("hard")).unwrap();
    nix::unistd::mkfifo(&root.join("fifo"), Mode::from_bits_truncate(0o600)).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
    for p in [
        "dirlink/secret",
        "a/dirlink/secret",
        "a/b/filelink",
        "hard",
        "fifo",
        "sock",
        "a",
        "a/b",
    ] {
        let r = read(&t, p);
        assert_eq!(r.status, ToolStatus::Error, "{p}: {}", r.text);
        assert!(!r.text.contains("SECRET"));
        let r = append(&t, p, "pwned");
        assert_eq!(r.status, ToolStatus::Error, "{p}: {}", r.text);
    }
    if effective_uid() == 0 {
        nix::sys::stat::mknod(
            &root.join("null"),
            SFlag::S_IFCHR,
            Mode::from_bits_truncate(0o600),
            nix::sys::stat::makedev(1, 3),
        )
        .unwrap();
        assert_eq!(read(&t, "null").status, ToolStatus::Error);
        assert_eq!(append(&t, "null", "x").status, ToolStatus::Error);
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret")).unwrap(),
        "SECRET"
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
}

#[test]
fn size_limits_and_refusals_leave_no_trace() {
    let d = tempdir("limits");
    let t = NotesTool::new(
        &d.0.join("root"),
        NotesOptions {
            max_append_chars: 10,
            max_file_bytes: 20,
            max_read_chars: 5,
            ..Default::default()
        },
    )
    .unwrap();
    let r = append(&t, "new/dir/a.md", &"x".repeat(11));
    assert_eq!(
        r.text,
        "Error: a single append exceeds the limit (10 characters); rejected"
    );
    assert_eq!(append(&t, "a.md", "0123456789").status, ToolStatus::Success);
    let r = append(&t, "a.md", "0123456789");
    assert_eq!(
        r.text,
        "Error: the note would exceed the size limit (20 bytes) after appending; rejected"
    );
    assert_eq!(
        std::fs::read(d.0.join("root/a.md")).unwrap(),
        b"0123456789\n"
    );
    let r = read(&t, "a.md");
    assert_eq!(r.status, ToolStatus::Partial);
    assert_eq!(r.text, "01234\n…(note truncated, over 5 characters)");
    let entries: Vec<_> = std::fs::read_dir(d.0.join("root"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("a.md")]);
}

#[test]
fn contention_is_an_immediate_error() {
    let d = tempdir("lock");
    let t = tool_in(&d.0);
    append(&t, "a.md", "x");
    let f = std::fs::File::open(d.0.join("root/a.md")).unwrap();
    // SAFETY: valid descriptor.
    assert_eq!(
        unsafe { nix::libc::flock(f.as_raw_fd(), nix::libc::LOCK_EX) },
        0
    );
    let start = std::time::Instant::now();
    assert_eq!(
        append(&t, "a.md", "y").text,
        "Error: note a.md is in use by another reader or writer; try again"
    );
    assert_eq!(
        read(&t, "a.md").text,
        "Error: note a.md is in use by another reader or writer; try again"
    );
    // A blocking lock would wait forever; the bound leaves room for a busy machine.
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn invalid_utf8_is_shown_with_replacement_characters() {
    let d = tempdir("utf8");
    let t = tool_in(&d.0);
    std::fs::write(d.0.join("root/bin.md"), b"ok \xff\xfe end").unwrap();
    let r = read(&t, "bin.md");
    assert_eq!(r.text, "ok \u{fffd}\u{fffd} end");
    assert_eq!(
        r.data,
        Some(json!({"path": "bin.md", "exists": true, "invalid_utf8": true}))
    );
}
