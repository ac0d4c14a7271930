#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon ui` in a real browser: Debian's chromium, driven headless by Playwright for
//! Python (`tests/browser/console.py`), against the real binary and real `cordon exec
//! --pending` runs (approve, deny, lease and revoke, always allow, an edited input), a
//! contained run whose egress log shows a refused host, and a run held for review
//! (`exec --hold`) whose change set is shown and applied from the Changes page.
//! Screenshots of each page are kept in `target/ui-screenshots/`.
//!
//! The browser and Playwright come from `scripts/install-test-deps.sh` (`chromium` from
//! apt, Playwright in `.test-deps/ui/venv`). Without them this test skips with a reason,
//! except in CI (`CI=true` or `CORDON_REQUIRE_BROWSER_TESTS=1`), where that is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;
use common::bin;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tools() -> Result<PathBuf, String> {
    let venv = std::env::var_os("CORDON_UI_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps/ui"));
    let python = venv.join("venv/bin/python");
    if !Path::new("/usr/bin/chromium").exists() {
        return Err("/usr/bin/chromium is missing".into());
    }
    let ok = Command::new(&python)
        .args(["-c", "import playwright.sync_api"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return Err(format!("Playwright is missing from {}", python.display()));
    }
    Ok(python)
}

#[test]
fn console_in_a_real_browser() {
    let python = match tools() {
        Ok(p) => p,
        Err(why) => {
            let required = std::env::var_os("CI").is_some_and(|v| v == "true")
                || std::env::var_os("CORDON_REQUIRE_BROWSER_TESTS").is_some_and(|v| v == "1");
            assert!(
                !required,
                "browser test tools missing ({why}); run scripts/install-test-deps.sh"
            );
            eprintln!(
                "skipping console_in_a_real_browser: {why}; run scripts/install-test-deps.sh"
            );
            return;
        }
    };
    // The sandbox hides /tmp (and /var/tmp) and binds the workspace back in.
    let tmp = tempfile::Builder::new()
        .prefix("cordon-ui-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (ws, home, state) = (root.join("ws"), root.join("home"), root.join("state"));
    for d in [&ws, &home, &state] {
        std::fs::create_dir_all(d).unwrap();
    }
    let config = root.join("policy.toml");
    std::fs::write(&config, "[permissions]\nask = [\"Bash(echo:*)\"]\n").unwrap();

    let mut ui = Command::new(bin())
        .args(["ui", "--listen", "127.0.0.1:0", "--isolated", "--config"])
        .arg(&config)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("CORDON_STATE_DIR", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = ui.stdout.take().unwrap();
    let ui = Killed(ui);
    let mut reader = BufReader::new(stdout);
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    // Keep reading so the console never writes into a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let url = first
        .trim()
        .strip_prefix("cordon ui: open ")
        .unwrap_or_else(|| panic!("unexpected first line: {first:?}"))
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );

    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let shots = target.parent().unwrap().join("ui-screenshots");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/console.py");
    let out = Command::new(python)
        .arg(script)
        .env("CORDON_UI_URL", &url)
        .env("CORDON_BIN", bin())
        .env("CORDON_CONFIG", &config)
        .env("CORDON_WORKSPACE", &ws)
        .env("CORDON_HOME", &home)
        .env("CORDON_STATE_DIR", &state)
        .env("CORDON_SCREENSHOTS", &shots)
        .output()
        .unwrap();
    drop(ui);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the browser test failed:\n{text}");
    assert!(text.contains("all steps passed"), "{text}");
    for page in [
        "pending",
        "pending-edit",
        "decisions",
        "grants",
        "egress",
        "changes",
        "audit",
    ] {
        let png = shots.join(format!("{page}.png"));
        assert!(
            std::fs::metadata(&png).is_ok_and(|m| m.len() > 1000),
            "{}",
            png.display()
        );
    }
}
