//! What a failed `on-failure` run may be offered for a write that containment blocked:
//! [`offer_write`] decides it, and the [`WriteGrant`] it returns, which nothing else can
//! build, is the only thing a write escalation can carry.
//!
//! The path comes from the denial report, so the sandboxed command chose it: a script
//! that writes `/usr/local/bin/x` and fails is asking, in effect, to plant a program on
//! the host's `PATH`, and a human who answers quickly would grant it. So the offer must
//! be narrow and safe whatever the command wrote. When it cannot be, nothing is offered,
//! the run's failure stands, and [`NoOffer`] says why.
//!
//! # What is offered
//!
//! The narrowest grant that lets the write through. For an existing regular file, that
//! file alone: its directory is mounted copy-on-write and only the file is merged back,
//! as a regular file without set-id bits (`cordon_sandbox::SandboxBuilder::writable_file`).
//! For a file that does not exist yet, the directory it would be created in. Where the
//! sandbox cannot make one file writable (the fallback tier has no copy-on-write layers),
//! the file's directory is offered under the rules for directories, and the offer says
//! that it is the directory and why. Every path is judged as written (lexically clean)
//! and where it really leads; the grant names the real path, so a symlink on the way
//! cannot point it elsewhere later.
//!
//! # What is never offered
//!
//! Nothing whose path (the file written, the directory granted, and, for a single file,
//! the directory mounted for it), as written or resolved:
//!
//! - is `/` or a top-level directory (`/home`, `/tmp`, `/data`): they hold everyone's
//!   files and the system's mount points;
//! - is HOME or holds it, or is the workspace or holds it: granting either would open
//!   every start-up file of the user or the whole project tree around the session's
//!   workspace, which the sandbox exists to keep apart;
//! - is, lies in, or holds cordon's own state (the store, the audit log, change sets,
//!   cache slots, the egress proxy's directory): a run that could write there could
//!   approve itself;
//!
//! and nothing whose file or granted directory, as written or resolved:
//!
//! - is, lies in, or holds a directory on `PATH` as cordon's own environment has it,
//!   compared by real path (an entry that is a symlink, or that does not exist yet,
//!   included): whatever lands there runs the next time the host types its name;
//! - lies in a system tree ([`SYSTEM_TREES`]);
//! - is protected by the policy's guards (`protected_write`, `planted_home`,
//!   `sensitive_read`, with both HOME as written and HOME resolved);
//! - lies in a git directory (a `.git`, or a bare repository): git runs its hooks and
//!   obeys its configuration;
//! - for a directory: holds a protected, planted or secret location under HOME
//!   (`~/.config` holds `~/.config/autostart`), or is not this user's alone: owned by
//!   another user, writable by others, or holding an entry of another user's (of its
//!   first [`MAX_CHECKED_ENTRIES`] entries; a larger directory is not offered at all);
//! - for a single file: is not this user's, or lies in a directory this user cannot
//!   write (the merge replaces the file there).

use crate::flow::Gate;
use cordon_policy::guards;
use cordon_sandbox::Tier;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// System trees: never offered, nor anything in them. The first component of a path
/// is compared; any top-level name beginning with `lib` counts as a library tree.
///
/// | tree | why |
/// |---|---|
/// | `/usr`, `/bin`, `/sbin`, `/lib*` | the programs and libraries the host runs |
/// | `/etc` | configuration every program and service reads |
/// | `/boot`, `/efi` | the kernel and the boot loader |
/// | `/opt` | add-on software, run like `/usr` |
/// | `/srv` | what the host's services serve (a web root is run as code) |
/// | `/snap`, `/nix` | package stores whose contents are run |
/// | `/var` | services' state, spools, logs and package caches; only below `/var/tmp/NAME` is data |
/// | `/sys`, `/proc`, `/dev`, `/run` | kernel and runtime interfaces, never data |
pub const SYSTEM_TREES: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/etc", "/boot", "/efi", "/opt", "/srv", "/snap", "/nix",
    "/var", "/sys", "/proc", "/dev", "/run",
];

/// Where below `/var` a directory may be offered: `/var/tmp/NAME` and beneath it.
const VAR_DATA: &str = "/var/tmp";

/// How many entries of a directory are checked for another user's files; a directory
/// with more is not offered.
pub const MAX_CHECKED_ENTRIES: usize = 4096;

