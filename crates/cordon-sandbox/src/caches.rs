//! Writable developer caches that never write the real ones, and carry data only.
//!
//! Builds write their package caches under HOME (`~/.cargo/registry` and cargo's lock
//! `~/.cargo/.package-cache`, `~/.npm`, `~/.cache/pip`, Go's module and build caches,
//! Gradle's and Maven's repositories). HOME is hidden or read-only in the sandbox, so
//! without help `cargo test` of a new crate fails on its lock. Each run therefore takes a
//! *cache slot*: a directory `caches/WS/slot-N` under cordon's state directory, where
//! `WS` names the run's workspace ([`workspace_key`]) and slot N is one that no other
//! running cordon holds (a `flock` on its `lock` file). In it, each cache that exists on
//! the host gets an overlayfs upper layer over the real cache (read from, never written),
//! and each cache that does not exist gets a plain directory bound in its place. Deleting
//! `caches/` is always safe.
//!
//! A cache outlives its run, so it is a channel from one run to the next; this module
//! keeps that channel to data:
//!
//! - **Per workspace.** A workspace is the trust domain: a later run there executes that
//!   workspace's code anyway. Another workspace never sees its caches, not even the parts
//!   that look content-addressed (cargo does not check a cached `.crate` again, npm trusts
//!   its cached packuments). The host's own caches, written only by the user's own tools,
//!   stay visible to every run as the overlay's read-only lower layer, so a new workspace
//!   starts warm.
//! - **Data only.** [`CACHE_DATA`] names, for each cache, the parts that hold downloads,
//!   indexes and build outputs. Everything else a run left in a layer (cargo's `bin/` and
//!   `config.toml`, npm's `_npx`, pnpm's global programs, Gradle's `init.d`, Maven's
//!   `settings.xml`, overlayfs whiteouts and opaque directories alike) is removed before
//!   every run, under the slot's lock and without following links. [`CacheSlot::take`]
//!   cannot hand out a slot it has not reset, so a cordon killed during a run skips
//!   nothing: the next run resets what it left.
//! - **Never a program on `PATH`.** A data part that is, or holds, a directory of the
//!   host's or the run's `PATH` is not kept. A `--slot`, whose installs are what it is
//!   for, also keeps what `cargo install` writes ([`SLOT_INSTALLS`]); there the slot's own
//!   reset (`slot/startup.rs`) removes every program named like one of the host's.
//!
//! What a run writes to a slot stays in the sandbox's world: it is never merged into the
//! host's HOME, and cordon reads nothing in it but names and file types (to reset it).
//! Every host operation on a slot goes through `cordon-fs`, beneath directories opened
//! without following links.

use crate::error::SandboxError;
use crate::spec::SandboxSpec;
use cordon_fs::{Dir, FsError};
use rustix::fs::FileType;
use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};

/// Cache directories under HOME that each run gets writable (relative to HOME).
pub const DEV_CACHES: &[&str] = &[
    ".cargo",
    ".npm",
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    "go/pkg/mod",
    ".cache/yarn",
    ".local/share/pnpm",
    ".gradle",
    ".m2",
];

/// The programs that write each cache of [`DEV_CACHES`] (same order). A cache the host
/// does not have is made only when one of them is installed (on `PATH`), since each costs
/// a mount at every start; an empty list means always (`gradlew` and `mvnw` wrappers live
/// in projects and download their tool into these caches).
pub const CACHE_WRITERS: &[&[&str]] = &[
    &["cargo"],
    &["npm", "npx"],
    &["pip", "pip3"],
    &["uv"],
    &["go"],
    &["go"],
    &["yarn"],
    &["pnpm"],
    &[],
    &[],
];

/// Which parts of a developer cache are data: kept from one run to the next of a
/// workspace. Whatever else a run leaves in the cache is removed before the next run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheData {
    /// The whole tree: the tool keeps nothing there but downloads and build outputs.
    Whole,
    /// Only these entries at the top of the cache (each a single name).
    Only(&'static [&'static str]),
}

