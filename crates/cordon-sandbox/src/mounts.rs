//! Executes the mount plan inside the new mount namespace, then switches root.
//!
//! Layout during construction (the approach of a double `pivot_root`): a private tmpfs
//! becomes the root, the host's root is reachable at `/oldroot`, the sandbox is built at
//! `/newroot` from sources under `/oldroot`, and a final `pivot_root` plus a lazy unmount
//! drop every reference to the host tree. This module never decides what is visible; it
//! does what `plan.rs` says and refuses (never guesses) when the host changed under it.

use crate::error::{SandboxError, SandboxErrorKind};
use crate::plan::{MountOp, Plan};
use crate::sys::make_read_only;
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::unistd::{chdir, pivot_root};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

const STAGE: &str = "/tmp";
const NEW: &str = "/newroot";
const OLD: &str = "/oldroot";

fn under(base: &str, p: &Path) -> PathBuf {
    let rel = p.strip_prefix("/").unwrap_or(p);
    Path::new(base).join(rel)
}

fn sys(what: impl std::fmt::Display) -> impl FnOnce(nix::Error) -> SandboxError {
    move |e| SandboxError::sys(what, e)
}

fn tmpfs(target: &Path, options: &str, flags: MsFlags) -> Result<(), SandboxError> {
    mount(
        Some("tmpfs"),
        target,
        Some("tmpfs"),
        flags | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options),
    )
    .map_err(sys(format_args!(
        "cannot mount a tmpfs on {}",
        target.display()
    )))
}

fn bind(src: &Path, dst: &Path) -> Result<(), SandboxError> {
    mount(
        Some(src),
        dst,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(sys(format_args!(
        "cannot bind {} onto {}",
        src.display(),
        dst.display()
    )))
}

fn read_only(p: &Path, recursive: bool) -> Result<(), SandboxError> {
    make_read_only(p, recursive).map_err(sys(format_args!("cannot make {} read-only", p.display())))
}

/// Make sure a mount point exists at `p` (creating it inside a tmpfs of ours when it is
/// missing); a symlink there is refused, since mounting on it would follow it.
// Mount points in the root the helper builds inside its mount namespace, before the
// command exists; a symlink at the point is refused above.
#[allow(clippy::disallowed_methods)]
fn ensure_mount_point(p: &Path, dir: bool) -> Result<(), SandboxError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(SandboxError::setup(format!(
            "refusing to mount on {}: it is a symlink",
            p.display()
        ))),
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = p.parent().unwrap_or(Path::new("/"));
            std::fs::create_dir_all(parent)
                .map_err(|e| SandboxError::io(format!("cannot create {}", parent.display()), e))?;
            let r = if dir {
                std::fs::create_dir(p)
            } else {
                std::fs::File::create(p).map(|_| ())
            };
            r.map_err(|e| SandboxError::io(format!("cannot create {}", p.display()), e))
        }
    }
}

/// Whether `p` exists in the sandbox being built, without following a final symlink.
fn kind_at(p: &Path) -> Option<std::fs::Metadata> {
    std::fs::symlink_metadata(p).ok()
}

/// The tmpfs mounts to make read-only once the plan is built, held open so that a
/// later mount at the same path (a writable root that is HOME) is not the one changed.
#[derive(Default)]
struct Frozen(Vec<std::os::fd::OwnedFd>);

impl Frozen {
    /// Remember the mount now at `p`.
    // An `O_PATH` handle on a tmpfs of the sandbox's own mount namespace: nothing written.
    #[allow(clippy::disallowed_methods)]
    fn add(&mut self, p: &Path) -> Result<(), SandboxError> {
        let fd = nix::fcntl::open(
            p,
            nix::fcntl::OFlag::O_PATH
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(sys(format_args!("cannot open {}", p.display())))?;
        self.0.push(fd);
        Ok(())
    }

    fn freeze(self) -> Result<(), SandboxError> {
        for fd in self.0 {
            crate::sys::make_read_only_fd(&fd)
                .map_err(sys("cannot make a hiding tmpfs read-only"))?;
        }
        Ok(())
    }
}

/// The sandbox's scratch space: one tmpfs in the staging root, made the first time a
/// [`MountOp::Scratch`] needs it; each such op gets a fresh directory of it. One tmpfs,
/// so that `size` bounds `/tmp`, `/var/tmp` and `/dev/shm` together. It goes away with
/// the staging root; the binds keep its contents alive for the sandbox.
struct Scratch {
    size: u64,
    made: usize,
}

const SCRATCH: &str = "/scratch";

impl Scratch {
    // The sandbox's own tmpfs, built by the helper inside its mount namespace before the
    // command exists: no run has touched it.
    #[allow(clippy::disallowed_methods)]
    fn next_dir(&mut self) -> Result<PathBuf, SandboxError> {
        use std::os::unix::fs::PermissionsExt;
        let root = Path::new(SCRATCH);
        if self.made == 0 {
            std::fs::create_dir(root)
                .map_err(|e| SandboxError::io(format!("cannot create {SCRATCH}"), e))?;
            // Inodes cost kernel memory that `size` does not count: one per 8 KiB.
            let inodes = (self.size / 8192).max(4096);
            tmpfs(
                root,
                &format!("mode=0755,size={},nr_inodes={inodes}", self.size),
                MsFlags::empty(),
            )?;
        }
        let dir = root.join(self.made.to_string());
        self.made += 1;
        std::fs::create_dir(&dir)
            .and_then(|()| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)))
            .map_err(|e| SandboxError::io(format!("cannot create {}", dir.display()), e))?;
        Ok(dir)
    }
}