/// The places of the host that a blocked write is judged against: facts the sandboxed
/// command cannot choose.
#[derive(Debug, Clone)]
pub struct HostPlaces {
    home: PathBuf,
    workspace: PathBuf,
    search_path: Vec<PathBuf>,
    own: Vec<PathBuf>,
    uid: u32,
    file_grants: bool,
}

impl HostPlaces {
    /// HOME and the session's workspace, for this user, with no `PATH` and no state of
    /// cordon's yet, where a single file can be granted.
    pub fn new(home: impl Into<PathBuf>, workspace: impl Into<PathBuf>) -> HostPlaces {
        HostPlaces {
            home: home.into(),
            workspace: workspace.into(),
            search_path: Vec::new(),
            own: Vec::new(),
            uid: rustix::process::geteuid().as_raw(),
            file_grants: true,
        }
    }

    /// The places of `gate`'s policy after a run at `tier`: `PATH` as cordon's own
    /// environment has it (relative entries taken from cordon's current directory),
    /// and every directory where cordon keeps state.
    pub(crate) fn of_gate(gate: &Gate, tier: Tier) -> HostPlaces {
        let policy = gate.policy();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut places = HostPlaces::new(policy.home(), policy.workspace())
            .search_path(&std::env::var_os("PATH").unwrap_or_default(), &cwd)
            .file_grants(matches!(tier, Tier::Full));
        if let Ok(state) = cordon_store::state_dir() {
            places = places.own_place(state);
        }
        let opts = gate.options();
        for file in opts.store.iter().chain(&opts.audit) {
            if let Some(dir) = file.parent().filter(|d| d.is_absolute()) {
                places = places.own_place(dir);
            }
        }
        for dir in cordon_sandbox::state_places() {
            places = places.own_place(dir);
        }
        places.own_place(crate::contained::egress_base())
    }

    /// The directories of a `PATH` value; an empty or relative entry is taken from
    /// `cwd`, as a shell there would take it.
    pub fn search_path(mut self, path: &OsStr, cwd: &Path) -> HostPlaces {
        self.search_path = std::env::split_paths(path)
            .map(|e| {
                if e.as_os_str().is_empty() {
                    cwd.to_path_buf()
                } else {
                    cwd.join(e)
                }
            })
            .collect();
        self
    }

    /// A directory of cordon's own state.
    pub fn own_place(mut self, dir: impl Into<PathBuf>) -> HostPlaces {
        self.own.push(dir.into());
        self
    }

    /// Whether the sandbox can make a single file writable (the full tier can).
    pub fn file_grants(mut self, yes: bool) -> HostPlaces {
        self.file_grants = yes;
        self
    }

    /// Judge ownership as user `uid` instead of this process's user.
    pub fn user(mut self, uid: u32) -> HostPlaces {
        self.uid = uid;
        self
    }
}

/// What a [`WriteGrant`] makes writable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrantKind {
    /// One existing regular file, alone.
    File,
    /// A directory and everything beneath it.
    Directory,
}

/// Write access that [`offer_write`] found narrow and safe: the only thing an
/// `on-failure` write escalation can carry, and buildable by nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteGrant {
    path: PathBuf,
    kind: GrantKind,
    /// A file that could not be granted alone, and why, when its directory is granted.
    instead_of: Option<(PathBuf, &'static str)>,
}

impl WriteGrant {
    /// The real path made writable.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file alone, or a directory.
    pub fn kind(&self) -> GrantKind {
        self.kind
    }

    /// One phrase for humans: the exact path, and whether it is a file or a directory.
    pub fn describe(&self) -> String {
        match (&self.kind, &self.instead_of) {
            (GrantKind::File, _) => {
                format!("write access to the file {} alone", self.path.display())
            }
            (GrantKind::Directory, None) => {
                format!("write access to the directory {}", self.path.display())
            }
            (GrantKind::Directory, Some((file, why))) => format!(
                "write access to the directory {} (for the file {}: {why})",
                self.path.display(),
                file.display()
            ),
        }
    }

    /// The key that binds an approval to exactly this grant.
    pub fn key(&self) -> String {
        match self.kind {
            GrantKind::File => format!("write-file:{}", self.path.display()),
            GrantKind::Directory => format!("write:{}", self.path.display()),
        }
    }