/// The data of each cache of [`DEV_CACHES`], from each tool's documented layout. What is
/// left out is what a tool runs or reads as configuration whatever the later command
/// names: programs, configuration, start-up scripts.
pub const CACHE_DATA: &[(&str, CacheData)] = &[
    // Cargo's home (the Cargo Book, "Cargo Home"): `registry/` (index, `.crate` archives,
    // their extracted sources) and `git/` (bare repositories and checkouts) are
    // downloads; `.global-cache` is cargo's record of when each was last used, read by its
    // garbage collection. Left out: `bin/` (what `cargo install` wrote; on the host,
    // rustup's `cargo`), `config.toml` (a `rustc-wrapper` runs in every build),
    // `credentials.toml`, `env`, `.crates.toml`.
    (
        ".cargo",
        CacheData::Only(&["registry", "git", ".global-cache"]),
    ),
    // npm's cache folder (npm's "folders" documentation): `_cacache` holds the
    // content-addressed tarballs and packuments. Left out: `_npx` (the packages `npx`
    // installed and runs from there), `_logs`, update-notifier state.
    (".npm", CacheData::Only(&["_cacache"])),
    // pip's cache (pip's "Caching" documentation): HTTP responses (`http`, `http-v2`) and
    // the wheels pip built; nothing there runs unless an install names it.
    (".cache/pip", CacheData::Whole),
    // uv's cache (uv's "Caching" concept page): versioned buckets of archives, wheels,
    // source distributions, index responses and interpreter facts. The bucket names
    // change with uv's versions, so the whole tree is kept.
    (".cache/uv", CacheData::Whole),
    // Go's build cache (GOCACHE, `go help cache`): outputs keyed by a hash of their
    // inputs, and nothing else.
    (".cache/go-build", CacheData::Whole),
    // Go's module cache (GOMODCACHE, `go help modules`): `cache/download` and the
    // extracted, read-only module trees. Installed programs go to `~/go/bin`, not here.
    ("go/pkg/mod", CacheData::Whole),
    // Yarn 1's cache (`yarn cache dir`): one extracted package per directory. Global
    // installs and their programs live in `~/.config/yarn` and `~/.yarn/bin`, not here.
    (".cache/yarn", CacheData::Whole),
    // pnpm's home (PNPM_HOME, which pnpm puts on `PATH`): `store/` is the
    // content-addressable store. Left out: `global/` (global packages) and the programs
    // pnpm links at the top of its home, which is a directory of `PATH`.
    (".local/share/pnpm", CacheData::Only(&["store"])),
    // Gradle's user home (Gradle's "Gradle user home directory"): `caches/` (dependencies,
    // transforms, the build cache), `wrapper/` (distributions `gradlew` downloaded; the
    // project's own `gradlew` runs them) and `jdks/` (toolchains Gradle provisioned, run
    // only by a build that asks for that toolchain). Left out: `init.d/`, `init.gradle*`
    // and `gradle.properties` (read by every build), `daemon/` and `native/` (the
    // daemon's registry and the native libraries Gradle itself loads).
    (".gradle", CacheData::Only(&["caches", "wrapper", "jdks"])),
    // Maven's user directory: `repository/` (the local repository) and `wrapper/` (the
    // distributions the project's `mvnw` downloaded). Left out: `settings.xml`,
    // `settings-security.xml`, `toolchains.xml`, `extensions.xml`.
    (".m2", CacheData::Only(&["repository", "wrapper"])),
];

/// What a `--slot` keeps of its cache layers beside their data (relative to HOME): what
/// `cargo install` writes, since installing tools is what a slot is for. The slot's own
/// reset removes from `~/.cargo/bin` every program named like one of the host's `PATH`.
pub const SLOT_INSTALLS: &[&str] = &[".cargo/bin", ".cargo/.crates.toml", ".cargo/.crates2.json"];

