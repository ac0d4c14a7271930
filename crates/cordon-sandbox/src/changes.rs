//! Where a run's changes to its writable roots wait until cordon merges them.
//!
//! In the full tier each writable root is mounted through overlayfs: the host's tree is
//! the lower layer, and everything the command creates, changes or deletes lands in an
//! upper directory that only cordon reads. Nothing the command writes reaches the host's
//! tree while it runs; after it has ended and every process of the sandbox is gone,
//! cordon merges the upper directory back (`merge.rs`), entry by entry, refusing what
//! would run on the host later.
//!
//! One run's layers are a *change set*: a directory `<base>/<id>/` holding `layer-N/upper`
//! and `layer-N/work` for each root, a `meta.json` naming the roots, and a `lock` file
//! that the running cordon holds (`flock`). A change set whose lock is free belongs to a
//! run that ended without merging (cordon was killed): `cordon changes` lists it, shows
//! it, merges it on request or discards it. A killed run therefore merges nothing.
//!
//! The base is `changes/` in cordon's state directory (`~/.local/state/cordon/changes`), or
//! `/var/tmp/cordon-changes-<uid>` when that would lie inside a writable root (overlayfs
//! refuses an upper layer inside its lower one, and the command must not see it). Merging
//! is a rename when the base is on the root's file system, and a copy otherwise.

use crate::error::SandboxError;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The copy-on-write layer of one writable root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// The writable root on the host (the overlay's lower layer and mount point).
    pub root: PathBuf,
    /// Where the run's changes to it are written.
    pub upper: PathBuf,
    /// overlayfs's work directory (same file system as `upper`).
    pub work: PathBuf,
    /// When not empty, the root is writable only for these files of it (made writable
    /// alone, `SandboxBuilder::writable_file`): they are all that is merged, and only as
    /// regular files; every other change stays in the layer, for a human. Recorded, so
    /// that the change set of a killed run keeps the limit too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PathBuf>,
}

/// A point in time, comparable with file change times (the realtime clock they are
/// taken from, finely or coarsely).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Stamp {
    /// Seconds since the epoch.
    pub secs: i64,
    /// Nanoseconds.
    pub nanos: i64,
}

impl Stamp {
    /// Now, finely: no file changed before this moment carries a later change time.
    pub fn now() -> Stamp {
        Stamp::of(rustix::time::ClockId::Realtime)
    }

    /// Now by the coarse clock most change times are taken from: a file changed after
    /// this reads a change time at least this late (whether stamped coarsely or finely).
    pub fn coarse_now() -> Stamp {
        Stamp::of(rustix::time::ClockId::RealtimeCoarse)
    }

    fn of(clock: rustix::time::ClockId) -> Stamp {
        let t = rustix::time::clock_gettime(clock);
        Stamp {
            secs: t.tv_sec,
            nanos: t.tv_nsec,
        }
    }
}

/// What `meta.json` of a change set records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeMeta {
    /// Seconds since the epoch when the run started.
    pub created: u64,
    /// When the run started, as file change times count it: a host entry changed at or
    /// after it was changed by the host during the run, and the host's version wins. A
    /// set written by an older cordon has none; `created` stands in.
    #[serde(default)]
    pub started: Option<Stamp>,
    /// The run asked for its changes to be held for review (`--hold`).
    #[serde(default)]
    pub hold: bool,
    /// The process id of the cordon that ran it.
    pub pid: u32,
    /// The command, as given.
    pub command: Vec<String>,
    /// One layer per writable root.
    pub layers: Vec<Layer>,
}

/// The change set of a run in progress. Dropping it without [`ChangeSet::remove`] keeps
/// it on disk for `cordon changes`.
#[derive(Debug)]
pub struct ChangeSet {
    dir: PathBuf,
    meta: ChangeMeta,
    // Held (flock) for as long as this run owns the change set.
    _lock: File,
}

fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> SandboxError {
    move |e| SandboxError::io(what.to_string(), e)
}