// The sandbox's own tmpfs, built by the helper inside its mount namespace before the
// command exists: no run has touched it.
#[allow(clippy::disallowed_methods)]
fn build_dev(frozen: &mut Frozen) -> Result<(), SandboxError> {
    let dev = under(NEW, Path::new("/dev"));
    ensure_mount_point(&dev, true)?;
    tmpfs(&dev, "mode=0755,size=1m", MsFlags::MS_NOEXEC)?;
    frozen.add(&dev)?;
    for name in ["null", "zero", "full", "random", "urandom", "tty"] {
        let dst = dev.join(name);
        let src = under(OLD, &Path::new("/dev").join(name));
        if kind_at(&src).is_none() {
            continue;
        }
        ensure_mount_point(&dst, false)?;
        bind(&src, &dst)?;
    }
    let pts = dev.join("pts");
    ensure_mount_point(&pts, true)?;
    mount(
        Some("devpts"),
        &pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )
    .map_err(sys("cannot mount a new devpts instance"))?;
    for (name, target) in DEV_LINKS {
        std::os::unix::fs::symlink(target, dev.join(name))
            .map_err(|e| SandboxError::io(format!("cannot create /dev/{name}"), e))?;
    }
    Ok(())
}

/// The symbolic links of the sandbox's `/dev` (the host's `/dev` has the same), by name
/// under `/dev` and target.
pub(crate) const DEV_LINKS: [(&str, &str); 5] = [
    ("ptmx", "pts/ptmx"),
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
];

fn build_proc() -> Result<(), SandboxError> {
    let proc_dir = under(NEW, Path::new("/proc"));
    ensure_mount_point(&proc_dir, true)?;
    mount(
        Some("proc"),
        &proc_dir,
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(sys("cannot mount a fresh /proc"))?;
    // Kernel knobs stay readable but not writable, even for a process that thinks it is
    // root in its namespace.
    for entry in ["sys", "sysrq-trigger", "irq", "bus"] {
        let p = proc_dir.join(entry);
        if kind_at(&p).is_some() {
            bind(&p, &p)?;
            read_only(&p, true)?;
        }
    }
    Ok(())
}

/// `/sys` for a sandbox with its own network namespace. A fresh sysfs lists only that
/// namespace's interfaces; the kernel allows it because the namespace belongs to the
/// sandbox's user namespace, but refuses it where the host's `/sys` is itself partly
/// covered (some containers), and then the host's interface directories are masked
/// instead. The host's cgroup tree is bound back read-only, as it was visible before,
/// so that runtimes that size themselves from it keep working.
fn build_sys(masks: &[PathBuf], empties: &mut Empties) -> Result<(), SandboxError> {
    let sys_dir = under(NEW, Path::new("/sys"));
    if !kind_at(&sys_dir).is_some_and(|m| m.is_dir()) {
        return Ok(());
    }
    let fresh = mount(
        Some("sysfs"),
        &sys_dir,
        Some("sysfs"),
        MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    );
    if fresh.is_err() {
        for m in masks {
            let d = under(NEW, m);
            if kind_at(&d).is_some_and(|k| k.is_dir()) {
                mask(&d, empties, true)?;
            }
        }
        return Ok(());
    }
    let cgroup = Path::new("/sys/fs/cgroup");
    let (src, dst) = (under(OLD, cgroup), under(NEW, cgroup));
    if kind_at(&src).is_some_and(|m| m.is_dir()) && kind_at(&dst).is_some_and(|m| m.is_dir()) {
        bind(&src, &dst)?;
        read_only(&dst, true)?;
    }
    Ok(())
}

/// Empty, read-only stand-ins in the staging root, made the first time a mask needs
/// one: every masked file is bound from the empty file (reads as empty, refuses writes
/// with `EROFS`; `/dev/null` would not do, since a device stays writable on a read-only
/// mount and writes would vanish instead of failing) and every masked directory from
/// the empty directory. The binds inherit the read-only flag, so a mask costs one
/// mount, and no new tmpfs. They go away with the staging root.
#[derive(Default)]
struct Empties {
    file: bool,
    dir: bool,
}

const EMPTY_FILE: &str = "/empty-file";
const EMPTY_DIR: &str = "/empty-dir";

impl Empties {
    // The sandbox's own tmpfs, built by the helper inside its mount namespace before the
    // command exists: no run has touched it.
    #[allow(clippy::disallowed_methods)]
    fn get(&mut self, dir: bool) -> Result<&'static Path, SandboxError> {
        let (p, made) = if dir {
            (Path::new(EMPTY_DIR), &mut self.dir)
        } else {
            (Path::new(EMPTY_FILE), &mut self.file)
        };
        if !*made {
            let created = if dir {
                std::fs::DirBuilder::new().mode(0o555).create(p)
            } else {
                std::fs::File::create(p).map(|_| ())
            };
            created.map_err(|e| SandboxError::io(format!("cannot create {}", p.display()), e))?;
            bind(p, p)?;
            read_only(p, false)?;
            *made = true;
        }
        Ok(p)
    }
}

