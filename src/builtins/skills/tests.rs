use super::*;
use crate::builtins::scratch_dir::{scratch_dir, TempDir};
use crate::response::ToolStatus;

fn tempdir(tag: &str) -> TempDir {
    let mut dir = scratch_dir("skills-test", tag);
    dir.0 = dir.0.canonicalize().unwrap();
    dir
}

fn skill(root: &Path, folder: &str, content: &[u8]) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), content).unwrap();
    dir
}

fn build(paths: &[PathBuf]) -> Result<SkillsTool, SkillsSetupError> {
    SkillsTool::new(paths, SkillsOptions::default())
}

fn invalid(paths: &[PathBuf]) -> String {
    match build(paths) {
        Err(SkillsSetupError::Invalid(msg)) => msg,
        Err(other) => panic!("expected Invalid, got {other:?}"),
        Ok(_) => panic!("expected an error"),
    }
}

#[test]
fn every_malformed_skill_is_reported_with_file_and_line() {
    let d = tempdir("bad");
    let r = &d.0;
    skill(r, "no-front", b"# Just a title\n");
    skill(r, "unclosed", b"---\nname: unclosed\ndescription: x\n");
    skill(
        r,
        "bad-yaml",
        b"---\nname: bad-yaml\ndescription: a: b\n---\nbody\n",
    );
    skill(r, "scalar", b"---\njust text\n---\n");
    skill(r, "no-name", b"---\ndescription: has no name\n---\n");
    skill(r, "upper", b"---\ndescription: d\nname: Upper_Case\n---\n");
    let long_name = format!("---\nname: {}\ndescription: d\n---\n", "a".repeat(65));
    skill(r, "long-name", long_name.as_bytes());
    skill(r, "no-desc", b"---\nname: no-desc\n---\n");
    skill(
        r,
        "blank-desc",
        b"---\nname: blank-desc\ndescription: '  '\n---\n",
    );
    let long_desc = format!(
        "---\nname: long-desc\n\ndescription: {}\n---\n",
        "x".repeat(1025)
    );
    skill(r, "long-desc", long_desc.as_bytes());
    skill(
        r,
        "num-desc",
        b"---\nname: num-desc\ndescription: 12\n---\n",
    );
    skill(
        r,
        "bad-triggers",
        b"---\nname: bad-triggers\ndescription: d\ntriggers: [1, {a: b}]\n---\n",
    );
    skill(
        r,
        "latin1",
        b"---\nname: latin1\ndescription: ok\n---\nline\ncaf\xe9\n",
    );
    skill(r, "dup-a", b"---\nname: same\ndescription: first\n---\n");
    skill(r, "dup-b", b"---\n\nname: same\ndescription: second\n---\n");
    let msg = invalid(std::slice::from_ref(r));
    let f = |folder: &str| r.join(folder).join("SKILL.md").display().to_string();
    let expect = [
        format!("{}:1: missing front matter", f("no-front")),
        format!(
            "{}:1: the front matter opened here is never closed",
            f("unclosed")
        ),
        format!(
            "{}:3: malformed front matter: mapping values are not allowed in this context\n",
            f("bad-yaml")
        ),
        format!(
            "{}:2: malformed front matter: expected `key: value` lines, got a string",
            f("scalar")
        ),
        format!("{}:1: the front matter has no name", f("no-name")),
        format!("{}:3: bad name 'Upper_Case'", f("upper")),
        format!("{}:2: bad name 'aaaa", f("long-name")),
        format!("{}:1: the front matter has no description", f("no-desc")),
        format!("{}:3: the front matter has no description", f("blank-desc")),
        format!(
            "{}:4: the description has 1025 characters; at most 1024",
            f("long-desc")
        ),
        format!(
            "{}:3: description must be a string, got a number",
            f("num-desc")
        ),
        format!(
            "{}:4: triggers must be a list of strings",
            f("bad-triggers")
        ),
        format!("{}:6: not UTF-8 (invalid byte at column 4)", f("latin1")),
        format!(
            "two skills are named same: {}:2 and {}:3",
            f("dup-a"),
            f("dup-b")
        ),
    ];
    for e in &expect {
        assert!(msg.contains(e.as_str()), "missing {e:?} in:\n{msg}");
    }
    assert_eq!(msg.lines().count(), expect.len(), "{msg}");
}

#[test]
fn paths_that_are_not_directories_are_errors() {
    let d = tempdir("paths");
    let file = d.0.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let msg = invalid(&[d.0.join("missing"), file.clone()]);
    assert!(msg.contains(&format!(
        "skills path {} is not a directory",
        d.0.join("missing").display()
    )));
    assert!(msg.contains(&format!(
        "skills path {} is not a directory (not a directory)",
        file.display()
    )));
    match SkillsTool::new(
        std::slice::from_ref(&d.0),
        SkillsOptions {
            max_read_chars: 0,
            ..Default::default()
        },
    ) {
        Err(SkillsSetupError::Config(m)) => {
            assert_eq!(m, "max_read_chars must be a positive integer, got 0")
        }
        _ => panic!("expected Config"),
    }
}

