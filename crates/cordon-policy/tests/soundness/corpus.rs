//! The commands the harness runs: a hand-written list of real ones (`commands.txt`) and
//! combinations generated from templates × arguments, over the decoys of `sandbox.rs`.
//!
//! Generation is deterministic (no randomness), so a violation found once is found again
//! by the same command at the same position.

/// One command of the corpus.
#[derive(Debug, Clone)]
pub struct Entry {
    pub text: String,
    /// `commands.txt:LINE` or `generated:FAMILY`.
    pub origin: String,
}

const HAND_WRITTEN: &str = include_str!("commands.txt");

/// Every command: the hand-written ones first, then the generated ones; duplicates dropped.
pub fn all() -> Vec<Entry> {
    let mut out = hand_written();
    out.extend(generated());
    let mut seen = std::collections::HashSet::new();
    out.retain(|e| seen.insert(e.text.clone()));
    out
}

/// `commands.txt`: one command per line; `#` starts a comment line; a block between a
/// line `>>>` and a line `<<<` is one command of several lines (loops, here-documents).
pub fn hand_written() -> Vec<Entry> {
    parse(HAND_WRITTEN, "commands.txt")
}

/// Commands in the format of `commands.txt`, from `name`.
pub fn parse(text: &str, name: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut block: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((start, lines)) = &mut block {
            if line.trim_end() == "<<<" {
                out.push(Entry {
                    text: lines.join("\n"),
                    origin: format!("{name}:{start}"),
                });
                block = None;
            } else {
                lines.push(line);
            }
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t == ">>>" {
            block = Some((n, Vec::new()));
            continue;
        }
        out.push(Entry {
            text: t.to_string(),
            origin: format!("{name}:{n}"),
        });
    }
    out
}

/// Files to read, from the workspace, the home and the system, in several spellings.
const READ_TARGETS: &[&str] = &[
    "README.md",
    "src/main.rs",
    "'my file.txt'",
    "data.csv",
    ".env",
    "./docs/guide.md",
    "a/b/../b/c.txt",
    "readme-link",
    "ssh-link/id_rsa",
    "~/.ssh/id_rsa",
    "$HOME/.aws/credentials",
    "~/notes.txt",
    "../other/file.txt",
    "/etc/hostname",
    "/etc/os-release",
    "missing.txt",
];

/// Programs that read the files they are given.
const READERS: &[&str] = &[
    "cat",
    "head -n 2",
    "tail -n 1",
    "wc -l",
    "sort",
    "uniq",
    "cut -c1-4",
    "grep -n a",
    "rg -n a",
    "md5sum",
    "sha256sum",
    "base64",
    "nl",
    "tac",
    "od -c",
    "stat",
    "file",
    "less",
    "diff README.md",
    "cmp notes.txt",
    "awk '{print $1}'",
    "sed -n 1p",
    "strings",
    "xxd",
    "head -c 10",
    "du -b",
    "ls -l",
];

/// Paths to write, create or replace.
const WRITE_TARGETS: &[&str] = &[
    "new.txt",
    "out/new.txt",
    "src/main.rs",
    "'my file.txt'",
    "a/b",
    "~/.bashrc",
    "~/newfile",
    "/tmp/x.txt",
    "../outside.txt",
    "ssh-link/planted",
    "readme-link",
];

/// Commands that write, with `{}` for the target.
const WRITERS: &[&str] = &[
    "touch {}",
    "mkdir -p {}",
    "rm -f {}",
    "rm -rf {}",
    "cp README.md {}",
    "mv notes.txt {}",
    "ln -s README.md {}",
    "ln -f data.csv {}",
    "chmod 600 {}",
    "truncate -s 0 {}",
    "echo hi > {}",
    "echo hi >> {}",
    "tee {} <<< hi",
    "printf 'x\\n' | tee -a {}",
    "sort -o {} data.csv",
    "sed -i s/a/b/ {}",
    "dd if=README.md of={} status=none",
    "install -m 644 README.md {}",
    "cat data.csv > {} 2>&1",
    "date &> {}",
];

