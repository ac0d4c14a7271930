//! The pids cgroup that bounds how many processes a sandbox may have, whoever runs it.
//!
//! `RLIMIT_NPROC` does not hold when cordon runs as root: the kernel exempts a task
//! whose real uid is the host's root, and the sandbox maps uid 0 to it. A pids cgroup
//! holds for every user, so the helper makes one where it can:
//!
//! - **cgroup v1**: in the `pids` hierarchy, beneath cordon's own cgroup there (root can
//!   write it; other users usually cannot).
//! - **cgroup v2**: beside cordon's own cgroup, in its parent, when that parent enables
//!   the `pids` controller for its children and this user may write it (a delegated
//!   subtree, such as systemd's `user@UID.service`). Not in cordon's own cgroup: a v2
//!   cgroup with processes cannot enable controllers for its children.
//!
//! Both are found from `/proc/self/cgroup` and `/proc/self/mountinfo`; v2 is preferred
//! when both offer `pids`.
//!
//! # Lifetime and cost
//!
//! The caller makes `cordon-<pid>` for the helper right after starting it, while the
//! helper is still being executed, and writes `pids.max` when the spec is known. The
//! helper moves itself in when the spec arrives, before it makes any process of the
//! sandbox, so every one of them is counted. It moves one thread, itself, through v1's
//! `tasks`: moving a whole process through `cgroup.procs` waits for an RCU grace period
//! (6 to 8 ms measured here), moving the caller's own thread does not (0.05 ms); the
//! helper is single-threaded. When every process of the sandbox is gone, the helper
//! moves itself back and removes the cgroup, before it answers. A helper that never got
//! a spec, or that was killed, is reaped by the caller, who removes the cgroup then. A
//! cordon killed with SIGKILL leaves an empty cgroup behind: every run removes the empty
//! `cordon-*` cgroups beside its own that are more than a minute old (one in use refuses
//! removal: `EBUSY`).
//!
//! # Escape
//!
//! Leaving the cgroup means writing another cgroup's `cgroup.procs`. Inside the sandbox
//! `/sys/fs/cgroup` is read-only (the read-only view of `/`; under `full-access`, a
//! read-only bind of its own), Landlock grants no write there, in the fallback tier's
//! `full-access` included, the command holds no capability, and seccomp refuses mounts
//! and new cgroup namespaces. The descriptors the helper keeps are close-on-exec and its
//! processes are not dumpable.
//!
//! This module only finds, makes, fills and removes cgroups; it must never decide a
//! limit (`limits.rs` does) and never move the caller's own process (doctor's probe
//! only makes and removes an empty cgroup).

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Empty `cordon-*` cgroups older than this are leftovers of a killed helper.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// Which cgroup hierarchy holds the `pids` controller used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Version {
    V1,
    V2,
}

impl Version {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "cgroup-v1",
            Version::V2 => "cgroup-v2",
        }
    }

    /// The file through which a process moves itself into a cgroup. Moving a whole
    /// process (`cgroup.procs`) takes the kernel's thread-group lock for writing, which
    /// waits for an RCU grace period when no migration happened lately: 6 to 8 ms on
    /// this project's VM, more than all the rest of a run. In v1, moving one thread
    /// (`tasks`) that is the caller itself skips that lock (0.1 ms), and the helper is a
    /// single thread, so the thread is the process. v2 moves threads only within
    /// threaded subtrees: there, `cgroup.procs` and its cost.
    fn self_file(self) -> &'static str {
        match self {
            Version::V1 => "tasks",
            Version::V2 => "cgroup.procs",
        }
    }
}

/// Where cordon can make its cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parent {
    pub version: Version,
    /// The directory to make them in.
    pub dir: PathBuf,
    /// The cgroup this process is in (to come back to).
    pub home: PathBuf,
}

