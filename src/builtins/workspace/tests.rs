use super::*;
use crate::builtins::scratch_dir::{scratch_dir, TempDir};
use crate::response::ToolStatus;
use serde_json::json;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::PathBuf;

fn tempdir(tag: &str) -> TempDir {
    let dir = scratch_dir("ws-test", tag);
    std::fs::create_dir_all(dir.0.join("root")).unwrap();
    dir
}

struct Ws {
    tools: Vec<Arc<WorkspaceTool>>,
    dir: TempDir,
}

impl Ws {
    fn new(tag: &str) -> Ws {
        let dir = tempdir(tag);
        let ws = Workspace::new(&dir.0.join("root"), WorkspaceOptions::default()).unwrap();
        Ws {
            tools: ws.tools(),
            dir,
        }
    }
    fn root(&self) -> PathBuf {
        self.dir.0.join("root")
    }
    fn call(&self, name: &str, args: Value) -> ToolResponse {
        let tool = self.tools.iter().find(|t| t.spec().name == name).unwrap();
        tool.call(&args)
    }
    fn read(&self, path: &str) -> ToolResponse {
        self.call("read_file", json!({"file_path": path}))
    }
    fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

fn err(resp: &ToolResponse, needle: &str) {
    assert_eq!(resp.status, ToolStatus::Error, "{}", resp.text);
    assert!(
        resp.text.contains(needle),
        "{:?} lacks {needle:?}",
        resp.text
    );
}

#[test]
fn paths_out_of_the_root_are_refused() {
    let w = Ws::new("escape");
    std::fs::write(w.dir.0.join("outside.txt"), "outside").unwrap();
    w.put("in.txt", b"inside\n");
    for p in [
        "../outside.txt",
        "a/../../outside.txt",
        "/etc/passwd",
        "./../outside.txt",
    ] {
        err(&w.read(p), "outside the workspace");
    }
    let abs = w.root().join("in.txt");
    assert!(w.read(abs.to_str().unwrap()).text.contains("inside"));
    err(
        &w.call(
            "write_file",
            json!({"file_path": "../x.txt", "content": "x"}),
        ),
        "outside the workspace",
    );
    assert!(!w.dir.0.join("x.txt").exists());
    err(&w.read("a\u{202e}b"), "not accepted");
    err(&w.read(""), "must not be empty");
}

#[test]
fn symlinks_are_never_followed() {
    let w = Ws::new("links");
    symlink("/etc/passwd", w.root().join("passwd")).unwrap();
    symlink("/etc", w.root().join("etc")).unwrap();
    symlink("/dev/zero", w.root().join("zero")).unwrap();
    err(&w.read("passwd"), "symbolic link");
    err(&w.read("etc/passwd"), "symbolic link");
    err(&w.read("zero"), "symbolic link");
    err(&w.call("ls", json!({"path": "etc"})), "symbolic link");
    let resp = w.call("write_file", json!({"file_path": "passwd", "content": "x"}));
    err(&resp, "symbolic link");
    let grep = w.call("grep", json!({"pattern": "root", "output_mode": "content"}));
    assert!(grep.text.starts_with("No matches"), "{}", grep.text);
    assert!(w
        .call("glob", json!({"pattern": "**/*"}))
        .text
        .starts_with("No files"));
    let ls = w.call("ls", json!({}));
    assert!(
        ls.text.contains("passwd  (symlink, not followed)"),
        "{}",
        ls.text
    );
}

#[test]
fn a_directory_swapped_for_a_symlink_mid_call_never_leaks() {
    let w = Ws::new("swap");
    w.put("d/passwd", b"harmless\n");
    let root = w.root();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let root = root.clone();
        std::thread::spawn(move || {
            let (d, real, link) = (root.join("d"), root.join("real"), root.join("link"));
            std::fs::rename(&d, &real).unwrap();
            symlink("/etc", &link).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::rename(&link, &d);
                let _ = std::fs::rename(&d, &link);
                let _ = std::fs::rename(&real, &d);
                let _ = std::fs::rename(&d, &real);
            }
        })
    };
    for _ in 0..300 {
        let r = w.read("d/passwd");
        assert!(!r.text.contains("root:"), "{}", r.text);
        let g = w.call(
            "grep",
            json!({"pattern": "root:", "output_mode": "content"}),
        );
        assert!(!g.text.contains("root:x"), "{}", g.text);
        // Names listed under the symlink (/etc's) are never confirmed.
        let listed = w.call("glob", json!({"pattern": "**/*"}));
        assert!(
            listed.text.starts_with("No files")
                || listed
                    .text
                    .lines()
                    .all(|l| l == "d/passwd" || l == "real/passwd"),
            "{}",
            listed.text
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
}

#[test]
fn fifos_sockets_and_hard_links_are_refused_without_blocking() {
    let w = Ws::new("special");
    nix::unistd::mkfifo(
        &w.root().join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    err(&w.read("pipe"), "FIFO");
    err(
        &w.call("write_file", json!({"file_path": "pipe", "content": "x"})),
        "FIFO",
    );
    let _sock = std::os::unix::net::UnixListener::bind(w.root().join("sock")).unwrap();
    err(&w.read("sock"), "socket");
    w.put("a.txt", b"a\n");
    std::fs::hard_link(w.root().join("a.txt"), w.root().join("b.txt")).unwrap();
    err(&w.read("b.txt"), "hard links");
    let g = w.call("grep", json!({"pattern": "x"}));
    assert!(g.text.starts_with("No matches"), "{}", g.text);
}

#[test]
fn big_sparse_binary_and_invalid_utf8_files() {
    let w = Ws::new("files");
    let f = std::fs::File::create(w.root().join("sparse.img")).unwrap();
    f.set_len(2 << 30).unwrap();
    err(
        &w.read("sparse.img"),
        "binary file (binary data, 2147483648 bytes)",
    );
    w.put("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    err(&w.read("logo.png"), "PNG image");
    w.put("latin1.txt", b"caf\xe9\nok\n");
    let r = w.read("latin1.txt");
    assert_eq!(r.status, ToolStatus::Success);
    assert!(
        r.text.starts_with("     1\tcaf\\xE9\n     2\tok\n"),
        "{}",
        r.text
    );
    assert_eq!(r.data.as_ref().unwrap()["invalid_utf8"], json!(true));
    err(
        &w.call(
            "edit_file",
            json!({"file_path": "latin1.txt", "old_string": "ok", "new_string": "ko"}),
        ),
        "not valid UTF-8",
    );
}

#[test]
fn read_pages_by_lines_and_caps_bytes() {
    let w = Ws::new("pages");
    let body: String = (1..=10_000).map(|i| format!("line {i}\n")).collect();
    w.put("big.txt", body.as_bytes());
    let r = w.call(
        "read_file",
        json!({"file_path": "big.txt", "offset": 5000, "limit": 3}),
    );
    assert_eq!(
        r.text,
        "  5000\tline 5000\n  5001\tline 5001\n  5002\tline 5002\n…(more lines follow; read on with offset=5003)"
    );
    let r = w.call("read_file", json!({"file_path": "big.txt", "offset": 9999}));
    assert_eq!(r.text, "  9999\tline 9999\n 10000\tline 10000");
    err(
        &w.call(
            "read_file",
            json!({"file_path": "big.txt", "offset": 10_001}),
        ),
        "has 10000 lines",
    );
    w.put("wide.txt", "x".repeat(300_000).as_bytes());
    let r = w.read("wide.txt");
    assert!(
        r.text.ends_with("…(line cut at 2000 characters)"),
        "{}",
        &r.text[r.text.len() - 80..]
    );
    let wide: String = (0..200)
        .map(|_| format!("{}\n", "y".repeat(1500)))
        .collect();
    w.put("wide2.txt", wide.as_bytes());
    let r = w.read("wide2.txt");
    assert!(r.text.len() < 101_000);
    assert!(
        r.text
            .contains("output capped at 100000 bytes; read on with offset=67"),
        "{}",
        &r.text[r.text.len() - 120..]
    );
}

#[test]
fn edits_keep_crlf_bom_and_mode_and_need_a_fresh_read() {
    let w = Ws::new("edit");
    w.put("win.txt", b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n");
    std::fs::set_permissions(
        w.root().join("win.txt"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    let edit = json!({"file_path": "win.txt", "old_string": "one\ntwo", "new_string": "1\n2\n2.5"});
    err(&w.call("edit_file", edit.clone()), "has not been read");
    let r = w.read("win.txt");
    assert!(r.text.starts_with("     1\tone\n"), "{}", r.text);
    let r = w.call("edit_file", edit);
    assert_eq!(r.status, ToolStatus::Success, "{}", r.text);
    assert_eq!(
        r.text,
        "Edited win.txt: 1 replacement(s).\n@@ line 1 @@\n-one\n-two\n+1\n+2\n+2.5"
    );
    let on_disk = std::fs::read(w.root().join("win.txt")).unwrap();
    assert_eq!(on_disk, b"\xEF\xBB\xBF1\r\n2\r\n2.5\r\nthree\r\n");
    let mode = std::fs::metadata(w.root().join("win.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    // Changed behind the agent's back: refused until read again.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(w.root().join("win.txt"), b"someone else\r\n").unwrap();
    let again = json!({"file_path": "win.txt", "old_string": "three", "new_string": "3"});
    err(
        &w.call("edit_file", again.clone()),
        "changed on disk since you last read it",
    );
    err(
        &w.call(
            "write_file",
            json!({"file_path": "win.txt", "content": "x"}),
        ),
        "changed on disk",
    );
    assert_eq!(
        std::fs::read(w.root().join("win.txt")).unwrap(),
        b"someone else\r\n"
    );
}

#[test]
fn edit_uniqueness_and_all_or_nothing_multi_edit() {
    let w = Ws::new("multi");
    let src = "a = 1\nb = 2\na = 1\n";
    w.put("m.py", src.as_bytes());
    w.read("m.py");
    err(
        &w.call(
            "edit_file",
            json!({"file_path": "m.py", "old_string": "a = 1", "new_string": "a = 3"}),
        ),
        "occurs 2 times in m.py (at lines 1, 3)",
    );
    let multi = json!({"file_path": "m.py", "edits": [
        {"old_string": "b = 2", "new_string": "b = 20"},
        {"old_string": "c = 9", "new_string": "c = 90"},
    ]});
    err(
        &w.call("multi_edit", multi),
        "edit 2 of 2 failed; no edit was applied",
    );
    assert_eq!(std::fs::read_to_string(w.root().join("m.py")).unwrap(), src);
    let ok = w.call(
        "multi_edit",
        json!({"file_path": "m.py", "edits": [
            {"old_string": "a = 1", "new_string": "a = 5", "replace_all": true},
            {"old_string": "b = 2", "new_string": "b = 6"},
        ]}),
    );
    assert!(
        ok.text
            .starts_with("Edited m.py: 2 edits, 3 replacement(s)."),
        "{}",
        ok.text
    );
    assert_eq!(
        std::fs::read_to_string(w.root().join("m.py")).unwrap(),
        "a = 5\nb = 6\na = 5\n"
    );
}

#[test]
fn secrets_are_refused_everywhere_and_the_list_is_configurable() {
    let w = Ws::new("secrets");
    w.put(".env", b"TOKEN=abc\n");
    w.put("deploy/key.pem", b"TOKEN=pem\n");
    w.put(".ssh/id_ed25519", b"TOKEN=ssh\n");
    w.put("src/app.py", b"TOKEN = read()\n");
    err(&w.read(".env"), "deny list: .env");
    err(&w.read(".ssh/id_ed25519"), "deny list: .ssh");
    err(&w.read("deploy/key.pem"), "*.pem");
    err(
        &w.call("write_file", json!({"file_path": ".env", "content": "x"})),
        "secrets",
    );
    let g = w.call("grep", json!({"pattern": "TOKEN", "hidden": true}));
    assert_eq!(g.text, "src/app.py");
    let ws = Workspace::new(
        &w.root(),
        WorkspaceOptions {
            deny: Some(vec![]),
            ..Default::default()
        },
    )
    .unwrap();
    let read = ws
        .tools()
        .into_iter()
        .find(|t| t.spec().name == "read_file")
        .unwrap();
    assert_eq!(
        read.call(&json!({"file_path": ".env"})).text,
        "     1\tTOKEN=abc"
    );
}

#[test]
fn read_only_offers_read_tools_with_their_flags() {
    let d = tempdir("ro");
    let opts = WorkspaceOptions {
        read_only: true,
        ..Default::default()
    };
    let ws = Workspace::new(&d.0.join("root"), opts).unwrap();
    let names: Vec<String> = ws.tools().iter().map(|t| t.spec().name.clone()).collect();
    assert_eq!(names, ["ls", "read_file", "glob", "grep"]);
    let all = Workspace::new(&d.0.join("root"), WorkspaceOptions::default()).unwrap();
    for t in all.tools() {
        let reads = t.read_only();
        assert_eq!(t.spec().supports_parallel, reads, "{}", t.spec().name);
        assert_eq!(t.destructive(), !reads);
    }
    assert!(matches!(
        Workspace::new(&d.0.join("missing"), WorkspaceOptions::default()),
        Err(WorkspaceSetupError::Io { errno: 2, .. })
    ));
}

#[test]
fn glob_is_sorted_respects_gitignore_and_hides_dot_files() {
    let w = Ws::new("glob");
    for p in [
        "b.py",
        "a/z.py",
        "a/b/c.py",
        "a.txt",
        ".hidden/x.py",
        "build/gen.py",
        "a/.cache.py",
    ] {
        w.put(p, b"x\n");
    }
    w.put(".gitignore", b"build/\n");
    let g = w.call("glob", json!({"pattern": "**/*.py"}));
    assert_eq!(g.text, "a/b/c.py\na/z.py\nb.py");
    assert_eq!(w.call("glob", json!({"pattern": "*.py"})).text, "b.py");
    assert_eq!(
        w.call("glob", json!({"pattern": "*.py", "path": "a"})).text,
        "a/z.py"
    );
    let h = w.call("glob", json!({"pattern": "**/*.py", "hidden": true}));
    assert_eq!(h.text, ".hidden/x.py\na/.cache.py\na/b/c.py\na/z.py\nb.py");
    let capped = w.call("glob", json!({"pattern": "**/*.py", "head_limit": 2}));
    assert_eq!(
        capped.text,
        "a/b/c.py\na/z.py\n…(showing 2 of 3; narrow the search or raise head_limit)"
    );
    err(
        &w.call("glob", json!({"pattern": "a[", "path": "."})),
        "invalid glob pattern",
    );
}

#[test]
fn glob_and_grep_reach_files_deeper_than_the_kept_directories() {
    let w = Ws::new("deep");
    let dir = |depth: usize| -> String { (0..depth).map(|i| format!("d{i}/")).collect() };
    for depth in [0, 1, 63, 64, 65, 80] {
        w.put(&format!("{}f{depth}.py", dir(depth)), b"needle\n");
        w.put(&format!("{}side{depth}/s.py", dir(depth)), b"needle\n");
    }
    symlink("/etc", w.root().join(format!("{}etc", dir(70)))).unwrap();
    symlink(
        w.root().join("d0"),
        w.root().join(format!("{}loop", dir(66))),
    )
    .unwrap();
    let mut expected: Vec<String> = [0, 1, 63, 64, 65, 80]
        .iter()
        .flat_map(|&d| {
            [
                format!("{}f{d}.py", dir(d)),
                format!("{}side{d}/s.py", dir(d)),
            ]
        })
        .collect();
    expected.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    let g = w.call("glob", json!({"pattern": "**/*.py"}));
    assert_eq!(g.text, expected.join("\n"));
    let files = w.call(
        "grep",
        json!({"pattern": "needle|root:", "output_mode": "files_with_matches"}),
    );
    assert_eq!(files.text, expected.join("\n"));
}