    /// Decide again, just before the grant is used: the host may have changed since the
    /// human was asked (a symlink put on the way, the directory replaced).
    pub fn still_holds(&self, places: &HostPlaces) -> Result<(), NoOffer> {
        let again = offer_write(&self.path, places)?;
        if again.path == self.path && again.kind == self.kind {
            Ok(())
        } else {
            Err(NoOffer {
                path: self.path.clone(),
                reason: format!(
                    "it changed since it was offered (now: {})",
                    again.describe()
                ),
            })
        }
    }
}

/// Why a blocked write gets no offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoOffer {
    /// The path the command failed to write, as reported.
    pub path: PathBuf,
    /// Why nothing is offered for it, in one phrase.
    pub reason: String,
}

impl std::fmt::Display for NoOffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// What the blocked write was to.
enum Written {
    /// An existing regular file.
    File,
    /// An existing directory.
    Dir,
    /// Something that does not exist yet, in an existing directory.
    New,
}

/// Which rules apply to a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The file (or directory) the command wrote.
    Target,
    /// A directory to be granted.
    Directory,
    /// The directory mounted copy-on-write for a single file: only what it could
    /// expose or nest matters, since nothing but the file leaves it.
    Mount,
}

/// Decide whether the write to `blocked` that containment refused may be offered, and
/// what exactly: see the module's documentation for the rules.
pub fn offer_write(blocked: &Path, places: &HostPlaces) -> Result<WriteGrant, NoOffer> {
    let refuse = |reason: String| NoOffer {
        path: blocked.to_path_buf(),
        reason,
    };
    if !blocked.is_absolute() {
        return Err(refuse("the path is not absolute".into()));
    }
    let literal = clean(blocked);
    let known = Known::new(places);
    let Some(name) = literal.file_name() else {
        return Err(refuse("/ is the root directory".into()));
    };
    let (real, written) = match std::fs::symlink_metadata(&literal) {
        Ok(_) => {
            let real = std::fs::canonicalize(&literal).map_err(|_| {
                refuse(format!(
                    "{} is a symlink that leads nowhere",
                    literal.display()
                ))
            })?;
            let meta = std::fs::metadata(&real)
                .map_err(|e| refuse(format!("{} cannot be examined ({e})", real.display())))?;
            if meta.is_file() {
                (real, Written::File)
            } else if meta.is_dir() {
                (real, Written::Dir)
            } else {
                return Err(refuse(format!(
                    "{} is neither a regular file nor a directory",
                    real.display()
                )));
            }
        }
        Err(_) => {
            let parent = literal.parent().unwrap_or(Path::new("/"));
            let dir = std::fs::canonicalize(parent)
                .ok()
                .filter(|d| d.is_dir())
                .ok_or_else(|| {
                    refuse(format!("its directory {} does not exist", parent.display()))
                })?;
            (dir.join(name), Written::New)
        }
    };
    for p in [&literal, &real] {
        if let Some(r) = refusal(p, &known, Scope::Target) {
            return Err(refuse(r));
        }
    }
    let parent = |p: &Path| p.parent().unwrap_or(Path::new("/")).to_path_buf();
    match written {
        Written::File if places.file_grants => {
            for dir in [parent(&literal), parent(&real)] {
                if let Some(r) = refusal(&dir, &known, Scope::Mount) {
                    return Err(refuse(format!(
                        "the file alone needs its directory mounted copy-on-write, and {r}"
                    )));
                }
            }
            if let Some(r) = not_users_file(&real, places.uid) {
                return Err(refuse(r));
            }
            Ok(WriteGrant {
                path: real,
                kind: GrantKind::File,
                instead_of: None,
            })
        }
        Written::File => {
            let why = "this sandbox tier cannot make a single file writable";
            let dir = parent(&real);
            directory(&parent(&literal), &dir, &known)
                .map_err(|r| refuse(format!("{r}; and the file alone cannot be granted: {why}")))?;
            Ok(WriteGrant {
                path: dir,
                kind: GrantKind::Directory,
                instead_of: Some((real, why)),
            })
        }
        Written::New => {
            let dir = parent(&real);
            directory(&parent(&literal), &dir, &known).map_err(refuse)?;
            Ok(WriteGrant {
                path: dir,
                kind: GrantKind::Directory,
                instead_of: None,
            })
        }
        Written::Dir => {
            directory(&literal, &real, &known).map_err(refuse)?;
            Ok(WriteGrant {
                path: real,
                kind: GrantKind::Directory,
                instead_of: None,
            })
        }
    }
}

