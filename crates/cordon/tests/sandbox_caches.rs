#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Developer caches carry data, per workspace, and never code from one run into a later
//! one, tested with real runs of `cordon exec` (as root and, when the tests are root, as
//! `nobody`).
//!
//! The reproduction: a run in workspace W1 plants `~/.cargo/bin/cargo` through a path
//! built at run time (so no analysis of the command sees it), a package under npm's
//! `_npx`, a module under `~/go/pkg/mod`, and hides rustup's `rustc` behind a whiteout; a
//! later run in workspace W2 runs `cargo --version` with the network allowed. HOME is a
//! fake one whose `~/.cargo/bin` (on `PATH`, as rustup sets it up) holds stand-ins for
//! the host's `cargo` and `rustc`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{ALLOW_ALL, as_nobody, is_root, text};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Two workspaces, a fake HOME with a rustup-like `~/.cargo/bin` and npm's and Go's
/// caches, and cordon's state beside them.
struct Caches {
    _tmp: tempfile::TempDir,
    w1: PathBuf,
    w2: PathBuf,
    home: PathBuf,
    state: PathBuf,
    config: PathBuf,
    nobody: bool,
}

impl Caches {
    fn new(nobody: bool) -> Caches {
        let tmp = tempfile::Builder::new()
            .prefix("cordon-caches-")
            .tempdir()
            .unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (w1, w2, home, state) = (
            root.join("w1"),
            root.join("w2"),
            root.join("home"),
            root.join("state"),
        );
        for d in [&w1, &w2, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        for d in [".cargo/bin", ".cargo/registry", ".npm", "go/pkg/mod"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        for tool in ["cargo", "rustc"] {
            let p = home.join(".cargo/bin").join(tool);
            std::fs::write(&p, format!("#!/bin/sh\necho {tool} 1.0.0-host\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::write(home.join(".cargo/registry/host-crate"), "HOST-CRATE").unwrap();
        let config = root.join("policy.toml");
        std::fs::write(&config, ALLOW_ALL).unwrap();
        if nobody {
            let st = Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(&root)
                .status()
                .unwrap();
            assert!(st.success());
        }
        Caches {
            _tmp: tmp,
            w1,
            w2,
            home,
            state,
            config,
            nobody,
        }
    }

    /// `cordon exec [extra] -- /bin/sh -c BODY` in `ws`, with rustup's directory first on
    /// `PATH`.
    fn run(&self, ws: &Path, body: &str, extra: &[&str]) -> Output {
        let mut c = Command::new(common::bin());
        c.arg("exec")
            .arg("--isolated")
            .arg("--config")
            .arg(&self.config)
            .arg("--workspace")
            .arg(ws)
            .args(extra)
            .args(["--", "/bin/sh", "-c", body])
            .current_dir(ws)
            .env_clear()
            .env("HOME", &self.home)
            .env(
                "PATH",
                format!(
                    "{}:/usr/local/bin:/usr/bin:/bin",
                    self.home.join(".cargo/bin").display()
                ),
            )
            .env("LANG", "C")
            .env("CORDON_STATE_DIR", &self.state)
            .stdin(Stdio::null());
        let mut c = if self.nobody { as_nobody(&c) } else { c };
        c.output().unwrap()
    }

    /// Every file under the fake HOME with its content (a directory as `/`, a link as
    /// `-> TARGET`).
    fn home_tree(&self) -> Vec<(PathBuf, String)> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<(PathBuf, String)>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(base).unwrap().to_path_buf();
                let m = std::fs::symlink_metadata(&p).unwrap();
                if m.file_type().is_symlink() {
                    let t = std::fs::read_link(&p).unwrap();
                    out.push((rel, format!("-> {}", t.display())));
                } else if m.is_dir() {
                    out.push((rel, "/".into()));
                    walk(&p, base, out);
                } else {
                    out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.home, &self.home, &mut out);
        out.sort();
        out
    }
}

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "status {:?}\nstdout: {out}\nstderr: {err}",
        o.status
    );
    out
}

fn each_user(test: &str, f: impl Fn(bool)) {
    f(false);
    if is_root() {
        eprintln!("{test}: again as nobody");
        f(true);
    }
}

/// Run A: plants code where later runs would execute it, and data where the cache is
/// for. The path to `~/.cargo` is built at run time.
const PLANT: &str = r#"p=.car; p=${p}go
mkdir -p ~/$p/bin ~/$p/registry/cache/idx ~/.npm/_npx/x/node_modules/.bin ~/go/pkg/mod/evil
printf '#!/bin/sh\necho PLANTED-CARGO\n' > ~/$p/bin/cargo
printf '#!/bin/sh\necho PLANTED-TOOL\n' > ~/$p/bin/mytool
chmod +x ~/$p/bin/cargo ~/$p/bin/mytool
rm -f ~/$p/bin/rustc
echo PLANTED-NPX > ~/.npm/_npx/x/node_modules/.bin/x
echo GOMOD-FROM-A > ~/go/pkg/mod/evil/x
echo DATA-FROM-A > ~/$p/registry/cache/idx/a.crate
cargo --version
command -v rustc || echo RUSTC-HIDDEN"#;

/// Run B: what it sees of A's caches, and which `cargo` and `rustc` it runs.
const LOOK: &str = r#"cargo --version
rustc --version
echo "BIN[$(ls -A ~/.cargo/bin | tr '\n' ' ')]"
cat ~/.npm/_npx/x/node_modules/.bin/x 2>/dev/null
cat ~/go/pkg/mod/evil/x 2>/dev/null
cat ~/.cargo/registry/cache/idx/a.crate 2>/dev/null
cat ~/.cargo/registry/host-crate; echo
true"#;

fn check(c: &Caches, extra: &[&str]) {
    let who = if c.nobody { "nobody" } else { "root" };
    let before = c.home_tree();
    // Out of the policy's sight (it refuses a `~/.cargo/bin` it can spell out), as hostile
    // code would write it: containment, not the analysis of the command, must hold.
    let script = c.w1.join("t.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{PLANT}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    if c.nobody {
        Command::new("chown")
            .args(["nobody:nogroup"])
            .arg(&script)
            .status()
            .unwrap();
    }
    let planted = ok(&c.run(&c.w1, "./t.sh", extra));
    // The plant works inside its own run.
    assert!(
        planted.contains("PLANTED-CARGO") && planted.contains("RUSTC-HIDDEN"),
        "{who} {extra:?}: {planted}"
    );

    // Another workspace, with the network: none of it, and the host's cargo and rustc.
    let mut net = vec!["--allow-net", "example.com"];
    net.extend_from_slice(extra);
    let b = ok(&c.run(&c.w2, LOOK, &net));
    let ctx = format!("{who} {extra:?}, another workspace: {b}");
    assert!(
        b.contains("cargo 1.0.0-host") && b.contains("rustc 1.0.0-host"),
        "{ctx}"
    );
    assert!(b.contains("BIN[cargo rustc ]"), "{ctx}");
    for planted in [
        "PLANTED-CARGO",
        "PLANTED-NPX",
        "GOMOD-FROM-A",
        "DATA-FROM-A",
    ] {
        assert!(!b.contains(planted), "{planted}: {ctx}");
    }
    assert!(
        b.contains("HOST-CRATE"),
        "the host's cache shows through: {ctx}"
    );

    // The same workspace: the code is gone, the data stays.
    let b = ok(&c.run(&c.w1, LOOK, &net));
    let ctx = format!("{who} {extra:?}, the same workspace: {b}");
    assert!(
        b.contains("cargo 1.0.0-host") && b.contains("rustc 1.0.0-host"),
        "{ctx}"
    );
    assert!(
        !b.contains("PLANTED-CARGO") && !b.contains("PLANTED-NPX"),
        "{ctx}"
    );
    assert!(
        b.contains("DATA-FROM-A") && b.contains("GOMOD-FROM-A"),
        "the cache still works: {ctx}"
    );
    // A slot keeps what `cargo install` leaves under a name no host program has.
    if extra.is_empty() {
        assert!(b.contains("BIN[cargo rustc ]"), "{ctx}");
    } else {
        assert!(b.contains("BIN[cargo mytool rustc ]"), "{ctx}");
    }

    // The host's HOME is as it was.
    assert_eq!(c.home_tree(), before, "{who} {extra:?}");
}

/// Without a slot: run A's code in the developer caches reaches no later run, in another
/// workspace or in its own; its downloads reach later runs of its own workspace only.
#[test]
fn cache_code_reaches_no_later_run() {
    need_sandbox!("cache_code_reaches_no_later_run");
    each_user("cache_code_reaches_no_later_run", |nobody| {
        check(&Caches::new(nobody), &[]);
    });
}

/// The same with `--slot s1` on both runs: the slot's HOME persists across workspaces,
/// but its caches are per workspace, and a `cargo` planted over rustup's (a program in
/// HOME on the host's `PATH`) is gone before the next run.
#[test]
fn cache_code_reaches_no_later_run_on_a_slot() {
    need_sandbox!("cache_code_reaches_no_later_run_on_a_slot");
    each_user("cache_code_reaches_no_later_run_on_a_slot", |nobody| {
        check(&Caches::new(nobody), &["--slot", "s1"]);
    });
}