/// Mask `dst` with the empty stand-in of its kind.
fn mask(dst: &Path, empties: &mut Empties, dir: bool) -> Result<(), SandboxError> {
    let empty = empties.get(dir)?;
    mount(
        Some(empty),
        dst,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(sys(format_args!("cannot mask {}", dst.display())))
}

/// Escape a path for overlayfs's option string: `\\`, `,` and (in a layer list) `:` are
/// separators unless escaped.
fn overlay_path(p: &Path) -> Result<String, SandboxError> {
    let s = p.to_str().ok_or_else(|| {
        SandboxError::setup(format!(
            "cannot mount {} through a copy-on-write layer: the path is not UTF-8",
            p.display()
        ))
    })?;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | ':') {
            out.push('\\');
        }
        out.push(c);
    }
    Ok(out)
}

/// Mount `root` through overlayfs, the host's tree as the lower layer. `userxattr`
/// keeps overlayfs's own records in `user.` attributes (and implies `redirect_dir=nofollow`), which an unprivileged user
/// namespace may write; redirects and metacopy stay off, so every change is a whole
/// file or a whiteout that `merge.rs` understands.
fn overlay(root: &Path, upper: &Path, work: &Path) -> Result<(), SandboxError> {
    let lower = under(OLD, root);
    let dst = under(NEW, root);
    let data = format!(
        "lowerdir={},upperdir={},workdir={},userxattr,metacopy=off,index=off,xino=off",
        overlay_path(&lower)?,
        overlay_path(&under(OLD, upper))?,
        overlay_path(&under(OLD, work))?,
    );
    ensure_mount_point(&dst, true)?;
    mount(
        Some("overlay"),
        &dst,
        Some("overlay"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(data.as_str()),
    )
    .map_err(sys(format_args!(
        "cannot mount {} through a copy-on-write layer (overlayfs with user extended attributes is needed; the layer is in {})",
        root.display(),
        upper.display()
    )))
}

/// The running binary, opened through `/proc/self/exe` before the host's tree moves
/// under the staging root, when the plan has a [`MountOp::OwnBinary`].
fn open_own_binary(plan: &Plan) -> Result<Option<std::fs::File>, SandboxError> {
    if !plan
        .ops
        .iter()
        .any(|o| matches!(o, MountOp::OwnBinary { .. }))
    {
        return Ok(None);
    }
    // The kernel's link to this process's own binary.
    #[allow(clippy::disallowed_methods)]
    let exe = std::fs::File::open("/proc/self/exe");
    exe.map(Some)
        .map_err(|e| SandboxError::io("cannot open the running binary (/proc/self/exe)", e))
}

/// The running binary, read-only at `dst`. The kernel refuses to bind the file that
/// `/proc/self/exe` (or any descriptor opened before the mount namespace was made)
/// names: its mount belongs to the host's namespace, not this copy of it (`EINVAL`). So
/// the binary is bound from `src`, looked up in this namespace with the user's own
/// rights, when that is still the running file (same device and inode); otherwise a
/// directory above it is closed to this user, or the file was replaced, and the
/// running image is copied into the staging root and bound from there.
// The sandbox's own tmpfs, built by the helper inside its mount namespace before the
// command exists: no run has touched it.
#[allow(clippy::disallowed_methods)]
fn own_binary(exe: &std::fs::File, src: &Path, dst: &Path) -> Result<(), SandboxError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let running = exe
        .metadata()
        .map_err(|e| SandboxError::io("cannot inspect the running binary", e))?;
    let at_path = under(OLD, src);
    let same = std::fs::metadata(&at_path)
        .is_ok_and(|m| m.dev() == running.dev() && m.ino() == running.ino());
    let from = if same {
        at_path
    } else {
        let copy = PathBuf::from(OWN_BINARY_COPY);
        let write = || -> std::io::Result<()> {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .open(&copy)?;
            std::io::copy(&mut &*exe, &mut out)?;
            out.set_permissions(std::fs::Permissions::from_mode(0o555))
        };
        write().map_err(|e| {
            SandboxError::io(
                format!(
                    "cannot copy the running binary for {} (its path {} is not reachable for this user)",
                    dst.display(),
                    src.display()
                ),
                e,
            )
        })?;
        copy
    };
    let d = under(NEW, dst);
    ensure_mount_point(&d, false)?;
    bind(&from, &d)?;
    read_only(&d, false)
}

