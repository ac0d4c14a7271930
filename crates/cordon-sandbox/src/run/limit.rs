//! The bound on what a run's changes may take: the copy-on-write layers live on the file
//! system of cordon's state directory, and nothing else would stop a command from
//! filling it (and the merge after it from running out of space in the user's tree).
//!
//! Watched from outside the sandbox, cheaply: the file system's free space is read
//! every half second, and only when it has dropped by as much as the layers could still
//! grow (or every few seconds, since other writers may free space meanwhile) is the
//! layer walked to measure what the run's changes really take. When they reach the
//! limit, the run is stopped.

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

/// Kept free on the layers' file system when no limit is given: the smaller of 1 GiB
/// and 5 % of the file system (or half of what is free, when less is).
const RESERVE_MAX: u64 = 1 << 30;

/// The layers are measured at least this often, whatever the free space says.
const WALK_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Deepest level measured (the merge refuses deeper trees anyway).
const MAX_DEPTH: usize = 1024;

/// A watch over the layers of one run.
#[derive(Debug)]
pub(crate) struct ChangesWatch {
    uppers: Vec<OwnedFd>,
    limit: u64,
    start_avail: u64,
    /// Walk the layers once the file system has lost this much since the start.
    next: u64,
    /// When the layers were last measured.
    walked: std::time::Instant,
    /// Stop when the file system's free space falls below this, whoever took it: files
    /// the run deleted while still writing them take space no walk can find.
    floor: u64,
    /// The size the layers reached, once they passed the limit.
    pub(crate) reached: Option<u64>,
}

fn avail(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    let st = rustix::fs::fstatvfs(fd).ok()?;
    Some((
        st.f_bavail.saturating_mul(st.f_frsize),
        st.f_blocks.saturating_mul(st.f_frsize),
    ))
}

impl ChangesWatch {
    /// A watch over `uppers` with `limit` bytes, or by default all but a reserve of the
    /// free space. `None` when the layers cannot be opened (nothing to watch).
    pub(crate) fn new(uppers: &[PathBuf], limit: Option<u64>) -> Option<ChangesWatch> {
        let uppers: Vec<OwnedFd> = uppers
            .iter()
            .filter_map(|p| cordon_fs::Dir::open_ambient(p).ok().map(OwnedFd::from))
            .collect();
        let (start_avail, size) = avail(uppers.first()?.as_fd())?;
        // By default the changes may take what is free but a reserve; on a file system
        // already nearly full, half of what is left.
        let limit = limit.unwrap_or_else(|| {
            let reserve = RESERVE_MAX.min(size / 20);
            start_avail.saturating_sub(reserve).max(start_avail / 2)
        });
        let floor = RESERVE_MAX.min(size / 20).min(start_avail / 2);
        Some(ChangesWatch {
            uppers,
            limit,
            floor,
            start_avail,
            next: limit,
            walked: std::time::Instant::now(),
            reached: None,
        })
    }

    /// The limit in bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether the run's changes have reached the limit (measured only when the file
    /// system's free space says they could have).
    pub(crate) fn over(&mut self) -> bool {
        if self.reached.is_some() {
            return true;
        }
        let Some((now, _)) = self.uppers.first().and_then(|u| avail(u.as_fd())) else {
            return false;
        };
        let lost = self.start_avail.saturating_sub(now);
        if now < self.floor {
            self.reached = Some(lost);
            return true;
        }
        if lost < self.next && self.walked.elapsed() < WALK_EVERY {
            return false;
        }
        self.walked = std::time::Instant::now();
        let used: u64 = self.uppers.iter().map(|u| tree_bytes(u.as_fd(), 0)).sum();
        if used > self.limit {
            self.reached = Some(used);
            return true;
        }
        // The layers can grow by `limit - used` before they reach it.
        self.next = lost.saturating_add(self.limit - used);
        false
    }
}

/// Bytes allocated to the tree under `dir`, links not followed.
fn tree_bytes(dir: BorrowedFd<'_>, depth: usize) -> u64 {
    let Ok(entries) = Dir::read_from(dir) else {
        return 0;
    };
    let mut total = 0u64;
    let mut subdirs = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_owned();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        let Ok(st) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        total = total.saturating_add((st.st_blocks as u64).saturating_mul(512));
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            subdirs.push(name);
        }
    }
    if depth < MAX_DEPTH {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        for name in subdirs {
            if let Ok(sub) = rustix::fs::openat(dir, &name, flags, Mode::empty()) {
                total = total.saturating_add(tree_bytes(sub.as_fd(), depth + 1));
            }
        }
    }
    total
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn the_layers_are_measured_when_the_free_space_says_they_could_be_over() {
        let t = tempfile::tempdir().unwrap();
        let up = t.path().join("upper");
        std::fs::create_dir(&up).unwrap();
        let mut w = ChangesWatch::new(std::slice::from_ref(&up), Some(1 << 20)).unwrap();
        assert_eq!(w.limit(), 1 << 20);
        assert!(!w.over());
        std::fs::create_dir(up.join("d")).unwrap();
        let data = vec![7u8; 3 << 20];
        std::fs::write(up.join("d/big"), &data).unwrap();
        // Other writers on this file system may have freed space meanwhile: measure now.
        w.next = 0;
        assert!(w.over(), "3 MiB written against a 1 MiB limit");
        assert!(w.reached.unwrap() >= 3 << 20);
        // No limit given: all but a reserve of the free space.
        let d = ChangesWatch::new(std::slice::from_ref(&up), None).unwrap();
        assert!(d.limit() > 0);
    }
}