/// Simple commands to compose.
const SIMPLE: &[&str] = &[
    "ls",
    "ls -la src",
    "cat README.md",
    "grep -rn TODO src",
    "wc -l data.csv",
    "git status --short",
    "git log --oneline -3",
    "find . -name '*.rs'",
    "echo done",
    "touch new.txt",
    "rm -f notes.txt",
    "mkdir -p build",
    "cat ~/.ssh/id_rsa",
    "head -1 ~/.aws/credentials",
    "sort data.csv",
    "pwd",
    "true",
    "false",
    "date",
    "id -u",
    "cp README.md copy.md",
    "du -sh .",
    "tail -n 1 logs/app.log",
    "curl -sS http://127.0.0.1:9/",
];

/// Wrappers and runners that take a command.
const WRAPPERS: &[&str] = &[
    "env {}",
    "env -i PATH=/usr/bin:/bin {}",
    "env FOO=1 {}",
    "timeout 5 {}",
    "nice {}",
    "nice -n 5 {}",
    "nohup {}",
    "stdbuf -oL {}",
    "command {}",
    "setsid {}",
    "time {}",
    "exec {}",
    "sh -c '{}'",
    "bash -c '{}'",
    "bash -lc '{}'",
    "eval '{}'",
    "( {} )",
    "{ {}; }",
    "if true; then {}; fi",
    "flock /tmp/lock {}",
];

/// Commands the wrappers wrap.
const WRAPPED: &[&str] = &[
    "ls src",
    "cat README.md",
    "touch new.txt",
    "rm -f notes.txt",
    "git status",
    "grep -r fn src",
    "cat ~/.ssh/id_rsa",
    "echo hi > out.txt",
];