/// What of a cache slot's layers outlives the run that wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Persist {
    /// The data of each cache ([`CACHE_DATA`]).
    Data,
    /// The data, and what `cargo install` writes ([`SLOT_INSTALLS`]): the caches of a
    /// `--slot`.
    DataAndInstalls,
    /// Everything: the caches of a slot whose user asked to keep what its runs leave
    /// (`--slot-keep-startup`). Still per workspace.
    Everything,
}

/// Whether any of `programs` is an executable file in a directory of `path` (a
/// `PATH`-style list).
pub fn installed(programs: &[&str], path: &std::ffi::OsStr) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).any(|dir| {
        programs.iter().any(|p| {
            std::fs::metadata(dir.join(p))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The directory under a cache base that holds the slots of `workspace` (its canonical
/// path, as [`SandboxSpec::workspace`] has it): 32 hex digits of the path's BLAKE3 hash.
pub fn workspace_key(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let hex = blake3::hash(workspace.as_os_str().as_bytes()).to_hex();
    hex[..32].to_string()
}

/// The directories of a `PATH`-style list that are absolute, each also as its canonical
/// path when that is another spelling (a data part is compared with both).
pub(crate) fn program_dirs(path: Option<&OsStr>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in path
        .into_iter()
        .flat_map(std::env::split_paths)
        .filter(|d| d.is_absolute())
    {
        if let Ok(c) = std::fs::canonicalize(&d)
            && c != d
        {
            out.push(c);
        }
        out.push(d);
    }
    out.sort();
    out.dedup();
    out
}

/// The name of a cache's directory in a slot: its path under HOME, `/` written `-` and
/// leading dots dropped (`.cache/pip` is `cache-pip`). A layer is known by its cache, so
/// what persists in it does not depend on which caches a run happened to mount.
fn layer_name(rel: &str) -> String {
    rel.split('/')
        .map(|c| c.trim_start_matches('.'))
        .collect::<Vec<_>>()
        .join("-")
}

/// How a cache appears in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLayer {
    /// The cache's path (under HOME).
    pub path: PathBuf,
    /// The slot's directory for it: overlayfs's upper layer when the host has the cache,
    /// else the directory bound in its place.
    pub upper: PathBuf,
    /// overlayfs's work directory, when the host has the cache.
    pub work: Option<PathBuf>,
}

/// What a run asks of [`CacheSlot::take`].
#[derive(Debug, Clone, Copy)]
pub struct CacheRequest<'a> {
    /// Where the slots of every workspace live: [`caches_base`], or a `--slot`'s caches
    /// directory.
    pub base: &'a Path,
    /// The run's workspace, canonical: its slots are its own ([`workspace_key`]).
    pub workspace: &'a Path,
    /// The caller's HOME, under which every cache lies.
    pub home: &'a Path,
    /// The caches to make writable: absolute paths of [`DEV_CACHES`] under `home`.
    pub caches: &'a [PathBuf],
    /// What outlives a run.
    pub persist: Persist,
    /// Directories of programs (the host's `PATH` and the run's) that no kept part of a
    /// cache may be or hold.
    pub programs: &'a [PathBuf],
}

/// A slot held for one run, reset before it was handed out.
#[derive(Debug)]
pub struct CacheSlot {
    layers: Vec<CacheLayer>,
    removed: Vec<PathBuf>,
    // Held (flock) for as long as the run uses the slot.
    _lock: File,
}

/// Slots per workspace: one per concurrent run.
const MAX_SLOTS: u32 = 1024;

fn fs_error(e: FsError) -> SandboxError {
    SandboxError::setup(format!("cache slot: {e}"))
}

/// What of one cache persists.
#[derive(Debug, PartialEq, Eq)]
enum Keep {
    All,
    /// These names at the top of the cache.
    Only(Vec<&'static str>),
}

/// What of the cache `rel` (under `home`) persists: its data parts, but none that is or
/// holds a directory of `programs` (a whole-tree cache with one inside keeps nothing);
/// for a slot also its installs.
fn kept(rel: &str, home: &Path, persist: Persist, programs: &[PathBuf]) -> Keep {
    if persist == Persist::Everything {
        return Keep::All;
    }
    let root = home.join(rel);
    let holds_programs = |p: &Path| programs.iter().any(|d| d.starts_with(p));
    let data = CACHE_DATA
        .iter()
        .find(|(c, _)| *c == rel)
        .map_or(CacheData::Only(&[]), |(_, d)| *d);
    let mut keep: Vec<&'static str> = match data {
        CacheData::Whole if !holds_programs(&root) => return Keep::All,
        CacheData::Whole => Vec::new(),
        CacheData::Only(parts) => parts
            .iter()
            .copied()
            .filter(|p| !holds_programs(&root.join(p)))
            .collect(),
    };
    if persist == Persist::DataAndInstalls {
        keep.extend(
            SLOT_INSTALLS
                .iter()
                .filter_map(|i| i.strip_prefix(rel)?.strip_prefix('/')),
        );
    }
    Keep::Only(keep)
}

/// Remove from a layer's top directory every entry `keep` does not name, and every named
/// one that is neither a directory nor a regular file (a symlink, an overlayfs whiteout, a
/// fifo): data is never a link to elsewhere. Nothing is followed. Returns what was
/// removed.
fn reset(top: &Dir, keep: &Keep) -> Result<Vec<OsString>, FsError> {
    let Keep::Only(parts) = keep else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    for name in top.names()? {
        let rel = Path::new(&name);
        if parts.iter().any(|p| OsStr::new(p) == name) {
            let kind = FileType::from_raw_mode(top.stat(rel)?.st_mode);
            if matches!(kind, FileType::Directory | FileType::RegularFile) {
                continue;
            }
        }
        top.remove_tree(rel)?;
        removed.push(name);
    }
    Ok(removed)
}

/// The directory `name` in `at`, made (mode 0700) when missing. It is opened first: on
/// every run but a slot's first it is there, and every start pays for each system call.
fn subdir(at: &Dir, name: &str) -> Result<Dir, FsError> {
    match at.open_dir(Path::new(name)) {
        Err(e) if e.is_not_found() => at.create_dir_all(Path::new(name), 0o700),
        other => other,
    }
}

/// The layer directory `name` in `at`, made when missing and given back mode 0700 when a
/// run changed it: a `chmod 000 ~/.cargo` must neither hide what the layer holds from the
/// reset nor keep the next run from writing.
fn open_layer(at: &Dir, name: &str) -> Result<Dir, FsError> {
    let dir = match subdir(at, name) {
        Ok(d) => d,
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            at.set_mode(Path::new(name), 0o700)?;
            subdir(at, name)?
        }
        Err(e) => return Err(e),
    };
    if dir.own_stat()?.st_mode & 0o7777 != 0o700 {
        dir.set_own_mode(0o700)?;
    }
    Ok(dir)
}

impl CacheSlot {
    /// Take the first slot of the request's workspace that no running cordon holds, reset
    /// it (see the module's documentation) and prepare a layer for each cache.
    pub fn take(req: &CacheRequest<'_>) -> Result<CacheSlot, SandboxError> {
        // A layer is known by its cache's name, and so is what of it persists: a path
        // that is not one of the caches under HOME has neither.
        let rels = req
            .caches
            .iter()
            .map(|p| {
                p.strip_prefix(req.home)
                    .ok()
                    .and_then(Path::to_str)
                    .and_then(|r| DEV_CACHES.iter().find(|c| **c == r).copied())
                    .ok_or_else(|| {
                        SandboxError::setup(format!(
                            "{} is not a developer cache under {}",
                            p.display(),
                            req.home.display()
                        ))
                    })
            })
            .collect::<Result<Vec<&str>, _>>()?;
        let base = Dir::private_ambient(req.base).map_err(fs_error)?;
        let ours = subdir(&base, &workspace_key(req.workspace)).map_err(fs_error)?;
        for n in 0..MAX_SLOTS {
            let dir = subdir(&ours, &format!("slot-{n}")).map_err(fs_error)?;
            let lock = dir.open_rw(Path::new("lock"), 0o600).map_err(fs_error)?;
            if lock.try_lock().is_err() {
                continue;
            }
            // overlayfs keeps its whiteouts and opaque marks in user extended attributes.
            if rustix::fs::fsetxattr(
                &dir,
                "user.cordon.probe",
                b"1",
                rustix::fs::XattrFlags::empty(),
            )
            .is_err()
            {
                return Err(SandboxError::setup(format!(
                    "the file system of {} does not keep user extended attributes",
                    req.base.display()
                )));
            }
            let mut layers = Vec::with_capacity(req.caches.len());
            let mut removed = Vec::new();
            for (path, rel) in req.caches.iter().zip(&rels) {
                let name = layer_name(rel);
                let at = subdir(&dir, &name).map_err(fs_error)?;
                let host_has_it = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
                let (top, work) = if host_has_it {
                    ("upper", Some("work"))
                } else {
                    ("dir", None)
                };
                let top_dir = open_layer(&at, top).map_err(fs_error)?;
                if let Some(w) = work {
                    subdir(&at, w).map_err(fs_error)?;
                }
                let keep = kept(rel, req.home, req.persist, req.programs);
                for gone in reset(&top_dir, &keep).map_err(fs_error)? {
                    removed.push(Path::new(rel).join(gone));
                }
                layers.push(CacheLayer {
                    path: path.clone(),
                    upper: at.path().join(top),
                    work: work.map(|w| at.path().join(w)),
                });
            }
            return Ok(CacheSlot {
                layers,
                removed,
                _lock: lock,
            });
        }
        Err(SandboxError::setup(format!(
            "every cache slot under {} is in use",
            ours.path().display()
        )))
    }

    /// The cache slot of a run about to start: its workspace's, under the `--slot`'s
    /// caches directory or [`caches_base`], keeping what the slot asks.
    pub(crate) fn for_run(
        spec: &SandboxSpec,
        caches: &[PathBuf],
    ) -> Result<CacheSlot, SandboxError> {
        let (base, persist) = match &spec.slot {
            Some(slot) if slot.keep_startup => (slot.caches.clone(), Persist::Everything),
            Some(slot) => (slot.caches.clone(), Persist::DataAndInstalls),
            None => (caches_base(&spec.writable_roots, caches), Persist::Data),
        };
        let run_path = spec
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_os_str());
        let mut programs = program_dirs(std::env::var_os("PATH").as_deref());
        programs.extend(program_dirs(run_path));
        CacheSlot::take(&CacheRequest {
            base: &base,
            workspace: &spec.workspace,
            home: &spec.home,
            caches,
            persist,
            programs: &programs,
        })
    }

    /// The caches, in the order of the request.
    pub fn layers(&self) -> &[CacheLayer] {
        &self.layers
    }

    /// What the reset removed before handing the slot out, relative to HOME.
    pub fn removed(&self) -> &[PathBuf] {
        &self.removed
    }
}

/// Where cache slots live: `caches/` in cordon's state directory, or under
/// `/var/tmp/cordon-caches-<uid>` when that lies inside one of `roots` (whose writes are
/// merged) or under one of `caches` (overlayfs refuses an upper layer inside its lower).
pub fn caches_base(roots: &[PathBuf], caches: &[PathBuf]) -> PathBuf {
    let clash = |p: &Path| {
        roots
            .iter()
            .chain(caches)
            .any(|r| p.starts_with(r) || r.starts_with(p))
    };
    if let Some(state) = cordon_policy::state_dir::state_dir() {
        let state = std::fs::canonicalize(&state)
            .unwrap_or(state)
            .join("caches");
        if !clash(&state) {
            return state;
        }
    }
    caches_fallback()
}

/// The base of cache slots when the state directory cannot hold them.
pub(crate) fn caches_fallback() -> PathBuf {
    PathBuf::from(format!(
        "/var/tmp/cordon-caches-{}",
        nix::unistd::geteuid().as_raw()
    ))
}

#[cfg(test)]
mod tests;
