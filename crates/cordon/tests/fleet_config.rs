#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `[store]` through the real binary: a repository's config may not choose the shared
//! store or its CA (two spellings each), a password file others may read is refused
//! without showing the password, a remote host needs `ca_file`, and a command under
//! `cordon exec` can neither read the password file nor see the password's variable,
//! whatever the allowlists say. One test (TLS end to end) starts a server of its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Output;

use common::cli::cordon;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    state: PathBuf,
}

/// A URL no server answers at: `[store]` resolves, every connection fails.
fn nowhere(env: &Env) -> String {
    format!(
        "postgresql:///cordon?host={}&user=cordon",
        env.home.join("no-server").display()
    )
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, ws, state) = (root.join("home"), root.join("ws"), root.join("state"));
        for d in [
            home.join(".config/cordon"),
            ws.join(".cordon"),
            home.join("no-server"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        Env {
            _tmp: tmp,
            home,
            ws,
            state,
        }
    }

    fn user_config(&self, text: &str) {
        std::fs::write(self.home.join(".config/cordon/policy.toml"), text).unwrap();
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = cordon(&self.home, &self.ws, &self.state, args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn read_req(&self) -> String {
        serde_json::json!({"tool": "Read", "input": {"file_path": self.ws.join("a.txt")}})
            .to_string()
    }
}

/// A repository that names the store is refused, in the project file and in a file the
/// harness passes with `--config`; nothing is allowed meanwhile.
#[test]
fn a_repository_cannot_choose_the_shared_store() {
    let e = Env::new();
    let evil = "[store]\nurl = \"postgres://evil@127.0.0.1/attacker\"\n";
    std::fs::write(e.ws.join(".cordon/policy.toml"), evil).unwrap();
    let out = e.run(&["check", &e.read_req()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout} {stderr}");
    assert!(
        stderr.contains("`[store]` is refused in a project config file"),
        "{stderr}"
    );
    assert!(!stdout.contains("\"allow\""), "{stdout}");

    // Second spelling: the same table inline, in a file given on the command line.
    std::fs::remove_file(e.ws.join(".cordon/policy.toml")).unwrap();
    let extra = e.ws.join("extra.toml");
    std::fs::write(
        &extra,
        "store = { url = \"postgres://evil@127.0.0.1/attacker\" }\n",
    )
    .unwrap();
    let out = e.run(
        &["check", "--config", extra.to_str().unwrap(), &e.read_req()],
        &[],
    );
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout} {stderr}");
    assert!(
        stderr.contains("refused in a flags config file"),
        "{stderr}"
    );
}

/// A remote host without TLS stops the surface with one sentence naming `ca_file`; a
/// repository may not point the CA at its own file (two spellings); a CA file others
/// may write is refused.
#[test]
fn a_remote_store_needs_tls_from_the_users_own_config() {
    let e = Env::new();
    e.user_config("[store]\nurl = \"postgres://cordon@db.fleet.example:5432/cordon\"\n");
    let out = e.run(&["check", &e.read_req()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout} {stderr}");
    assert!(
        stderr.contains(
            "host db.fleet.example is not this machine and TLS is not configured: set `[store] ca_file`"
        ),
        "{stderr}"
    );
    assert!(!stdout.contains("\"allow\""), "{stdout}");
    // A repository's file naming a CA of its choosing, as a table and as a dotted key.
    let ca = e.ws.join("ca.pem");
    std::fs::write(&ca, "not used\n").unwrap();
    for text in [
        format!("[store]\nca_file = \"{}\"\n", ca.display()),
        format!("store.ca_file = \"{}\"\n", ca.display()),
    ] {
        e.user_config("");
        std::fs::write(e.ws.join(".cordon/policy.toml"), &text).unwrap();
        let out = e.run(&["check", &e.read_req()], &[]);
        let (stdout, stderr) = common::text(&out);
        assert_eq!(out.status.code(), Some(2), "{text}: {stdout} {stderr}");
        assert!(
            stderr.contains("`[store]` is refused in a project config file"),
            "{stderr}"
        );
    }
    std::fs::remove_file(e.ws.join(".cordon/policy.toml")).unwrap();
    // The user's own CA file, writable by others.
    let ca = e.home.join("db-ca.pem");
    std::fs::write(&ca, cordon_store::pg_test::TestCa::new("t").pem()).unwrap();
    std::fs::set_permissions(&ca, std::fs::Permissions::from_mode(0o666)).unwrap();
    e.user_config(&format!(
        "[store]\nurl = \"postgres://cordon@db.fleet.example/cordon\"\nca_file = \"{}\"\n",
        ca.display()
    ));
    let out = e.run(&["check", &e.read_req()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout} {stderr}");
    assert!(
        stderr.contains("may be written by its group or others"),
        "{stderr}"
    );
}

/// A password file its group or others may read stops the surface with one sentence
/// that names the file and never the password; a URL holding one is refused unrepeated.
#[test]
fn an_exposed_password_is_refused_without_being_shown() {
    let e = Env::new();
    let pw = e.home.join("store-password");
    std::fs::write(&pw, "HUNTER2-PW\n").unwrap();
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o640)).unwrap();
    e.user_config(&format!(
        "[store]\nurl = \"{}\"\npassword_file = \"{}\"\n",
        nowhere(&e),
        pw.display()
    ));
    for args in [vec!["check", "--pending"], vec!["approvals", "list"]] {
        let mut args = args;
        let req = e.read_req();
        if args[0] == "check" {
            args.push(&req);
        }
        let out = e.run(&args, &[]);
        let (stdout, stderr) = common::text(&out);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {stdout} {stderr}");
        assert!(stderr.contains("group or others"), "{args:?}: {stderr}");
        assert!(
            !format!("{stdout}{stderr}").contains("HUNTER2"),
            "{stdout} {stderr}"
        );
    }
    e.user_config("[store]\nurl = \"postgres://cordon:HUNTER2-PW@127.0.0.1/cordon\"\n");
    let out = e.run(&["check", &e.read_req()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout} {stderr}");
    assert!(stderr.contains("holds a password"), "{stderr}");
    assert!(
        !format!("{stdout}{stderr}").contains("HUNTER2"),
        "{stdout} {stderr}"
    );
}

/// With the store unreachable, a one-shot `check` still answers what the policy alone
/// decides, promptly, and refuses an ask that needs the store.
#[test]
fn an_unreachable_store_blocks_only_what_needs_it() {
    let e = Env::new();
    e.user_config(&format!(
        "[permissions]\nask = [\"Bash(make deploy:*)\"]\n[store]\nurl = \"{}\"\n",
        nowhere(&e)
    ));
    let started = std::time::Instant::now();
    let out = e.run(&["check", &e.read_req()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout} {stderr}");
    let key =
        serde_json::json!({"tool": "Read", "input": {"file_path": e.home.join(".ssh/id_rsa")}});
    let out = e.run(&["check", &key.to_string()], &[]);
    assert_eq!(out.status.code(), Some(4), "{}", common::text(&out).1);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let ask = serde_json::json!({"tool": "Bash", "input": {"command": "make deploy"}});
    let out = e.run(&["check", "--pending", &ask.to_string()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout} {stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        v["reason"]
            .as_str()
            .unwrap_or("")
            .contains("approval store cannot be used"),
        "{v}"
    );
}

/// The password file is masked in the sandbox like the store, and `password_env`'s
/// variable is not passed even when `--env` and `--env-secret` name it.
#[test]
fn exec_never_hands_the_store_password_to_the_command() {
    if !common::full_tier_or_skip("exec_never_hands_the_store_password_to_the_command") {
        return;
    }
    let e = Env::new();
    let pw = e.home.join("store-password");
    std::fs::write(&pw, "FILE-PW-SECRET\n").unwrap();
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(e.ws.join("where.txt"), pw.to_str().unwrap()).unwrap();
    let exec = |env: &[(&str, &str)]| {
        let out = e.run(
            &[
                "exec",
                "--home",
                "visible",
                "--env",
                "FLEET_PW",
                "--env-secret",
                "FLEET_PW",
                "--",
                "sh",
                "-c",
                "echo CONTROL-OK; cat \"$(cat where.txt)\"; echo \"env:${FLEET_PW:-unset}\"",
            ],
            env,
        );
        common::text(&out)
    };
    let allow_all = format!("{}\n", common::ALLOW_ALL);
    e.user_config(&format!(
        "{allow_all}[store]\nurl = \"{}\"\npassword_file = \"{}\"\n",
        nowhere(&e),
        pw.display()
    ));
    let (stdout, stderr) = exec(&[]);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(
        !stdout.contains("FILE-PW-SECRET"),
        "the password file was read: {stdout}"
    );
    e.user_config(&format!(
        "{allow_all}[store]\nurl = \"{}\"\npassword_env = \"FLEET_PW\"\n",
        nowhere(&e)
    ));
    let (stdout, stderr) = exec(&[("FLEET_PW", "ENV-PW-SECRET")]);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(stdout.contains("env:unset"), "{stdout}");
    assert!(
        !format!("{stdout}{stderr}").contains("ENV-PW-SECRET"),
        "{stdout} {stderr}"
    );
}

/// The password file named through a symlinked directory is masked under both of its
/// names; a password file with a second name (a hard link) stops the run.
#[test]
fn exec_masks_a_password_file_named_through_a_directory_link() {
    if !common::full_tier_or_skip("exec_masks_a_password_file_named_through_a_directory_link") {
        return;
    }
    let e = Env::new();
    let real = e.home.join("real");
    std::fs::create_dir(&real).unwrap();
    let pw = real.join("pw");
    std::fs::write(&pw, "LINKED-PW-SECRET\n").unwrap();
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&real, e.home.join("link")).unwrap();
    let allow_all = format!("{}\n", common::ALLOW_ALL);
    e.user_config(&format!(
        "{allow_all}[store]\nurl = \"{}\"\npassword_file = \"{}\"\n",
        nowhere(&e),
        e.home.join("link/pw").display()
    ));
    let script = format!(
        "echo CONTROL-OK; cat {h}/real/pw {h}/link/pw",
        h = e.home.display()
    );
    let run = || {
        common::text(&e.run(
            &["exec", "--home", "visible", "--", "sh", "-c", &script],
            &[],
        ))
    };
    let (stdout, stderr) = run();
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(!stdout.contains("LINKED-PW-SECRET"), "{stdout} {stderr}");
    std::fs::hard_link(&pw, e.home.join("second-name")).unwrap();
    let (stdout, stderr) = run();
    assert!(!stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(stderr.contains("more than one name"), "{stdout} {stderr}");
}

/// The store's socket directory is masked, a `--allow-unix-socket` into it (two
/// spellings) is refused, and so is a loopback exemption with the store's TCP port open.
#[test]
fn exec_keeps_the_store_endpoint_out_of_reach() {
    if !common::full_tier_or_skip("exec_keeps_the_store_endpoint_out_of_reach") {
        return;
    }
    let e = Env::new();
    let socket = e.home.join("no-server/.s.PGSQL.5432");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::os::unix::fs::symlink(e.home.join("no-server"), e.home.join("sock-link")).unwrap();
    let allow_all = format!("{}\n", common::ALLOW_ALL);
    e.user_config(&format!("{allow_all}[store]\nurl = \"{}\"\n", nowhere(&e)));
    let probe = format!(
        "echo CONTROL-OK; test -S {} && echo SOCKET-VISIBLE",
        socket.display()
    );
    let exec = |flags: &[&str]| {
        let mut args = vec!["exec", "--home", "visible"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "sh", "-c", &probe]);
        common::text(&e.run(&args, &[]))
    };
    let (stdout, stderr) = exec(&[]);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(!stdout.contains("SOCKET-VISIBLE"), "{stdout} {stderr}");
    let via_link = e.home.join("sock-link/.s.PGSQL.5432");
    for allowed in [socket.to_str().unwrap(), via_link.to_str().unwrap()] {
        let (stdout, stderr) = exec(&["--allow-unix-socket", allowed]);
        assert!(
            !stdout.contains("CONTROL-OK"),
            "{allowed}: {stdout} {stderr}"
        );
        assert!(
            stderr.contains("shared store's socket directory"),
            "{allowed}: {stdout} {stderr}"
        );
    }
    e.user_config(&format!(
        "{allow_all}[store]\nurl = \"postgres://cordon@127.0.0.1:5499/cordon\"\nmachine = \"m1\"\n"
    ));
    for host in ["127.0.0.1:5499", "anything.example:5499"] {
        let (stdout, stderr) = exec(&["--allow-net", host, "--allow-private", "127.0.0.0/8"]);
        assert!(!stdout.contains("CONTROL-OK"), "{host}: {stdout} {stderr}");
        assert!(
            stderr.contains("listens on loopback port 5499"),
            "{host}: {stdout} {stderr}"
        );
    }
    // Another port with the same exemption runs.
    let (stdout, stderr) = exec(&[
        "--allow-net",
        "127.0.0.1:8080",
        "--allow-private",
        "127.0.0.0/8",
    ]);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
}

/// Issue 38: `--net full` shares the host's loopback, where a store listening on
/// loopback TCP may trust every local connection: refused with one sentence, for each
/// spelling of a loopback store (two addresses, `localhost`, IPv6); the same
/// command without the host's network runs, and so does `--net full` with a store
/// reached through a Unix socket (whose directory stays masked).
#[test]
fn exec_with_the_hosts_network_is_refused_when_the_store_is_on_loopback() {
    if !common::full_tier_or_skip(
        "exec_with_the_hosts_network_is_refused_when_the_store_is_on_loopback",
    ) {
        return;
    }
    let e = Env::new();
    let allow_all = format!("{}\n", common::ALLOW_ALL);
    let exec = |flags: &[&str]| {
        let mut args = vec!["exec"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "sh", "-c", "echo CONTROL-OK"]);
        let out = e.run(&args, &[]);
        let (stdout, stderr) = common::text(&out);
        (out.status.code(), stdout, stderr)
    };
    for url in [
        "postgres://cordon@127.0.0.1:5499/cordon",
        "postgres://cordon@localhost:5499/cordon",
        "postgres://cordon@127.0.0.2:5499/cordon",
        "postgres://cordon@[::1]:5499/cordon",
    ] {
        e.user_config(&format!(
            "{allow_all}[store]\nurl = \"{url}\"\nmachine = \"m1\"\n"
        ));
        let (code, stdout, stderr) = exec(&["--net", "full"]);
        assert!(!stdout.contains("CONTROL-OK"), "{url}: {stdout} {stderr}");
        assert_ne!(code, Some(0), "{url}: {stdout} {stderr}");
        assert!(
            stderr.contains("listens on loopback port 5499")
                && stderr.contains("host's network (`--net full`)"),
            "{url}: {stdout} {stderr}"
        );
        let (code, stdout, stderr) = exec(&["--net", "none"]);
        assert!(
            stdout.contains("CONTROL-OK"),
            "{url}: {code:?} {stdout} {stderr}"
        );
    }
    e.user_config(&format!("{allow_all}[store]\nurl = \"{}\"\n", nowhere(&e)));
    let (code, stdout, stderr) = exec(&["--net", "full"]);
    assert!(stdout.contains("CONTROL-OK"), "{code:?} {stdout} {stderr}");
}

/// The whole path over TLS, through the real binary: `[store] url` on `localhost` with
/// `ca_file` reaches a server that takes TLS only; a pending approval recorded by `check`
/// is listed by `approvals`; the same config with another CA is refused with the TLS
/// sentence, and the ask is denied.
#[test]
fn the_cli_reaches_a_tls_store_and_refuses_another_ca() {
    let ca = cordon_store::pg_test::TestCa::new("fleet CA");
    let Some(c) = cordon_store::pg_test::Cluster::start_tcp(Some(&ca.issue(&["localhost"]))) else {
        return;
    };
    let db = c.fresh_database();
    let e = Env::new();
    let ca_file = e.home.join("db-ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let config = |ca_file: &std::path::Path| {
        format!(
            "[permissions]\nask = [\"Bash(make deploy:*)\"]\n[store]\nurl = \"postgres://postgres@localhost:{}/{db}\"\nca_file = \"{}\"\nmachine = \"tls-1\"\n",
            c.port().unwrap(),
            ca_file.display()
        )
    };
    e.user_config(&config(&ca_file));
    let ask = serde_json::json!({"tool": "Bash", "input": {"command": "make deploy"}});
    let out = e.run(&["check", "--pending", &ask.to_string()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert!(stdout.contains("pending"), "{stdout} {stderr}");
    let out = e.run(&["approvals", "list"], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout} {stderr}");
    assert!(
        stdout.contains("make deploy") && stdout.contains("tls-1"),
        "{stdout}"
    );
    // Another CA: refused, and the ask denied with the reason.
    let other = e.home.join("other-ca.pem");
    std::fs::write(&other, cordon_store::pg_test::TestCa::new("fleet CA").pem()).unwrap();
    e.user_config(&config(&other));
    let out = e.run(&["approvals", "list"], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_ne!(out.status.code(), Some(0), "{stdout} {stderr}");
    assert!(
        stderr.contains("TLS with verify-full failed (invalid peer certificate"),
        "{stderr}"
    );
    let out = e.run(&["check", "--pending", &ask.to_string()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout} {stderr}");
    assert!(
        stdout.contains("TLS with verify-full failed"),
        "{stdout} {stderr}"
    );
}

/// Separate roles through the real binary: a machine logging in as a `cordon_machine`
/// role records a pending approval but cannot approve it (one sentence, still pending);
/// an approver's role answers it; the machine's `approvals list` then shows none.
#[test]
fn a_machine_role_asks_and_only_an_approver_answers() {
    let Some(c) = cordon_store::pg_test::Cluster::start_private() else {
        return;
    };
    let db = c.fresh_database();
    drop(
        cordon_store::Store::open_at(&cordon_store::StoreAt::Postgres(c.target(&db, "owner")))
            .unwrap(),
    );
    let mut admin = c.admin_of(&db);
    admin.batch_execute(cordon_store::PG_ROLES_SQL).unwrap();
    admin
        .batch_execute(
            "CREATE ROLE ci_7 LOGIN IN ROLE cordon_machine; CREATE ROLE alice LOGIN IN ROLE cordon_approver",
        )
        .unwrap();
    let config = |role: &str| {
        format!(
            "[permissions]\nask = [\"Bash(make deploy:*)\"]\n[store]\nurl = \"postgresql:///{db}?host={}&user={role}\"\nmachine = \"{role}\"\n",
            c.socket_dir().display()
        )
    };
    let (machine, human) = (Env::new(), Env::new());
    machine.user_config(&config("ci_7"));
    human.user_config(&config("alice"));
    let ask = serde_json::json!({"tool": "Bash", "input": {"command": "make deploy"}});
    let out = machine.run(&["check", "--pending", &ask.to_string()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert!(stdout.contains("pending"), "{stdout} {stderr}");
    let out = machine.run(&["approvals", "list", "--json"], &[]);
    let (stdout, stderr) = common::text(&out);
    let listed: serde_json::Value = stdout
        .lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("nothing pending: {stdout} {stderr}"));
    assert_eq!(listed["machine"], "ci_7", "{listed}");
    let id = listed["id"].as_i64().unwrap();
    let out = machine.run(&["approvals", "approve", &id.to_string()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_ne!(out.status.code(), Some(0), "{stdout} {stderr}");
    assert!(
        stderr.contains("refused this to the database role cordon logs in as")
            && stderr.contains("cordon_approver"),
        "{stderr}"
    );
    let out = human.run(&["approvals", "list"], &[]);
    assert!(
        common::text(&out).0.contains("make deploy"),
        "still pending"
    );
    let out = human.run(&["approvals", "approve", &id.to_string()], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout} {stderr}");
    let out = machine.run(&["approvals", "list"], &[]);
    let (stdout, stderr) = common::text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout} {stderr}");
    assert!(!stdout.contains("make deploy"), "{stdout}");
}
