//! Where the targets put files of their own, and how they are cleaned up.
//!
//! Every scratch directory lies under one base: `CORDON_FUZZ_SCRATCH` when set
//! (`scripts/fuzz.sh` gives each run a fresh directory below its target directory, and
//! removes it after the run whatever the outcome: a crash ends libFuzzer with `_exit`,
//! past every cleanup of the process's own), else the system's temporary directory.
//! Never a memory-backed one by choice (`/dev/shm`): the merge target needs extended
//! attributes, and what a crashed run leaves there is memory nobody frees.
//!
//! A directory that lives as long as the process ([`process_dir`], for a target's
//! store or service kept across inputs) is removed when the process exits normally (an
//! `atexit` handler: libFuzzer's end of `-runs` or `-max_total_time`, the end of
//! `cargo test`). A directory of one input is a [`tempfile::TempDir`] from [`input_dir`],
//! removed when dropped (also while a caught panic unwinds).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The environment variable naming the base of every scratch directory.
pub const ENV: &str = "CORDON_FUZZ_SCRATCH";

/// The base of every scratch directory (see the module's documentation).
pub fn base() -> PathBuf {
    match std::env::var_os(ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => std::env::temp_dir(),
    }
}

static AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_at_exit() {
    let dirs = match AT_EXIT.lock() {
        Ok(mut d) => std::mem::take(&mut *d),
        Err(_) => return,
    };
    for d in dirs {
        remove_tree(&d);
    }
}

/// A fresh directory named `prefix…` under [`base`], removed when the process exits.
pub fn process_dir(prefix: &str) -> PathBuf {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    let base = base();
    #[allow(clippy::disallowed_methods)] // a scratch directory of the fuzzer's own
    std::fs::create_dir_all(&base).expect("the scratch base");
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&base)
        .expect("a scratch directory")
        .keep();
    AT_EXIT.lock().expect("the cleanup list").push(dir.clone());
    REGISTER.call_once(|| {
        // SAFETY: `remove_at_exit` is an `extern "C" fn()` that never unwinds (it takes
        // a lock without panicking and removes files); registering it has no other
        // precondition.
        // libFuzzer ends with `exit`, past every destructor: `atexit` is the hook left.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::atexit(remove_at_exit) };
        assert_eq!(rc, 0, "atexit");
    });
    dir
}

/// A fresh directory named `prefix…` under [`base`], removed when dropped.
pub fn input_dir(prefix: &str) -> tempfile::TempDir {
    let base = base();
    #[allow(clippy::disallowed_methods)] // a scratch directory of the fuzzer's own
    std::fs::create_dir_all(&base).expect("the scratch base");
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&base)
        .expect("a scratch directory")
}

/// Remove `dir` and everything in it, making directories searchable and writable first
/// (a test tree may hold a directory of mode 000). Never follows a symlink.
#[allow(clippy::disallowed_methods)] // a scratch directory of the fuzzer's own
pub fn remove_tree(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if std::fs::remove_dir_all(dir).is_ok() {
        return;
    }
    fn open_up(p: &Path) {
        let Ok(m) = std::fs::symlink_metadata(p) else {
            return;
        };
        if !m.is_dir() {
            return;
        }
        let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
        if let Ok(rd) = std::fs::read_dir(p) {
            for e in rd.flatten() {
                open_up(&e.path());
            }
        }
    }
    open_up(dir);
    let _ = std::fs::remove_dir_all(dir);
}