/// Where [`own_binary`] copies the running image, in the staging root.
const OWN_BINARY_COPY: &str = "/own-binary";

/// What the ops share while the plan is executed.
struct Build<'p> {
    empties: Empties,
    frozen: Frozen,
    scratch: Scratch,
    layers: &'p [crate::changes::Layer],
    caches: &'p [crate::caches::CacheLayer],
    /// Files of [`MountOp::Text`] written so far in the staging root.
    texts: usize,
    /// The running binary, for [`MountOp::OwnBinary`].
    own_exe: Option<std::fs::File>,
}

// `MountOp::Text`: a file in the sandbox's own staging tmpfs, inside its mount
// namespace before the command exists.
#[allow(clippy::disallowed_methods)]
fn run_op(op: &MountOp, b: &mut Build<'_>) -> Result<(), SandboxError> {
    let empties = &mut b.empties;
    match op {
        MountOp::RootBind { read_only: ro } => {
            let new = Path::new(NEW);
            bind(Path::new(OLD), new)?;
            if *ro {
                read_only(new, true)?;
            }
        }
        MountOp::Tmpfs { path } => {
            let dst = under(NEW, path);
            ensure_mount_point(&dst, true)?;
            // Only mount points go in; no file of the command's.
            tmpfs(&dst, "mode=0755,size=1m", MsFlags::empty())?;
            b.frozen.add(&dst)?;
        }
        MountOp::Scratch { path } => {
            let dst = under(NEW, path);
            ensure_mount_point(&dst, true)?;
            let src = b.scratch.next_dir()?;
            bind(&src, &dst)?;
        }
        MountOp::Dev => build_dev(&mut b.frozen)?,
        MountOp::Proc => build_proc()?,
        MountOp::Sys { masks } => build_sys(masks, empties)?,
        MountOp::Bind {
            src,
            dst,
            read_only: ro,
        } => {
            let s = under(OLD, src);
            let Some(meta) = std::fs::metadata(&s).ok() else {
                // A path that vanished since the plan was made has nothing to show.
                return Ok(());
            };
            let d = under(NEW, dst);
            ensure_mount_point(&d, meta.is_dir())?;
            bind(&s, &d)?;
            if *ro {
                read_only(&d, true)?;
            }
        }
        MountOp::Protect { path } => {
            let d = under(NEW, path);
            match kind_at(&d) {
                Some(m) if m.file_type().is_symlink() => {
                    return Err(SandboxError::new(
                        SandboxErrorKind::ProtectedSymlink,
                        format!(
                            "refusing to start: the protected path {} is a symlink, which could redirect writes",
                            path.display()
                        ),
                    ));
                }
                Some(_) => {
                    bind(&d, &d)?;
                    read_only(&d, true)?;
                }
                None => {}
            }
        }
        MountOp::MaskDir { path } | MountOp::MaskFile { path } => {
            // The plan holds resolved paths. Absent here, the path is under a hidden
            // directory and shows nothing; present as anything but the kind planned (a
            // symlink put there since), it cannot be masked, and the run does not start.
            let dir = matches!(op, MountOp::MaskDir { .. });
            let d = under(NEW, path);
            match kind_at(&d) {
                None => {}
                Some(m) if !m.file_type().is_symlink() && m.is_dir() == dir => {
                    mask(&d, empties, dir)?;
                }
                Some(_) => {
                    return Err(SandboxError::setup(format!(
                        "refusing to start: the masked path {} changed to a symlink or another kind of file, so it cannot be hidden",
                        path.display()
                    )));
                }
            }
        }
        MountOp::Overlay { root } => {
            let layer = b.layers.iter().find(|l| &l.root == root).ok_or_else(|| {
                SandboxError::setup(format!(
                    "no copy-on-write layer was prepared for {}",
                    root.display()
                ))
            })?;
            overlay(&layer.root, &layer.upper, &layer.work)?;
        }
        MountOp::Cache { path } => {
            let cache = b.caches.iter().find(|c| &c.path == path).ok_or_else(|| {
                SandboxError::setup(format!("no cache slot was prepared for {}", path.display()))
            })?;
            match &cache.work {
                Some(work) => overlay(path, &cache.upper, work)?,
                None => {
                    let d = under(NEW, path);
                    ensure_mount_point(&d, true)?;
                    bind(&under(OLD, &cache.upper), &d)?;
                }
            }
        }
        MountOp::Socket { src, dst } => {
            let d = under(NEW, dst);
            ensure_mount_point(&d, false)?;
            bind(&under(OLD, src), &d)?;
            // Connecting needs no write access to the mount, only to the socket file.
            read_only(&d, false)?;
        }
        MountOp::OwnBinary { src, dst } => {
            let exe = b.own_exe.as_ref().ok_or_else(|| {
                SandboxError::setup("the running binary was not opened before the mounts")
            })?;
            own_binary(exe, src, dst)?;
        }
        MountOp::Text { dst, text } => {
            let src = PathBuf::from(format!("/text-{}", b.texts));
            b.texts += 1;
            std::fs::write(&src, text)
                .map_err(|e| SandboxError::io(format!("cannot write {}", src.display()), e))?;
            let d = under(NEW, dst);
            ensure_mount_point(&d, false)?;
            bind(&src, &d)?;
            read_only(&d, false)?;
        }
    }
    Ok(())
}