/// One line of `/proc/self/mountinfo`: (mount root, mount point, fstype, super options).
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
fn mounts() -> Vec<(String, PathBuf, String, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some((
                unescape(f.get(3)?),
                PathBuf::from(unescape(f.get(4)?)),
                (*r.first()?).to_string(),
                (*r.get(2)?).to_string(),
            ))
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && let Some(Ok(v)) = s.get(i + 1..i + 4).map(|o| u8::from_str_radix(o, 8))
        {
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount points of every cgroup hierarchy, collapsed to `/sys/fs/cgroup` where they
/// are beneath it (for the plan's read-only bind and the fallback tier's Landlock rules).
pub(crate) fn mount_points() -> Vec<PathBuf> {
    let std_dir = Path::new("/sys/fs/cgroup");
    let mut out: Vec<PathBuf> = mounts()
        .into_iter()
        .filter(|(_, _, fs, _)| fs == "cgroup" || fs == "cgroup2")
        .map(|(_, mp, _, _)| {
            if mp.starts_with(std_dir) {
                std_dir.to_path_buf()
            } else {
                mp
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `base` joined with the cgroup path `cg` taken relative to the mount's root `root`.
fn beneath(base: &Path, root: &str, cg: &str) -> Option<PathBuf> {
    let rel = Path::new(cg).strip_prefix(root).ok()?;
    Some(if rel.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    })
}

/// Whether this user may make cgroups in `dir` and move processes through its
/// `cgroup.procs`.
fn writable(dir: &Path) -> bool {
    use nix::unistd::{AccessFlags, faccessat};
    let can = |p: &Path, how| {
        faccessat(
            nix::fcntl::AT_FDCWD,
            p,
            how,
            nix::fcntl::AtFlags::AT_EACCESS,
        )
        .is_ok()
    };
    can(dir, AccessFlags::W_OK | AccessFlags::X_OK)
        && can(&dir.join("cgroup.procs"), AccessFlags::W_OK)
}

/// Find where this process may make a pids cgroup; `Err` says why nowhere.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub(crate) fn find() -> Result<Parent, String> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("/proc/self/cgroup cannot be read ({e})"))?;
    let mounts = mounts();
    let mut why: Vec<String> = Vec::new();
    // cgroup v2: "0::/path".
    if let Some(path) = own.lines().find_map(|l| l.strip_prefix("0::"))
        && let Some((root, mp, _, _)) = mounts.iter().find(|m| m.2 == "cgroup2")
        && let Some(home) = beneath(mp, root, path)
    {
        let dir = if path == "/" {
            home.clone()
        } else {
            home.parent().map(Path::to_path_buf).unwrap_or(home.clone())
        };
        let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|c| c == "pids");
        if !enabled {
            why.push(format!(
                "cgroup v2: {} does not enable the pids controller for its children",
                dir.display()
            ));
        } else if !writable(&dir) {
            why.push(format!(
                "cgroup v2: {} is not delegated to this user",
                dir.display()
            ));
        } else {
            return Ok(Parent {
                version: Version::V2,
                dir,
                home,
            });
        }
    }
    // cgroup v1: "N:pids:/path" (the controller may share a hierarchy with others).
    let v1 = own.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        ctl.split(',').any(|c| c == "pids").then_some(path)
    });
    match v1 {
        Some(path) => {
            let mount = mounts
                .iter()
                .find(|(_, _, fs, opts)| fs == "cgroup" && opts.split(',').any(|o| o == "pids"));
            match mount.and_then(|(root, mp, _, _)| beneath(mp, root, path)) {
                Some(dir) if writable(&dir) => {
                    return Ok(Parent {
                        version: Version::V1,
                        home: dir.clone(),
                        dir,
                    });
                }
                Some(dir) => why.push(format!(
                    "cgroup v1: {} is not writable by this user",
                    dir.display()
                )),
                None => why.push("cgroup v1: the pids hierarchy is not mounted".into()),
            }
        }
        None if why.is_empty() => why.push("no cgroup hierarchy offers the pids controller".into()),
        None => {}
    }
    Err(why.join("; "))
}

fn write_fd(fd: &OwnedFd, text: &str) -> Result<(), Errno> {
    let n = nix::unistd::write(fd, text.as_bytes())?;
    if n == text.len() {
        Ok(())
    } else {
        Err(Errno::EIO)
    }
}

// cgroupfs: a kernel interface no run can reach.
#[allow(clippy::disallowed_methods)]
fn open_dir(p: &Path) -> Result<OwnedFd, Errno> {
    nix::fcntl::open(
        p,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

fn open_write(dir: &OwnedFd, name: &str) -> Result<OwnedFd, Errno> {
    openat(dir, name, OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty())
}

/// A run's cgroup, made by the caller (`run.rs`) while the helper starts, and entered
/// by the helper: the caller has the time to spare (the helper is still being
/// executed), the helper does not (its start is the longest path of a run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Made {
    pub version: Version,
    /// Where it was made (beside or beneath `home`).
    pub dir: PathBuf,
    /// Its name in `dir`.
    pub name: String,
    /// The cgroup the helper comes from, and goes back to.
    pub home: PathBuf,
}

impl Made {
    /// Make a cgroup for the helper `pid` and clear the stale ones beside it (left by
    /// helpers killed with cordon). `Err` says why there is none.
    // cgroupfs: a kernel interface no run can reach.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn create(pid: u32) -> Result<Made, String> {
        let at = find()?;
        let mut made = None;
        for i in 0..8 {
            let name = match i {
                0 => format!("cordon-{pid}"),
                _ => format!("cordon-{pid}-{i}"),
            };
            match std::fs::DirBuilder::new().create(at.dir.join(&name)) {
                Ok(()) => {
                    made = Some(name);
                    break;
                }
                // A leftover of a killed helper that had this PID, or a helper of
                // another PID namespace: another name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(format!(
                        "cannot create a cgroup in {}: {e}",
                        at.dir.display()
                    ));
                }
            }
        }
        let Some(name) = made else {
            return Err(format!(
                "cannot create a cgroup in {}: every name is taken",
                at.dir.display()
            ));
        };
        let made = Made {
            version: at.version,
            dir: at.dir,
            name,
            home: at.home,
        };
        made.clear_stale();
        Ok(made)
    }

    /// Its path on the host.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    /// Allow at most `n` processes (threads included) in it from now on.
    // cgroupfs: a kernel interface no run can reach.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn set_max(&self, n: u64) -> Result<(), String> {
        std::fs::write(self.path().join("pids.max"), n.to_string())
            .map_err(|e| format!("cannot set pids.max of {}: {e}", self.path().display()))
    }

    /// Remove it if it is empty (best effort: one still in use, or a leftover, is
    /// removed by a later run).
    // cgroupfs: a kernel interface no run can reach.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn remove(&self) {
        let _ = std::fs::remove_dir(self.path());
    }

    /// Remove empty `cordon-*` cgroups beside this one that have outlived any start-up.
    // cgroupfs: a kernel interface no run can reach.
    #[allow(clippy::disallowed_methods)]
    fn clear_stale(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = std::time::SystemTime::now();
        for entry in rd.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            if !name.starts_with("cordon-") || name == self.name {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > STALE_AFTER));
            if old {
                // One still in use refuses (EBUSY) and stays.
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// The helper, inside its run's cgroup.
#[derive(Debug)]
pub(crate) struct Joined {
    pub version: Version,
    /// The cgroup's path on the host.
    pub path: PathBuf,
    name: String,
    dir: OwnedFd,
    home: OwnedFd,
}

impl Joined {
    /// Move this process into `made`. It must be single-threaded (its one thread is
    /// moved), and still see the host's cgroup mounts.
    pub(crate) fn enter(made: &Made) -> Result<Joined, String> {
        let ctx = |what: &str, e: Errno| format!("{what} {}: {}", made.path().display(), e.desc());
        let dir = open_dir(&made.dir).map_err(|e| ctx("cannot open the cgroup beside", e))?;
        let home = open_dir(&made.home)
            .and_then(|h| open_write(&h, made.version.self_file()))
            .map_err(|e| ctx("cannot open the cgroup around", e))?;
        openat(
            &dir,
            made.name.as_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .and_then(|cg| open_write(&cg, made.version.self_file()))
        .and_then(|f| write_fd(&f, "0"))
        .map_err(|e| ctx("cannot enter the cgroup", e))?;
        Ok(Joined {
            version: made.version,
            path: made.path(),
            name: made.name.clone(),
            dir,
            home,
        })
    }

    /// Move back where this process came from and remove the cgroup. Call it once every
    /// process of the sandbox is gone, before cordon hears of it (cordon may exit at
    /// once, and this process with it).
    pub(crate) fn leave(self) {
        let _ = write_fd(&self.home, "0");
        let _ = nix::unistd::unlinkat(
            &self.dir,
            self.name.as_str(),
            nix::unistd::UnlinkatFlags::RemoveDir,
        );
    }
}

/// Can this process make a pids cgroup? Makes an empty one and removes it at once
/// (nothing moves into it), for `cordon doctor`.
// cgroupfs: a kernel interface no run can reach.
#[allow(clippy::disallowed_methods)]
pub(crate) fn probe() -> Result<Parent, String> {
    let at = find()?;
    let dir = at.dir.join(format!("cordon-probe-{}", std::process::id()));
    std::fs::create_dir(&dir)
        .map_err(|e| format!("cannot create a cgroup in {}: {e}", at.dir.display()))?;
    let max = std::fs::write(dir.join("pids.max"), "1")
        .map_err(|e| format!("cannot set pids.max in {}: {e}", at.dir.display()));
    let _ = std::fs::remove_dir(&dir);
    max.map(|()| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/x\134"), r"/x\");
    }

    #[test]
    fn cgroup_paths_are_taken_beneath_the_mount_root() {
        let base = Path::new("/sys/fs/cgroup/pids");
        assert_eq!(
            beneath(base, "/", "/user.slice"),
            Some(base.join("user.slice"))
        );
        assert_eq!(
            beneath(base, "/docker/abc", "/docker/abc/sub"),
            Some(base.join("sub"))
        );
        assert_eq!(beneath(base, "/docker/abc", "/elsewhere"), None);
    }
}