/// The directory holding change sets for this user: `changes/` in cordon's state
/// directory (`cordon_policy::state_dir::state_dir`), unless that overlaps a writable root; then
/// `/var/tmp/cordon-changes-<uid>`.
pub fn changes_base(roots: &[PathBuf]) -> PathBuf {
    let mut bases = changes_bases(roots);
    bases.swap_remove(0)
}

/// The places a change set may go, best first: `changes/` in the state directory unless
/// it overlaps a writable root, then `/var/tmp/cordon-changes-<uid>`.
pub fn changes_bases(roots: &[PathBuf]) -> Vec<PathBuf> {
    let overlaps = |p: &Path| roots.iter().any(|r| p.starts_with(r) || r.starts_with(p));
    let mut out = Vec::with_capacity(2);
    if let Some(state) = cordon_policy::state_dir::state_dir() {
        let state = std::fs::canonicalize(&state)
            .unwrap_or(state)
            .join("changes");
        if !overlaps(&state) {
            out.push(state);
        }
    }
    out.push(PathBuf::from(format!(
        "/var/tmp/cordon-changes-{}",
        nix::unistd::geteuid().as_raw()
    )));
    out
}

/// Where this user's change sets go by default, and whether overlayfs can keep an upper
/// layer there (for `cordon doctor`). Creates the directory when missing.
pub fn changes_home() -> (PathBuf, bool) {
    let bases = changes_bases(&[]);
    for base in &bases {
        if private_dir(base).is_ok() && keeps_user_xattrs(base) {
            return (base.clone(), true);
        }
    }
    (bases[0].clone(), false)
}

/// Whether `dir`'s file system keeps `user.` extended attributes, which overlayfs needs
/// for an upper layer in a user namespace (NFS, for one, does not).
pub(crate) fn keeps_user_xattrs(dir: &Path) -> bool {
    rustix::fs::setxattr(
        dir,
        "user.cordon.probe",
        b"1",
        rustix::fs::XattrFlags::empty(),
    )
    .is_ok()
}

/// Create `dir` (and its parents) as this user's, mode 0700, and check that what is
/// there is a directory this user owns that nobody else can write: a base prepared by
/// someone else (in `/var/tmp`) could be swapped under cordon.
fn private_dir(dir: &Path) -> Result<(), SandboxError> {
    cordon_fs::Dir::private_ambient(dir)
        .map(drop)
        .map_err(|e| SandboxError::setup(format!("refusing to keep changes there: {e}")))
}