/// The rules for a directory to grant, `literal` as written and `real` resolved.
fn directory(literal: &Path, real: &Path, known: &Known<'_>) -> Result<(), String> {
    for p in [literal, real] {
        if let Some(r) = refusal(p, known, Scope::Directory) {
            return Err(r);
        }
    }
    match not_users_alone(real, known.places.uid) {
        Some(r) => Err(r),
        None => Ok(()),
    }
}

/// The host's places, each as written and as resolved.
struct Known<'a> {
    places: &'a HostPlaces,
    homes: Vec<PathBuf>,
    workspaces: Vec<PathBuf>,
    search_path: Vec<PathBuf>,
    own: Vec<PathBuf>,
}

impl<'a> Known<'a> {
    fn new(places: &'a HostPlaces) -> Known<'a> {
        let both = |ps: &[PathBuf]| {
            let mut out: Vec<PathBuf> = ps
                .iter()
                .filter(|p| p.is_absolute())
                .flat_map(|p| [clean(p), resolve(p)])
                .collect();
            out.sort();
            out.dedup();
            out
        };
        Known {
            places,
            homes: both(std::slice::from_ref(&places.home)),
            workspaces: both(std::slice::from_ref(&places.workspace)),
            search_path: both(&places.search_path),
            own: both(&places.own),
        }
    }
}

/// Why `p` may not be offered under `scope`, if it may not.
fn refusal(p: &Path, known: &Known<'_>, scope: Scope) -> Option<String> {
    let shown = p.display();
    let depth = p
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    if depth <= 1 {
        return Some(format!(
            "{shown} is the root directory or a top-level directory"
        ));
    }
    if let Some(h) = known.homes.iter().find(|h| h.starts_with(p)) {
        return Some(if h == p {
            format!("{shown} is HOME")
        } else {
            format!("{shown} holds HOME ({})", h.display())
        });
    }
    if let Some(w) = known.workspaces.iter().find(|w| w.starts_with(p)) {
        return Some(if w == p {
            format!("{shown} is the workspace")
        } else {
            format!("{shown} holds the workspace ({})", w.display())
        });
    }
    for o in &known.own {
        if p.starts_with(o) {
            return Some(format!(
                "{shown} lies in cordon's own state ({})",
                o.display()
            ));
        }
        if o.starts_with(p) {
            return Some(format!(
                "{shown} holds cordon's own state ({})",
                o.display()
            ));
        }
    }
    if scope == Scope::Mount {
        return None;
    }
    for d in &known.search_path {
        if p == d {
            return Some(format!("{shown} is a directory on PATH"));
        }
        if p.starts_with(d) {
            return Some(format!(
                "{shown} lies in {}, a directory on PATH",
                d.display()
            ));
        }
        if d.starts_with(p) {
            return Some(format!(
                "{shown} holds {}, a directory on PATH",
                d.display()
            ));
        }
    }
    if let Some(tree) = system_tree(p) {
        return Some(format!("{shown} lies in {tree}, a system directory"));
    }
    for home in &known.homes {
        if let Some(hit) = guards::sensitive_read(p, home) {
            return Some(format!("{shown} is guarded as secret ({})", hit.pattern));
        }
        if let Some(hit) = guards::protected_write(p, home) {
            return Some(format!("{shown} is protected ({})", hit.pattern));
        }
        if let Some(hit) = guards::planted_home(p, home) {
            return Some(format!(
                "{shown} holds what the host builds or runs later ({})",
                hit.pattern
            ));
        }
    }
    if let Some(g) = git_dir(p) {
        return Some(format!(
            "{shown} lies in the git directory {}, whose hooks and configuration git runs",
            g.display()
        ));
    }
    if scope == Scope::Directory
        && let Some(held) = holds_guarded(p, &known.homes)
    {
        return Some(format!("{shown} holds {held}, which is protected"));
    }
    None
}

/// The system tree `p` lies in, if any ([`SYSTEM_TREES`]).
fn system_tree(p: &Path) -> Option<String> {
    let first = p.components().find_map(|c| match c {
        Component::Normal(n) => Some(n),
        _ => None,
    })?;
    let tree = SYSTEM_TREES
        .iter()
        .find(|t| OsStr::new(&t[1..]) == first)
        .map(|t| (*t).to_string())
        .or_else(|| {
            first
                .as_encoded_bytes()
                .starts_with(b"lib")
                .then(|| format!("/{}", first.to_string_lossy()))
        })?;
    let data = Path::new(VAR_DATA);
    if tree == "/var" && p.starts_with(data) && p != data {
        return None;
    }
    Some(tree)
}

/// The git directory `p` is or lies in: a `.git` on the way, or a directory that holds
/// `HEAD`, `objects` and `refs` (a bare repository, or `.git` under another name).
fn git_dir(p: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for c in p.components() {
        prefix.push(c);
        if let Component::Normal(n) = c
            && n.eq_ignore_ascii_case(".git")
        {
            return Some(prefix);
        }
    }
    p.ancestors()
        .find(|a| a.join("HEAD").is_file() && a.join("objects").is_dir() && a.join("refs").is_dir())
        .map(Path::to_path_buf)
}

/// A protected, planted or secret location under HOME, or a protected system path,
/// that lies beneath the directory `d`.
fn holds_guarded(d: &Path, homes: &[PathBuf]) -> Option<String> {
    let under_home = guards::PROTECTED_HOME_PATHS
        .iter()
        .chain(guards::PLANTED_HOME_PATHS)
        .chain(guards::SENSITIVE_HOME_PATHS);
    for rel in under_home {
        // A pattern (`.local/lib/python*`) is held by whatever holds its fixed part.
        let fixed: PathBuf = rel.split('/').take_while(|c| !c.contains('*')).collect();
        if homes.iter().any(|h| h.join(&fixed).starts_with(d)) {
            return Some(format!("~/{rel}"));
        }
    }
    guards::PROTECTED_SYSTEM_PATHS
        .iter()
        .chain(guards::SENSITIVE_SYSTEM_PATHS)
        .find(|a| Path::new(a).starts_with(d))
        .map(|a| (*a).to_string())
}

/// Why the directory `d` (real) is not this user's alone, if it is not.
fn not_users_alone(d: &Path, uid: u32) -> Option<String> {
    let shown = d.display();
    let meta = match std::fs::symlink_metadata(d) {
        Ok(m) => m,
        Err(e) => return Some(format!("{shown} cannot be examined ({e})")),
    };
    if meta.uid() != uid {
        return Some(format!("{shown} belongs to another user"));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!("other users can write {shown}"));
    }
    let entries = match std::fs::read_dir(d) {
        Ok(rd) => rd,
        Err(e) => return Some(format!("{shown} cannot be listed ({e})")),
    };
    for (i, entry) in entries.enumerate() {
        if i >= MAX_CHECKED_ENTRIES {
            return Some(format!(
                "{shown} holds more than {MAX_CHECKED_ENTRIES} entries, too many to check whose they are"
            ));
        }
        // `DirEntry::metadata` does not follow a symlink: the entry itself is judged.
        let owner = entry.and_then(|e| e.metadata().map(|m| (e.file_name(), m.uid())));
        match owner {
            Ok((_, o)) if o == uid => {}
            Ok((name, _)) => {
                return Some(format!(
                    "{shown} holds {}, which belongs to another user",
                    name.to_string_lossy()
                ));
            }
            Err(e) => return Some(format!("{shown} cannot be listed ({e})")),
        }
    }
    None
}

/// Why the file `f` (real) may not be granted alone, if it may not: it must be this
/// user's, in a directory this user can write (the merge replaces it there).
fn not_users_file(f: &Path, uid: u32) -> Option<String> {
    match std::fs::symlink_metadata(f) {
        Ok(m) if m.uid() == uid => {}
        Ok(_) => return Some(format!("{} belongs to another user", f.display())),
        Err(e) => return Some(format!("{} cannot be examined ({e})", f.display())),
    }
    let dir = f.parent()?;
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK)
        .err()
        .map(|_| {
            format!(
                "this user cannot write {}, where the file would be replaced",
                dir.display()
            )
        })
}

/// `p` without `.` components and with each `..` taking away the component before it,
/// as the path reads (no symlink is followed).
fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir => out.push("/"),
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// Where `p` leads: its longest existing ancestor resolved, the rest appended as it
/// reads (a `PATH` entry or a HOME need not exist).
fn resolve(p: &Path) -> PathBuf {
    let p = clean(p);
    let mut existing = p.as_path();
    let mut rest: Vec<&OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return clean(&out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return p,
        }
    }
}

#[cfg(test)]
mod tests;