fn good_tree(r: &Path) -> PathBuf {
    let root = r.join("skills");
    let pdf = skill(
        &root,
        "pdf",
        "\u{feff}---\r\nname: pdf-forms\r\ndescription: |\r\n  Fill PDF forms.\r\n  Use for any\u{202e} PDF.\r\ntriggers: [pdf, form]\r\nlicense: MIT\r\n---\r\n\r\n# PDF\r\nRun scripts/fill.py.\r\n"
            .as_bytes(),
    );
    std::fs::create_dir_all(pdf.join("scripts/deep")).unwrap();
    std::fs::write(pdf.join("scripts/fill.py"), "print('fill')\n").unwrap();
    std::fs::write(pdf.join("scripts/deep/x.txt"), "deep\n").unwrap();
    std::fs::write(pdf.join(".hidden"), "secret\n").unwrap();
    std::fs::write(pdf.join("reference.md"), "é".repeat(30)).unwrap();
    skill(
        &root,
        "alpha",
        b"---\nname: alpha\ndescription: First skill.\n---\nAlpha body.\n",
    );
    std::fs::create_dir_all(root.join("not-a-skill")).unwrap();
    std::fs::create_dir_all(root.join(".hidden-skill")).unwrap();
    std::fs::write(root.join(".hidden-skill/SKILL.md"), "garbage").unwrap();
    root
}

#[test]
fn list_load_and_section() {
    let d = tempdir("good");
    let root = good_tree(&d.0);
    let t = build(std::slice::from_ref(&root)).unwrap();
    let names: Vec<&str> = t.skills().iter().map(|s| s.meta.name.as_str()).collect();
    assert_eq!(names, ["alpha", "pdf-forms"]);
    assert_eq!(t.skills()[1].meta.triggers, ["pdf", "form"]);
    let section = t.system_prompt_section();
    assert!(section.starts_with("## Skills\n"), "{section}");
    assert!(
        section.ends_with("- alpha: First skill.\n- pdf-forms: Fill PDF forms. Use for any PDF."),
        "{section}"
    );
    let listed = t.call(&json!({"action": "list"}));
    assert_eq!(listed.status, ToolStatus::Success);
    assert!(listed
        .text
        .contains("- pdf-forms: Fill PDF forms. Use for any PDF."));
    assert_eq!(
        listed.data.as_ref().unwrap()["skills"],
        json!(["alpha", "pdf-forms"])
    );

    let loaded = t.call(&json!({"action": "load", "name": "pdf-forms"}));
    assert_eq!(loaded.status, ToolStatus::Success, "{}", loaded.text);
    assert!(
        loaded
            .text
            .starts_with("Skill pdf-forms:\n\n# PDF\r\nRun scripts/fill.py."),
        "{:?}",
        loaded.text
    );
    assert!(!loaded.text.contains("license"));
    assert!(
        loaded
            .text
            .ends_with("file=...):\n- reference.md\n- scripts/deep/x.txt\n- scripts/fill.py"),
        "{}",
        loaded.text
    );
    assert!(!loaded.text.contains(".hidden"));

    let read = t.call(&json!({"action": "read", "name": "pdf-forms", "file": " scripts/fill.py "}));
    assert_eq!(
        (read.status, read.text.as_str()),
        (ToolStatus::Success, "print('fill')\n")
    );

    // A short cap: a partial result saying how much was kept.
    let short = SkillsTool::new(
        std::slice::from_ref(&root),
        SkillsOptions {
            max_read_chars: 10,
            max_description_chars: 8,
            prompts: None,
        },
    )
    .unwrap();
    let cut = short.call(&json!({"action": "read", "name": "pdf-forms", "file": "reference.md"}));
    assert_eq!(cut.status, ToolStatus::Partial);
    assert_eq!(
        cut.text,
        format!("{}\n…(truncated, over 10 characters)", "é".repeat(10))
    );
    assert!(
        short
            .system_prompt_section()
            .ends_with("- pdf-forms: Fill PDF…(truncated)"),
        "{}",
        short.system_prompt_section()
    );

    // The path itself as one skill.
    let one = build(&[root.join("alpha")]).unwrap();
    assert_eq!(one.skills().len(), 1);
    assert_eq!(
        build(&[d.0.join("skills/not-a-skill")])
            .unwrap()
            .system_prompt_section(),
        ""
    );
}

