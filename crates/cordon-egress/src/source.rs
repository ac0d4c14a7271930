//! Reading a credential's real value from its source, outside the sandbox: a variable of
//! cordon's own environment, a file only its owner can read, or a command (no shell).
//!
//! What this must never do: put the value in an error message, read a file that other
//! users can read or that belongs to someone else (the value may already be known to
//! them, or be theirs to swap), or wait for a command without bound.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_policy::credential::{CredentialSource, CredentialSpec};

use crate::credential::{Credential, CredentialError};

/// The most of a source read as its value.
const MAX_VALUE_BYTES: u64 = 64 * 1024;

impl Credential {
    /// Read `spec`'s value from its source and make the credential. Every failure is a
    /// sentence naming the credential and what to do; none holds the value.
    pub fn from_spec(spec: &CredentialSpec) -> Result<Credential, CredentialError> {
        let name = &spec.name;
        let fail = |why: String| CredentialError(format!("credential {name}: {why}"));
        let value = match &spec.source {
            CredentialSource::Env(var) => std::env::var(var).map_err(|_| {
                fail(format!(
                    "its source {var} is not set (or not UTF-8) in cordon's environment"
                ))
            })?,
            CredentialSource::File(path) => read_private_file(path).map_err(fail)?,
            CredentialSource::Command { argv, timeout } => {
                run_source_command(argv, *timeout).map_err(fail)?
            }
            _ => {
                return Err(fail(
                    "its source is of a kind this cordon cannot read".into(),
                ));
            }
        };
        let value = value.trim().to_owned();
        Credential::new(
            name,
            value,
            spec.apply.clone(),
            spec.destinations.clone(),
            spec.env.clone(),
        )
    }
}

/// The content of `path`, which must be a regular file of this user's that neither its
/// group nor others can read. The checks are made on the opened file, so a rename
/// between check and read changes nothing.
fn read_private_file(path: &std::path::Path) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    // Opened without blocking (a FIFO there would wait for a writer for ever) and checked
    // to be a regular file on what was opened.
    let (file, meta) = cordon_fs::open_regular(path).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::WrongType(_) => format!("{shown} is not a regular file"),
        _ => format!("cannot open {shown}: {e}"),
    })?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "{shown} belongs to uid {}, not to the user running cordon (uid {me}); a secret file must be your own",
            meta.uid()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{shown} can be read or written by its group or by others (mode {:03o}); make it yours alone with `chmod 600 {shown}`",
            meta.mode() & 0o777
        ));
    }
    let mut text = String::new();
    file.take(MAX_VALUE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown} as UTF-8 text: {e}"))?;
    if text.len() as u64 > MAX_VALUE_BYTES {
        return Err(format!(
            "{shown} is larger than {MAX_VALUE_BYTES} bytes; it does not look like one credential"
        ));
    }
    Ok(text)
}