impl ChangeSet {
    /// Make the change set for a run over `roots` in the first of `bases` whose file
    /// system can hold an overlayfs upper layer. `files` are the files made writable
    /// alone: the layer of the root that is each one's directory merges only them.
    pub fn create_in(
        bases: &[PathBuf],
        roots: &[PathBuf],
        files: &[PathBuf],
        command: &[String],
    ) -> Result<Self, SandboxError> {
        let mut last = None;
        for base in bases {
            match ChangeSet::create(base, roots, files, command) {
                Ok(set) if keeps_user_xattrs(set.dir()) => return Ok(set),
                Ok(set) => {
                    last = Some(SandboxError::setup(format!(
                        "the file system of {} does not keep user extended attributes, which the copy-on-write workspace needs",
                        base.display()
                    )));
                    let _ = set.remove();
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| SandboxError::setup("no directory can hold the run's changes")))
    }

    /// Make the change set for a run over `roots`, under `base`: the spare one when
    /// there is one (see [`ChangeSet::recycle`]), else a new one. `files` as for
    /// [`ChangeSet::create_in`].
    pub fn create(
        base: &Path,
        roots: &[PathBuf],
        files: &[PathBuf],
        command: &[String],
    ) -> Result<Self, SandboxError> {
        // Taken before the command can run: everything it touches is touched after.
        let started = Stamp::now();
        private_dir(base)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let pid = std::process::id();
        let name = |n: u32| base.join(format!("{}-{pid}-{n}", now.as_secs()));
        let (dir, lock) = match take_spare(base, roots.len(), &name) {
            Some(taken) => taken,
            None => make_set(roots.len(), &name)?,
        };
        let layers = roots
            .iter()
            .enumerate()
            .map(|(i, root)| {
                let l = dir.join(format!("layer-{i}"));
                Layer {
                    root: root.clone(),
                    upper: l.join("upper"),
                    work: l.join("work"),
                    files: files
                        .iter()
                        .filter(|f| f.parent() == Some(root.as_path()))
                        .cloned()
                        .collect(),
                }
            })
            .collect();
        let meta = ChangeMeta {
            created: now.as_secs(),
            started: Some(started),
            hold: false,
            pid,
            command: command.to_vec(),
            layers,
        };
        let json = serde_json::to_vec_pretty(&meta)
            .map_err(|e| SandboxError::setup(format!("cannot encode the change set: {e}")))?;
        write_in_place(&dir.join("meta.json"), &json)
            .map_err(io(format_args!("cannot write {}/meta.json", dir.display())))?;
        Ok(ChangeSet {
            dir,
            meta,
            _lock: lock,
        })
    }

    /// The layers, one per writable root.
    pub fn layers(&self) -> &[Layer] {
        &self.meta.layers
    }

    /// What `meta.json` records.
    pub fn meta(&self) -> &ChangeMeta {
        &self.meta
    }

    /// Keep the set for review rather than merge it (`--hold`): recorded in its
    /// `meta.json`, so that `cordon changes` says why it waits.
    pub fn mark_held(&mut self) -> Result<(), SandboxError> {
        self.meta.hold = true;
        let json = serde_json::to_vec_pretty(&self.meta)
            .map_err(|e| SandboxError::setup(format!("cannot encode the change set: {e}")))?;
        write_in_place(&self.dir.join("meta.json"), &json).map_err(io(format_args!(
            "cannot write {}/meta.json",
            self.dir.display()
        )))
    }

    /// Where the change set is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// No layer holds any change.
    pub fn is_untouched(&self) -> bool {
        self.meta
            .layers
            .iter()
            .all(|l| std::fs::read_dir(&l.upper).is_ok_and(|mut rd| rd.next().is_none()))
    }

    /// Delete the change set (after merging it, or when the command never ran).
    pub fn remove(self) -> Result<(), SandboxError> {
        remove_tree(&self.dir)
    }

    /// End a run that left every layer untouched: keep the set as the spare for the next
    /// run over as many roots, which takes it with one rename instead of making and
    /// removing five directories and two files (about 1.3 ms of a run's wall time on
    /// ext4). Removed instead when it was touched, when overlayfs left anything in its
    /// work directory, or when a spare is already there.
    pub fn recycle(self) -> Result<(), SandboxError> {
        let clean = self.is_untouched()
            && self.meta.layers.iter().all(|l| {
                // overlayfs's own scratch directory, empty after the mount is gone.
                cordon_fs::Dir::open_ambient(&l.work)
                    .and_then(|w| {
                        if w.exists(Path::new("work")) {
                            w.remove(Path::new("work"))
                        } else {
                            Ok(())
                        }
                    })
                    .is_ok()
            });
        if clean && let Some(base) = self.dir.parent() {
            let spare = base.join(spare_name(self.meta.layers.len()));
            if rename_new(&self.dir, &spare).is_ok() {
                return Ok(());
            }
        }
        self.remove()
    }
}

/// The name of the spare change set for runs over `layers` roots (at most one each).
fn spare_name(layers: usize) -> String {
    format!("{SPARE_PREFIX}{layers}")
}

/// What the names of spare change sets begin with; they are never listed as left.
const SPARE_PREFIX: &str = "spare-";

/// The most a change set's `meta.json` may hold to be read.
const MAX_META: u64 = 1024 * 1024;

/// `rename(from, to)` within one directory that fails rather than replace anything at
/// `to` (no symlink followed on the way to either).
fn rename_new(from: &Path, to: &Path) -> Result<(), cordon_fs::FsError> {
    let (Some(dir), Some(a), Some(b)) = (from.parent(), from.file_name(), to.file_name()) else {
        return Err(cordon_fs::FsError::from_io(
            "rename",
            from,
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    };
    let d = cordon_fs::Dir::open_ambient(dir)?;
    d.rename_noreplace(Path::new(a), &d, Path::new(b))
}

/// Write `data` as the whole content of `path` over what a spare set's file held, without
/// truncating it first: truncation frees the file's block and writing allocates another,
/// and on a file system mounted with `discard` each free is a discard sent to the disk.
/// Never through a symlink.
fn write_in_place(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    let mut f = cordon_fs::Dir::open_ambient(dir)?.open_rw(Path::new(name), 0o600)?;
    f.write_all(data)?;
    f.set_len(data.len() as u64)
}

/// Open and lock a change set's `lock` file (never through a symlink).
fn lock_set(dir: &Path) -> Result<File, SandboxError> {
    let lock = cordon_fs::Dir::open_ambient(dir)
        .and_then(|d| d.open_rw(Path::new("lock"), 0o600))
        .map_err(|e| {
            SandboxError::io(
                format!("cannot create the lock of {}", dir.display()),
                e.into(),
            )
        })?;
    lock.try_lock()
        .map_err(|e| SandboxError::setup(format!("cannot lock {}: {e}", dir.display())))?;
    Ok(lock)
}

/// A directory (not a symlink) this user owns, mode 0700, with nothing in it and no
/// extended attribute but the file system id overlayfs keeps on an upper layer: what a
/// layer's directories are when cordon makes them and after a run that changed nothing.
fn pristine_dir(p: &Path) -> bool {
    if !own_private_dir(p) {
        return false;
    }
    let mut names = [0u8; 128];
    // Too many names for the buffer is an error: not pristine either.
    let attrs_ok = rustix::fs::llistxattr(p, &mut names).is_ok_and(|n| {
        names[..n.min(names.len())]
            .split(|b| *b == 0)
            .all(|name| name.is_empty() || name == b"user.overlay.uuid")
    });
    attrs_ok && std::fs::read_dir(p).is_ok_and(|mut rd| rd.next().is_none())
}

/// A directory itself (not a symlink to one) that this user owns, mode 0700.
fn own_private_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|meta| {
        meta.is_dir()
            && meta.uid() == nix::unistd::geteuid().as_raw()
            && meta.mode() & 0o7777 == 0o700
    })
}

/// Take the spare change set for `layers` roots, renamed to the first free `name(n)`,
/// locked. A spare that is not exactly what [`ChangeSet::recycle`] leaves (empty layers,
/// cordon's modes, no attributes) is removed, never used.
fn take_spare(
    base: &Path,
    layers: usize,
    name: &dyn Fn(u32) -> PathBuf,
) -> Option<(PathBuf, File)> {
    let spare = base.join(spare_name(layers));
    let mut n = 0u32;
    let dir = loop {
        let d = name(n);
        match rename_new(&spare, &d) {
            Ok(()) => break d,
            Err(e)
                if e.raw_os_error() == Some(rustix::io::Errno::EXIST.raw_os_error())
                    && n < 1000 =>
            {
                n += 1
            }
            // None there (the usual case when runs overlap), or unusable.
            Err(_) => return None,
        }
    };
    // Every directory on the way is checked itself: a symlink in place of the set or of a
    // layer would put the layers somewhere else.
    let sound = own_private_dir(&dir)
        && (0..layers).all(|i| {
            let l = dir.join(format!("layer-{i}"));
            own_private_dir(&l) && pristine_dir(&l.join("upper")) && pristine_dir(&l.join("work"))
        });
    match sound.then(|| lock_set(&dir).ok()).flatten() {
        Some(lock) => Some((dir, lock)),
        None => {
            let _ = remove_tree(&dir);
            None
        }
    }
}

/// Make a new change set directory with `layers` empty layers at the first free
/// `name(n)`, locked.
fn make_set(layers: usize, name: &dyn Fn(u32) -> PathBuf) -> Result<(PathBuf, File), SandboxError> {
    let mut n = 0u32;
    let dir = loop {
        let d = name(n);
        let (Some(base), Some(leaf)) = (d.parent(), d.file_name()) else {
            return Err(SandboxError::setup(
                "a change set needs a directory to live in",
            ));
        };
        let made =
            cordon_fs::Dir::open_ambient(base).and_then(|b| b.create_dir(Path::new(leaf), 0o700));
        match made {
            Ok(()) => break d,
            Err(e)
                if e.raw_os_error() == Some(rustix::io::Errno::EXIST.raw_os_error())
                    && n < 1000 =>
            {
                n += 1
            }
            Err(e) => {
                return Err(SandboxError::io(
                    format!("cannot create {}", d.display()),
                    e.into(),
                ));
            }
        }
    };
    let lock = lock_set(&dir)?;
    let set = cordon_fs::Dir::open_ambient(&dir)
        .map_err(|e| SandboxError::io(format!("cannot open {}", dir.display()), e.into()))?;
    for i in 0..layers {
        for sub in ["upper", "work"] {
            let rel = PathBuf::from(format!("layer-{i}")).join(sub);
            set.create_dir_all(&rel, 0o700).map_err(|e| {
                SandboxError::io(
                    format!("cannot create {}", dir.join(&rel).display()),
                    e.into(),
                )
            })?;
        }
    }
    Ok((dir, lock))
}

/// A change set left on disk: by a run that was killed, or by one still running.
#[derive(Debug, Clone)]
pub struct LeftChanges {
    /// Its directory; the last component is its id.
    pub dir: PathBuf,
    /// What the run recorded.
    pub meta: ChangeMeta,
    /// A cordon still runs it (its lock is held).
    pub running: bool,
}

impl ChangeMeta {
    /// When the run started, for the merge's three-way check.
    pub fn horizon(&self) -> Stamp {
        self.started.unwrap_or(Stamp {
            secs: i64::try_from(self.created).unwrap_or(i64::MAX),
            nanos: 0,
        })
    }
}

impl LeftChanges {
    /// The id `cordon changes` uses.
    pub fn id(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Every change set under `base`, oldest first. Unreadable entries are skipped.
pub fn list_left(base: &Path) -> Result<Vec<LeftChanges>, SandboxError> {
    let rd = match std::fs::read_dir(base) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(SandboxError::io(
                format!("cannot read {}", base.display()),
                e,
            ));
        }
    };
    let mut out = Vec::new();
    for entry in rd.flatten() {
        if entry
            .file_name()
            .as_encoded_bytes()
            .starts_with(SPARE_PREFIX.as_bytes())
        {
            continue;
        }
        let dir = entry.path();
        let Ok(raw) = cordon_fs::read_regular(&dir.join("meta.json"), MAX_META) else {
            continue;
        };
        let Ok(meta) = serde_json::from_slice::<ChangeMeta>(&raw) else {
            continue;
        };
        // Opened beneath the set's directory, never through a symlink, without blocking.
        let running =
            match cordon_fs::Dir::open_ambient(&dir).and_then(|d| d.open_read(Path::new("lock"))) {
                Ok(f) => f.try_lock().is_err(),
                Err(_) => false,
            };
        out.push(LeftChanges { dir, meta, running });
    }
    out.sort_by_key(|a| (a.meta.created, a.id()));
    Ok(out)
}

/// Take over a left change set to merge or discard it: refused while its run holds it.
pub fn claim(left: &LeftChanges) -> Result<ChangeSet, SandboxError> {
    // Made again when missing (a removal that stopped part way may have taken it): a
    // set must always be claimable, to be applied or discarded.
    let lock = cordon_fs::Dir::open_ambient(&left.dir)
        .and_then(|d| d.open_rw(Path::new("lock"), 0o600))
        .map_err(|e| {
            SandboxError::io(
                format!("cannot open the lock of {}", left.dir.display()),
                e.into(),
            )
        })?;
    lock.try_lock().map_err(|_| {
        SandboxError::setup(format!(
            "the change set {} belongs to a run that is still going",
            left.id()
        ))
    })?;
    Ok(ChangeSet {
        dir: left.dir.clone(),
        meta: left.meta.clone(),
        _lock: lock,
    })
}

/// Remove a tree this user owns, including directories the run made unreadable or
/// unwritable (`chmod 0` on a directory must not keep its contents around), relative to
/// directory descriptors: no depth of names is too long for it.
pub(crate) fn remove_tree(path: &Path) -> Result<(), SandboxError> {
    cordon_fs::remove_tree_at(path)
        .map_err(|e| SandboxError::io(format!("cannot remove {}", path.display()), e.into()))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    /// A temporary directory with a change-set base (`changes`, not yet made) and one
    /// workspace root (`ws`).
    fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("changes");
        let root = t.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        (t, base, root)
    }