#[test]
fn bad_calls_and_escapes_are_refused() {
    let d = tempdir("escape");
    let root = good_tree(&d.0);
    let pdf = root.join("pdf");
    std::fs::write(d.0.join("outside.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(d.0.join("outside.txt"), pdf.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&d.0, pdf.join("up")).unwrap();
    let t = build(std::slice::from_ref(&root)).unwrap();
    let call = |args: Value| t.call(&args);
    let err = |args: Value| {
        let r = call(args);
        assert_eq!(r.status, ToolStatus::Error, "{}", r.text);
        r.text
    };
    assert_eq!(
        err(json!({"action": "delete"})),
        "Error: action must be list / load / read, got 'delete'"
    );
    assert_eq!(
        err(json!({"action": "load"})),
        "Error: action=load needs the skill's name"
    );
    assert_eq!(
        err(json!({"action": "load", "name": "nope"})),
        "Error: there is no skill named 'nope'; available skills: alpha, pdf-forms"
    );
    assert!(err(json!({"action": "read", "name": "pdf-forms"}))
        .starts_with("Error: action=read needs file"));
    for f in ["../outside.txt", "/etc/passwd", "scripts/../../x"] {
        assert!(
            err(json!({"action": "read", "name": "pdf-forms", "file": f}))
                .contains("is out of bounds"),
            "{f}"
        );
    }
    for f in [".hidden", "scripts//fill.py", "a\u{0}b"] {
        assert!(
            err(json!({"action": "read", "name": "pdf-forms", "file": f}))
                .contains("is not accepted"),
            "{f}"
        );
    }
    assert_eq!(
        err(json!({"action": "read", "name": "pdf-forms", "file": "link.txt"})),
        "Error: link.txt of skill pdf-forms is not a regular file with a single link; refused"
    );
    assert!(
        err(json!({"action": "read", "name": "pdf-forms", "file": "up/outside.txt"}))
            .contains("not a regular file")
    );
    assert_eq!(
        err(json!({"action": "read", "name": "pdf-forms", "file": "none.md"})),
        "Error: skill pdf-forms has no file none.md"
    );
    // Links are not listed either.
    assert!(!call(json!({"action": "load", "name": "pdf-forms"}))
        .text
        .contains("link.txt"));

    // An edited body shows at the next load; a broken one is an error; a replaced folder is refused.
    std::fs::write(
        root.join("alpha/SKILL.md"),
        "---\nname: alpha\ndescription: First skill.\n---\nNew body.\n",
    )
    .unwrap();
    assert_eq!(
        call(json!({"action": "load", "name": "alpha"})).text,
        "Skill alpha:\n\nNew body."
    );
    std::fs::write(root.join("alpha/SKILL.md"), "no front matter").unwrap();
    assert!(err(json!({"action": "load", "name": "alpha"}))
        .starts_with("Error: the SKILL.md of skill alpha no longer has valid front matter"));
    std::fs::rename(root.join("alpha"), d.0.join("alpha-old")).unwrap();
    std::fs::create_dir_all(root.join("alpha")).unwrap();
    std::fs::write(
        root.join("alpha/SKILL.md"),
        "---\nname: alpha\ndescription: d\n---\nImpostor\n",
    )
    .unwrap();
    assert_eq!(
        err(json!({"action": "load", "name": "alpha"})),
        "Error: the folder of skill alpha was replaced or removed since the skills were discovered"
    );
}

#[test]
fn a_symlinked_skill_md_is_refused_at_discovery() {
    let d = tempdir("link");
    let dir = d.0.join("s/x");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(d.0.join("real.md"), "---\nname: x\ndescription: d\n---\n").unwrap();
    std::os::unix::fs::symlink(d.0.join("real.md"), dir.join("SKILL.md")).unwrap();
    let msg = invalid(&[d.0.join("s")]);
    assert_eq!(
        msg,
        format!(
            "{}: cannot be read (not a regular file with a single link)",
            dir.join("SKILL.md").display()
        )
    );
}

#[test]
fn a_long_list_of_problems_is_cut() {
    let d = tempdir("many");
    for i in 0..60 {
        skill(&d.0, &format!("s{i:02}"), b"no front matter");
    }
    let msg = invalid(std::slice::from_ref(&d.0));
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(lines.len(), 51);
    assert!(lines[49].starts_with(&format!(
        "{}:1: missing",
        d.0.join("s49/SKILL.md").display()
    )));
    assert_eq!(lines[50], "…and 10 more problems");
}

#[test]
fn a_symlinked_skill_folder_is_followed_once_then_confined() {
    let d = tempdir("linked");
    let real = skill(
        &d.0.join("elsewhere"),
        "x",
        b"---\nname: linked\ndescription: d\n---\nBody\n",
    );
    std::fs::write(real.join("notes.md"), "inside\n").unwrap();
    std::fs::create_dir_all(d.0.join("skills")).unwrap();
    std::os::unix::fs::symlink(&real, d.0.join("skills/linked")).unwrap();
    let t = build(&[d.0.join("skills")]).unwrap();
    assert_eq!(t.skills()[0].dir, real);
    let r = t.call(&json!({"action": "read", "name": "linked", "file": "notes.md"}));
    assert_eq!(r.text, "inside\n");
}