/// Run `argv` (no shell) with no input, and take what it prints on stdout. It must exit
/// 0 within `timeout`; otherwise it is killed and the reason returned (with the first
/// line of what it printed on stderr, which is not where a helper prints the secret).
fn run_source_command(argv: &[String], timeout: Duration) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("its command is empty".into());
    };
    let shown = argv.join(" ");
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run its command `{shown}`: {e}"))?;
    // Each pipe is read on its own thread, and waited for only until the deadline: a
    // daemon the helper started may keep a pipe open long after the helper is gone.
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(MAX_VALUE_BYTES + 1).read_to_end(&mut buf);
            }
            let _ = tx.send(buf);
        });
        rx
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "its command `{shown}` did not finish within {} s and was stopped",
                    timeout.as_secs()
                ));
            }
            Err(e) => {
                let _ = child.kill();
                return Err(format!("cannot wait for its command `{shown}`: {e}"));
            }
        }
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    let stderr = err.recv_timeout(left()).unwrap_or_default();
    let stdout = out.recv_timeout(left()).map_err(|_| {
        format!(
            "its command `{shown}` exited, but its output did not end within {} s (a process it started keeps it open)",
            timeout.as_secs()
        )
    })?;
    if !status.success() {
        let first: String = String::from_utf8_lossy(&stderr)
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
        let said = if first.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", first.trim())
        };
        return Err(format!("its command `{shown}` failed ({status}){said}"));
    }
    if stdout.len() as u64 > MAX_VALUE_BYTES {
        return Err(format!(
            "its command `{shown}` printed more than {MAX_VALUE_BYTES} bytes; that does not look like one credential"
        ));
    }
    let text = String::from_utf8(stdout)
        .map_err(|_| format!("its command `{shown}` printed something that is not UTF-8 text"))?;
    if text.trim().is_empty() {
        return Err(format!("its command `{shown}` printed nothing"));
    }
    Ok(text)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use cordon_policy::credential::{Apply, Destination};
    use std::os::unix::fs::PermissionsExt;

    fn spec(source: CredentialSource) -> CredentialSpec {
        CredentialSpec {
            name: "t".into(),
            source,
            destinations: vec![Destination::parse("api.example.com", &[], &[]).unwrap()],
            apply: Apply::Bearer,
            env: None,
        }
    }

    const VALUE: &str = "s3cr3t-value-0123456789";

    #[test]
    fn a_private_file_is_read_and_trimmed_and_an_open_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("token");
        std::fs::write(&f, format!("  {VALUE}\n")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = Credential::from_spec(&spec(CredentialSource::File(f.clone()))).unwrap();
        assert_eq!(c.value(), VALUE);
        for mode in [0o640, 0o604, 0o620] {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = Credential::from_spec(&spec(CredentialSource::File(f.clone())))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("by its group or by others") && e.contains("chmod 600"),
                "{e}"
            );
            assert!(!e.contains(VALUE));
        }
        let e = Credential::from_spec(&spec(CredentialSource::File(dir.path().join("none"))))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("credential t: cannot open"), "{e}");
    }

    #[test]
    fn a_file_of_another_user_is_refused() {
        // /etc/hostname style: owned by root. Only meaningful when not running as root.
        if rustix::process::geteuid().is_root() {
            return;
        }
        let e = Credential::from_spec(&spec(CredentialSource::File("/etc/passwd".into())))
            .unwrap_err()
            .to_string();
        assert!(e.contains("belongs to uid 0"), "{e}");
    }

    #[test]
    fn a_command_is_run_without_a_shell_with_a_timeout() {
        let argv = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let ok = CredentialSource::Command {
            argv: argv(&["printf", "%s\\n", VALUE]),
            timeout: Duration::from_secs(10),
        };
        assert_eq!(Credential::from_spec(&spec(ok)).unwrap().value(), VALUE);
        // No shell: the `;` is an argument of printf, not a second command.
        let literal = CredentialSource::Command {
            argv: argv(&["printf", "%s", "abcdefgh;false"]),
            timeout: Duration::from_secs(10),
        };
        assert_eq!(
            Credential::from_spec(&spec(literal)).unwrap().value(),
            "abcdefgh;false"
        );
        let failing = CredentialSource::Command {
            argv: argv(&["sh", "-c", "echo locked >&2; exit 3"]),
            timeout: Duration::from_secs(10),
        };
        let e = Credential::from_spec(&spec(failing))
            .unwrap_err()
            .to_string();
        assert!(e.contains("failed") && e.contains("locked"), "{e}");
        let slow = CredentialSource::Command {
            argv: argv(&["sleep", "5"]),
            timeout: Duration::from_secs(1),
        };
        let started = Instant::now();
        let e = Credential::from_spec(&spec(slow)).unwrap_err().to_string();
        assert!(e.contains("did not finish within 1 s"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(4));
        let silent = CredentialSource::Command {
            argv: argv(&["true"]),
            timeout: Duration::from_secs(10),
        };
        let e = Credential::from_spec(&spec(silent))
            .unwrap_err()
            .to_string();
        assert!(e.contains("printed nothing"), "{e}");
        let missing = CredentialSource::Command {
            argv: argv(&["/nonexistent/helper"]),
            timeout: Duration::from_secs(10),
        };
        let e = Credential::from_spec(&spec(missing))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot run"), "{e}");
    }
}