    #[test]
    fn a_change_set_is_private_locked_and_listed_while_left() {
        let (_dir, base, root) = fixture();
        let set =
            ChangeSet::create(&base, std::slice::from_ref(&root), &[], &["true".into()]).unwrap();
        assert_eq!(set.layers().len(), 1);
        assert!(set.layers()[0].upper.is_dir() && set.layers()[0].work.is_dir());
        let mode = std::fs::metadata(&base).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let listed = list_left(&base).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].running, "the lock is held by the live run");
        assert!(claim(&listed[0]).is_err());
        drop(set);
        let listed = list_left(&base).unwrap();
        assert!(!listed[0].running);
        assert_eq!(listed[0].meta.layers[0].root, root);
        let claimed = claim(&listed[0]).unwrap();
        claimed.remove().unwrap();
        assert!(list_left(&base).unwrap().is_empty());
    }

    #[test]
    fn an_untouched_set_is_the_next_runs_and_never_listed_as_left() {
        let (_dir, base, root) = fixture();
        let roots = std::slice::from_ref(&root);
        let first = ChangeSet::create(&base, roots, &[], &["true".into()]).unwrap();
        let upper = std::fs::symlink_metadata(&first.layers()[0].upper).unwrap();
        // What overlayfs leaves after a clean run: its work directory, and the id of the
        // file system on the upper layer.
        std::fs::create_dir(first.layers()[0].work.join("work")).unwrap();
        rustix::fs::setxattr(
            &first.layers()[0].upper,
            "user.overlay.uuid",
            &[7u8; 16],
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
        first.recycle().unwrap();
        let spare = base.join("spare-1");
        assert!(spare.is_dir());
        assert!(
            list_left(&base).unwrap().is_empty(),
            "a spare is no run's leftover"
        );

        let second = ChangeSet::create(&base, roots, &[], &["ls".into()]).unwrap();
        assert!(!spare.exists(), "the spare was taken");
        let taken = std::fs::symlink_metadata(&second.layers()[0].upper).unwrap();
        assert_eq!(taken.ino(), upper.ino(), "the same directories, renamed");
        let listed = list_left(&base).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].running);
        assert_eq!(listed[0].meta.command, ["ls"], "meta.json is the new run's");

        // A touched set is never kept.
        std::fs::write(second.layers()[0].upper.join("f"), "x").unwrap();
        second.recycle().unwrap();
        assert!(!spare.exists());
        assert!(list_left(&base).unwrap().is_empty());
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 0);
    }

    #[test]
    fn a_spare_that_is_not_pristine_is_removed_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, base, root) = fixture();
        let roots = std::slice::from_ref(&root);
        let spare = base.join("spare-1");
        type Spoil = fn(&Path);
        let spoils: [(&str, Spoil); 4] = [
            ("a file in the upper layer", |u| {
                std::fs::write(u.join("x"), "1").unwrap()
            }),
            ("another mode on the upper layer", |u| {
                std::fs::set_permissions(u, std::fs::Permissions::from_mode(0o777)).unwrap()
            }),
            ("an attribute on the upper layer", |u| {
                rustix::fs::setxattr(u, "user.planted", b"1", rustix::fs::XattrFlags::empty())
                    .unwrap()
            }),
            ("a symlink in place of the upper layer", |u| {
                std::fs::remove_dir(u).unwrap();
                std::os::unix::fs::symlink("/", u).unwrap();
            }),
        ];
        for (what, spoil) in spoils {
            let set = ChangeSet::create(&base, roots, &[], &["true".into()]).unwrap();
            set.recycle().unwrap();
            assert!(spare.is_dir(), "{what}");
            spoil(&spare.join("layer-0/upper"));
            let set = ChangeSet::create(&base, roots, &[], &["true".into()]).unwrap();
            let upper = &set.layers()[0].upper;
            // Checked here without the code under test: had the spoilt spare been used, one
            // of these would fail.
            let meta = std::fs::symlink_metadata(upper).unwrap();
            assert!(meta.is_dir() && meta.mode() & 0o777 == 0o700, "{what}");
            assert_eq!(std::fs::read_dir(upper).unwrap().count(), 0, "{what}");
            let mut names = [0u8; 256];
            assert_eq!(
                rustix::fs::llistxattr(upper, &mut names).unwrap(),
                0,
                "{what}"
            );
            assert!(!spare.exists(), "{what}: the spoilt spare is gone");
            assert_eq!(
                std::fs::read_dir(&base).unwrap().count(),
                1,
                "{what}: only the new set is left"
            );
            set.remove().unwrap();
        }
    }

    #[test]
    fn a_spare_reached_through_a_symlink_is_not_used() {
        let (t, base, root) = fixture();
        let roots = std::slice::from_ref(&root);
        let spare = base.join("spare-1");
        // Pristine-looking layers elsewhere, reached through a symlinked set or layer.
        let elsewhere = t.path().join("elsewhere");
        for (what, link) in [
            ("the set", spare.clone()),
            ("a layer", spare.join("layer-0")),
        ] {
            ChangeSet::create(&base, roots, &[], &["true".into()])
                .unwrap()
                .recycle()
                .unwrap();
            let _ = std::fs::remove_dir_all(&elsewhere);
            std::fs::create_dir(&elsewhere).unwrap();
            std::fs::rename(&link, elsewhere.join("moved")).unwrap();
            std::os::unix::fs::symlink(elsewhere.join("moved"), &link).unwrap();
            let set = ChangeSet::create(&base, roots, &[], &["true".into()]).unwrap();
            let upper = &set.layers()[0].upper;
            let canonical = std::fs::canonicalize(upper).unwrap();
            assert!(
                !canonical.starts_with(&elsewhere),
                "{what}: the run's layer is {} (through the link)",
                canonical.display()
            );
            assert!(
                !std::fs::symlink_metadata(set.dir()).unwrap().is_symlink(),
                "{what}"
            );
            set.remove().unwrap();
            let _ = std::fs::remove_file(&link);
            let _ = std::fs::remove_dir_all(&spare);
        }
    }

    #[test]
    fn the_base_never_lies_inside_a_writable_root() {
        let state = cordon_policy::state_dir::state_dir().unwrap();
        let base = changes_base(std::slice::from_ref(&state));
        assert!(base.starts_with("/var/tmp"), "{}", base.display());
        let base = changes_base(&[PathBuf::from("/work/p")]);
        assert!(!base.starts_with("/work/p"));
    }

    #[test]
    fn removal_gets_through_a_directory_made_unreadable() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("x/y");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f"), "1").unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o111)).unwrap();
        remove_tree(&t.path().join("x")).unwrap();
        assert!(!t.path().join("x").exists());
    }
}