/// Every generated command, family by family.
pub fn generated() -> Vec<Entry> {
    let mut out = Vec::new();
    let mut add = |family: &str, text: String| {
        out.push(Entry {
            text,
            origin: format!("generated:{family}"),
        })
    };
    for r in READERS {
        for t in READ_TARGETS {
            add("read", format!("{r} {t}"));
        }
    }
    for w in WRITERS {
        for t in WRITE_TARGETS {
            add("write", w.replace("{}", t));
        }
    }
    for w in WRAPPERS {
        for c in WRAPPED {
            add("wrap", w.replace("{}", c));
        }
    }
    // Compositions: every operator over a fixed walk through pairs of simple commands.
    let ops = [" && ", " || ", "; ", " | ", " & wait; "];
    let n = SIMPLE.len();
    for (k, op) in ops.iter().enumerate() {
        for (i, first) in SIMPLE.iter().enumerate() {
            let j = (i * 7 + k * 5 + 3) % n;
            add("compose", format!("{first}{op}{}", SIMPLE[j]));
        }
    }
    // Three-part chains.
    for (i, first) in SIMPLE.iter().enumerate() {
        add(
            "compose",
            format!(
                "{first} && {} | {}",
                SIMPLE[(i + 5) % n],
                ["head -1", "wc -l", "sort", "grep a", "tee t.txt"][i % 5]
            ),
        );
    }
    // Substitutions.
    let subst = [
        "echo $({})",
        "echo `{}`",
        "x=$({}); echo \"$x\"",
        "cat <({})",
        "diff <({}) <(ls)",
        "wc -l <({})",
        "echo \"$({} | head -1)\"",
        "{} > >(wc -l)",
    ];
    for s in subst {
        for c in SIMPLE.iter().take(16) {
            add("substitute", s.replace("{}", c));
        }
    }
    // Redirections.
    let redirs = [
        "{} > out.txt",
        "{} >> log.txt",
        "{} 2>&1 | head -3",
        "{} 2> err.txt",
        "{} &> all.txt",
        "{} > /dev/null 2>&1",
        "{} < data.csv",
        "{} >| clobber.txt",
        "{} > ~/out.txt",
        "{} 2>/tmp/err",
    ];
    for r in redirs {
        for c in SIMPLE.iter().take(12) {
            add("redirect", r.replace("{}", c));
        }
    }
    // Working directories.
    let dirs = [
        "src", "..", "~", "/etc", "docs", "ssh-link", "a/b", "~/.aws", "/tmp",
    ];
    let in_dir = [
        "ls",
        "cat *",
        "ls -la .",
        "pwd",
        "touch here.txt",
        "grep -r a .",
    ];
    for d in dirs {
        for c in in_dir {
            add("cd", format!("cd {d} && {c}"));
        }
    }
    // git, with and without -C and cd.
    let git = [
        "status",
        "status --short",
        "status --porcelain",
        "log --oneline",
        "log -1 --stat",
        "log -p -1",
        "diff",
        "diff HEAD~1",
        "diff --stat",
        "diff --cached",
        "show HEAD",
        "show --name-only HEAD",
        "branch",
        "branch -a",
        "rev-parse HEAD",
        "rev-parse --show-toplevel",
        "config --get user.name",
        "config --list",
        "ls-files",
        "blame README.md",
        "tag",
        "describe --always",
        "shortlog -s HEAD",
        "add README.md",
        "add -A",
        "commit -am wip",
        "commit --allow-empty -m empty",
        "checkout -b topic",
        "switch feature",
        "stash",
        "stash list",
        "rm --cached data.csv",
        "mv notes.txt moved.txt",
        "grep TODO",
        "remote -v",
        "cat-file -p HEAD",
        "count-objects -v",
        "reflog -3",
        "restore README.md",
        "reset --hard HEAD",
        "clean -n",
        "log --format=%an -1",
        "branch new-branch",
        "tag -l",
        "show-ref",
        "ls-tree HEAD",
        "rev-list --count HEAD",
        "format-patch -1 -o /tmp/patches",
        "archive -o /tmp/a.tar HEAD",
        "init /tmp/fresh",
    ];
    for g in git {
        add("git", format!("git {g}"));
    }
    for g in git.iter().take(20) {
        add("git", format!("git -C src {g}"));
        add("git", format!("cd src && git {g}"));
    }
    // find and xargs.
    let find_roots = [".", "src", "~", "/etc -maxdepth 1", "docs ssh-link"];
    let find_tails = [
        "-name '*.rs'",
        "-type f",
        "-maxdepth 1",
        "-newer README.md",
        "-name '*.log' -delete",
        "-type f -exec wc -l {} \\;",
        "-type f -exec cat {} +",
        "-print0 | xargs -0 wc -l",
        "-name '*.rs' | xargs grep -l fn",
        "-type d",
        "-empty",
        "-size +0 -name '*.md'",
    ];
    for r in find_roots {
        for t in find_tails {
            add("find", format!("find {r} {t}"));
        }
    }
    // sed and awk.
    let sed_awk = [
        "sed -n '1,2p' notes.txt",
        "sed 's/alpha/omega/' notes.txt",
        "sed -i 's/alpha/omega/' notes.txt",
        "sed -i.bak 's/alpha/omega/' notes.txt",
        "sed -n p ~/.ssh/id_rsa",
        "sed 's/a/b/w /tmp/sedout' notes.txt",
        "sed -e 1d data.csv > trimmed.csv",
        "sed '1e id' notes.txt",
        "awk -F, '{s+=$2} END {print s}' data.csv",
        "awk 'NR==1' README.md",
        "awk '{print > \"/tmp/awkout\"}' notes.txt",
        "awk 'BEGIN {system(\"id\")}'",
        "awk -f /dev/null data.csv",
        "awk '{print $1}' ~/.aws/credentials",
        "gawk '{print}' notes.txt",
        "mawk 'END {print NR}' data.csv",
    ];
    for c in sed_awk {
        add("sed-awk", c.to_string());
    }
    // Archives.
    let archives = [
        "tar czf /tmp/src.tgz src",
        "tar czf out.tgz src docs",
        "tar tzf archive.tar.gz",
        "tar xzf archive.tar.gz",
        "tar xzf archive.tar.gz -C /tmp",
        "tar xf archive.tar.gz -C a",
        "tar cf - src | wc -c",
        "tar cjf out.tbz src",
        "tar cJf out.txz src",
        "tar --zstd -cf out.tzst src",
        "tar -tvf archive.tar.gz",
        "tar -xOzf archive.tar.gz docs/guide.md",
        "gzip -k notes.txt",
        "gzip -d logs/old.log.gz",
        "gunzip -c logs/old.log.gz",
        "zcat logs/old.log.gz",
        "zgrep old logs/old.log.gz",
        "gzip -c data.csv > data.csv.gz",
        "gzip notes.txt",
        "bzip2 -k notes.txt",
        "xz -k notes.txt",
        "zip -q out.zip README.md",
        "unzip -l out.zip",
        "cat README.md | gzip > /tmp/r.gz",
    ];
    for c in archives {
        add("archive", c.to_string());
    }
    // The network: nothing listens and there is no route, but the attempt shows.
    let net = [
        "curl -sS http://127.0.0.1:9/",
        "curl -s -o page.html http://127.0.0.1:9/x",
        "curl -sS localhost:9",
        "curl -d @.env http://127.0.0.1:9/up",
        "curl -sS http://[::1]:9/",
        "curl -sS https://example.com/",
        "curl -sSf http://127.0.0.1:9/ | sh",
        "wget -q -O - http://127.0.0.1:9/",
        "wget -q http://127.0.0.1:9/file",
        "echo hi > /dev/tcp/127.0.0.1/9",
        "exec 3<>/dev/tcp/127.0.0.1/9",
        "git ls-remote http://127.0.0.1:9/repo.git",
        "git clone http://127.0.0.1:9/r.git /tmp/r",
        "ssh -o BatchMode=yes 127.0.0.1 -p 9 true",
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9))'",
        "curl -sS --connect-timeout 1 http://10.0.0.1:8080/",
    ];
    for c in net {
        add("network", c.to_string());
    }
    // Package managers and interpreters, read-only subcommands.
    let pm = [
        "pip list",
        "pip --version",
        "pip show pip",
        "pip freeze",
        "python3 --version",
        "python3 -c 'print(1)'",
        "python3 -m json.tool package.json",
        "npm ls",
        "npm --version",
        "npm config get registry",
        "node --version",
        "node -e 'console.log(1)'",
        "jq .name package.json",
        "jq -r '.scripts.test' package.json",
        "make -n",
        "make",
        "perl -ne 'print if /a/' notes.txt",
        "perl -e 'print 1'",
    ];
    for c in pm {
        add("tools", c.to_string());
    }
    // Loops and functions.
    let loops = [
        "for f in src/*.rs; do wc -l \"$f\"; done",
        "for f in *.md; do cat \"$f\"; done",
        "for i in 1 2 3; do echo $i > f$i.txt; done",
        "for i in 1 2 3; do echo $i; done > nums.txt",
        "while read -r l; do echo \"$l\"; done < data.csv",
        "cat data.csv | while read -r l; do echo \"$l\"; done",
        "f() { cat \"$1\"; }; f README.md",
        "f() { ls; }; f",
        "g() { rm -f \"$1\"; }; g notes.txt",
        "if [ -f README.md ]; then cat README.md; fi",
        "[ -d src ] && ls src",
        "test -e .env || echo none",
        "case x in x) cat notes.txt;; esac",
        "until true; do sleep 1; done",
        "select x in a; do break; done < /dev/null",
        "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i",
        "for d in src docs; do ls $d; done",
        "for f in $(ls src); do echo $f; done",
        "ls | while read f; do echo \"$f\"; done",
        "alias ll='ls -l'; ll",
        "shopt -s globstar; ls **/*.rs",
        "set -e; cat README.md; ls",
        "source /dev/null",
        ". ./scripts/build.sh",
        "./scripts/build.sh",
        "sh scripts/build.sh",
        "bash scripts/build.sh",
    ];
    for c in loops {
        add("control", c.to_string());
    }
    out
}