/// Build the sandbox's root from `plan` and switch to it. The caller must be in a new
/// mount namespace (and a new PID namespace, for `/proc`).
// The sandbox's own tmpfs, built by the helper inside its mount namespace before the
// command exists: no run has touched it.
#[allow(clippy::disallowed_methods)]
pub(crate) fn enter(plan: &Plan) -> Result<(), SandboxError> {
    // Private, not slave: nothing done here propagates to the host, and nothing the
    // host mounts later (a USB drive, a container's overlay) appears in the sandbox
    // with its own, writable flags.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(sys("cannot make the mount tree private"))?;
    let own_exe = open_own_binary(plan)?;
    let stage = Path::new(STAGE);
    tmpfs(stage, "mode=0755", MsFlags::empty())?;
    for d in [NEW, OLD] {
        let p = under(STAGE, Path::new(d));
        std::fs::create_dir(&p)
            .map_err(|e| SandboxError::io(format!("cannot create {}", p.display()), e))?;
    }
    pivot_root(stage, &under(STAGE, Path::new(OLD)))
        .map_err(sys("cannot pivot into the staging root"))?;
    chdir("/").map_err(sys("cannot enter the staging root"))?;
    let mut b = Build {
        empties: Empties::default(),
        frozen: Frozen::default(),
        scratch: Scratch {
            size: plan.scratch_size,
            made: 0,
        },
        layers: &plan.overlays,
        caches: &plan.caches,
        texts: 0,
        own_exe,
    };
    for op in &plan.ops {
        run_op(op, &mut b)?;
    }
    b.frozen.freeze()?;
    chdir(NEW).map_err(sys("cannot enter the new root"))?;
    pivot_root(".", ".").map_err(sys("cannot pivot into the new root"))?;
    // The staging root (and the host tree under it) now sits on top of `.`; detach it.
    umount2(".", MntFlags::MNT_DETACH).map_err(sys("cannot detach the host's root"))?;
    chdir("/").map_err(sys("cannot enter the sandbox root"))?;
    Ok(())
}
