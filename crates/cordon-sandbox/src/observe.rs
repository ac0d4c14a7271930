//! Observing refused writes, for the denial report.
//!
//! The command installs one more seccomp filter, with `SECCOMP_RET_USER_NOTIF`, on the
//! system calls that write the filesystem (`open`/`openat` only when their flags ask for
//! writing, `creat`, `mkdir*`, `mknod*`, `unlink*`, `rmdir`, `rename*`, `link*`,
//! `symlink*`, `truncate`), and hands the listener to its supervisor (PID 1, or the
//! helper in the fallback tier). The supervisor reads the path the process asked for,
//! predicts from the mount plan and the Landlock rules whether the write is refused,
//! records it if so, and always answers `CONTINUE`: the kernel, not this module,
//! decides. This only observes; it is not a security boundary (the path can change
//! between the read and the system call, which is harmless for a report). The one
//! exception is the fallback tier with a proxy, where the same listener also carries
//! `connect` and `listen`, which `connect_guard.rs` answers.
//!
//! Not observed: `openat2` (its flags live in memory a filter cannot read), writes
//! through descriptors opened before, and anything past [`MAX_RECORDS`].
//!
//! **Cost.** Each observed call waits for the supervisor, so the hand-off is kept short:
//! the listener asks the kernel for synchronous wake-ups (Linux 6.6,
//! `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`: the supervisor runs on the command's CPU and the
//! command resumes on the supervisor's, instead of waking an idle CPU each way), the path
//! is read with one `process_vm_readv`, and the call is let go before it is judged unless
//! a protected path is watched (then the judgement is the answer).

use crate::plan::{MountOp, Plan};
use crate::report::{Blocked, BlockedKind};
use nix::errno::Errno;
use seccompiler::sock_filter;
use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// How many refused writes a report keeps.
pub const MAX_RECORDS: usize = 128;

/// (syscall, dirfd argument, path argument, flags argument) for each observed call.
const WATCHED: &[(i64, Option<usize>, usize, Option<usize>)] = &[
    (libc::SYS_creat, None, 0, None),
    (libc::SYS_mkdir, None, 0, None),
    (libc::SYS_mkdirat, Some(0), 1, None),
    (libc::SYS_mknod, None, 0, None),
    (libc::SYS_mknodat, Some(0), 1, None),
    (libc::SYS_unlink, None, 0, None),
    (libc::SYS_unlinkat, Some(0), 1, None),
    (libc::SYS_rmdir, None, 0, None),
    (libc::SYS_rename, None, 1, None),
    (libc::SYS_renameat, Some(2), 3, None),
    (libc::SYS_renameat2, Some(2), 3, None),
    (libc::SYS_link, None, 1, None),
    (libc::SYS_linkat, Some(2), 3, None),
    (libc::SYS_symlink, None, 1, None),
    (libc::SYS_symlinkat, Some(1), 2, None),
    (libc::SYS_truncate, None, 0, None),
    (libc::SYS_openat, Some(0), 1, Some(2)),
    (libc::SYS_open, None, 0, Some(1)),
];

const WRITE_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND) as u32;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_USER_NOTIF: u32 = 0x7fc0_0000;

/// The observing filter; with `connect`, every `connect` and `listen` is notified too
/// (the fallback tier's guard, `connect_guard.rs`).
fn program(connect: bool) -> Vec<sock_filter> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let mut flagless: Vec<i64> = WATCHED
        .iter()
        .filter(|w| w.3.is_none())
        .map(|w| w.0)
        .collect();
    if connect {
        flagless.extend([libc::SYS_connect, libc::SYS_listen]);
    }
    let flagged: Vec<(i64, usize)> = WATCHED
        .iter()
        .filter_map(|w| w.3.map(|f| (w.0, f)))
        .collect();
    // Layout: 3 header instructions, one per flagless call, three per flagged call,
    // then ALLOW and NOTIFY.
    let allow = 3 + flagless.len() + 3 * flagged.len();
    let notify = allow + 1;
    let off = |from: usize, to: usize| -> u8 { u8::try_from(to - from - 1).unwrap_or(0) };
    let mut p = vec![
        ins(LD_W_ABS, 0, 0, 4),
        ins(JEQ_K, 0, off(1, allow), AUDIT_ARCH),
        ins(LD_W_ABS, 0, 0, 0),
    ];
    for nr in flagless {
        let i = p.len();
        p.push(ins(JEQ_K, off(i, notify), 0, nr as u32));
    }
    for (nr, arg) in flagged {
        let i = p.len();
        p.push(ins(JEQ_K, 0, 2, nr as u32));
        // Low 32 bits of the flags argument.
        p.push(ins(LD_W_ABS, 0, 0, (16 + 8 * arg) as u32));
        p.push(ins(
            JSET_K,
            off(i + 2, notify),
            off(i + 2, allow),
            WRITE_FLAGS,
        ));
    }
    p.push(ins(RET_K, 0, 0, RET_ALLOW));
    p.push(ins(RET_K, 0, 0, RET_USER_NOTIF));
    p
}

#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const sock_filter,
}

/// Install the observing filter on the calling thread and return its listener
/// (`PR_SET_NO_NEW_PRIVS` must be set). With `connect`, the listener must be served:
/// every `connect` and `listen` waits for its answer.
#[allow(unsafe_code)]
pub(crate) fn install(connect: bool) -> Result<OwnedFd, nix::Error> {
    const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
    const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_uint = 8;
    let prog = program(connect);
    let fprog = SockFprog {
        len: u16::try_from(prog.len()).map_err(|_| nix::Error::E2BIG)?,
        filter: prog.as_ptr(),
    };
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel copies the
    // program and returns a new descriptor, which we take ownership of below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const SockFprog,
        )
    };
    if fd < 0 {
        return Err(nix::Error::last());
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Send `fd` over the Unix socket `sock`.
pub(crate) fn send_fd(sock: RawFd, fd: RawFd) -> Result<(), nix::Error> {
    use nix::sys::socket::{ControlMessage, MsgFlags, UnixAddr, sendmsg};
    let iov = [std::io::IoSlice::new(b"l")];
    let fds = [fd];
    sendmsg::<UnixAddr>(
        sock,
        &iov,
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map(|_| ())
}

/// Receive one descriptor from the Unix socket `sock`; `None` when the peer closed it
/// without sending (the command failed before its last step).
#[allow(unsafe_code)]
pub(crate) fn recv_fd(sock: RawFd) -> Option<OwnedFd> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, UnixAddr, recvmsg};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let msg =
        recvmsg::<UnixAddr>(sock, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC).ok()?;
    for c in msg.cmsgs().ok()? {
        if let ControlMessageOwned::ScmRights(fds) = c
            && let Some(fd) = fds.first()
        {
            // SAFETY: the kernel installed this descriptor in our table for this message;
            // nothing else refers to it.
            return Some(unsafe { OwnedFd::from_raw_fd(*fd) });
        }
    }
    None
}

/// `struct seccomp_data`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct SeccompData {
    pub nr: i32,
    pub arch: u32,
    pub ip: u64,
    pub args: [u64; 6],
}

/// `struct seccomp_notif`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct SeccompNotif {
    pub id: u64,
    pub pid: u32,
    pub flags: u32,
    pub data: SeccompData,
}

/// `struct seccomp_notif_resp`.
#[repr(C)]
pub(crate) struct SeccompNotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

/// The answer to one notification.
pub(crate) type NotifResponse = SeccompNotifResp;

impl SeccompNotifResp {
    /// Let the kernel run the call as asked.
    pub(crate) fn proceed(id: u64) -> Self {
        SeccompNotifResp {
            id,
            val: 0,
            error: 0,
            flags: USER_NOTIF_FLAG_CONTINUE,
        }
    }

    /// Fail the call with `errno`.
    pub(crate) fn error(id: u64, errno: i32) -> Self {
        SeccompNotifResp {
            id,
            val: 0,
            error: -errno,
            flags: 0,
        }
    }

    /// The call returns `val` (the supervisor did its work).
    pub(crate) fn value(id: u64, val: i64) -> Self {
        SeccompNotifResp {
            id,
            val,
            error: 0,
            flags: 0,
        }
    }
}

/// Whether the process that made notification `id` still waits on it.
#[allow(unsafe_code)]
pub(crate) fn notif_id_valid(listener: RawFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: reads the 8-byte id the ioctl encodes.
    unsafe { libc::ioctl(listener, NOTIF_ID_VALID, &mut id) == 0 }
}

const NOTIF_RECV: libc::c_ulong = 0xC050_2100;
const NOTIF_SEND: libc::c_ulong = 0xC018_2101;
const NOTIF_ID_VALID: libc::c_ulong = 0x4008_2102;
const USER_NOTIF_FLAG_CONTINUE: u32 = 1;

/// Judges and records what the listener reports.
pub(crate) struct Observer {
    listener: Option<OwnedFd>,
    /// (path prefix, writable) in mount order.
    mounts: Vec<(PathBuf, bool)>,
    /// Where Landlock allows writing.
    landlock_write: Vec<PathBuf>,
    seen: BTreeSet<PathBuf>,
    /// Protected paths inside writable roots that did not exist when the sandbox was
    /// built: creating anything at or beneath them is refused here, as it happens.
    protected_missing: Vec<PathBuf>,
    /// The fallback forwarder's port, when every `connect` is notified and must be
    /// judged (`connect_guard.rs`).
    connect_port: Option<u16>,
    pub records: Vec<Blocked>,
}

impl Observer {
    /// An observer for the full tier (mount plan and Landlock) or the fallback tier
    /// (`plan` is `None`: Landlock only).
    pub(crate) fn new(
        listener: OwnedFd,
        plan: Option<&Plan>,
        landlock_write: Vec<PathBuf>,
    ) -> Self {
        let mut mounts = Vec::new();
        match plan {
            Some(plan) => {
                for op in &plan.ops {
                    match op {
                        MountOp::RootBind { read_only } => mounts.push(("/".into(), !read_only)),
                        // Read-only once built: it holds mount points only.
                        MountOp::Tmpfs { path } => mounts.push((path.clone(), false)),
                        MountOp::Scratch { path } => mounts.push((path.clone(), true)),
                        MountOp::Bind { dst, read_only, .. } => {
                            mounts.push((dst.clone(), !read_only))
                        }
                        MountOp::Protect { path }
                        | MountOp::MaskDir { path }
                        | MountOp::MaskFile { path } => mounts.push((path.clone(), false)),
                        MountOp::Overlay { root } => mounts.push((root.clone(), true)),
                        MountOp::Cache { path } => mounts.push((path.clone(), true)),
                        MountOp::Dev => {
                            mounts.push(("/dev".into(), false));
                            mounts.extend(
                                crate::landlock::DEVICE_FILES
                                    .iter()
                                    .map(|d| (PathBuf::from(d), true)),
                            );
                        }
                        MountOp::Proc => mounts.push(("/proc".into(), false)),
                        MountOp::Sys { .. } => mounts.push(("/sys".into(), false)),
                        MountOp::Socket { dst, .. }
                        | MountOp::Text { dst, .. }
                        | MountOp::OwnBinary { dst, .. } => mounts.push((dst.clone(), false)),
                    }
                }
            }
            None => mounts.push(("/".into(), true)),
        }
        sync_wake_up(listener.as_raw_fd());
        // Every path compared below is in `clean`'s form, as the requests' paths are, so a
        // comparison of bytes at a component boundary is `Path::starts_with`.
        let cleaned = |v: Vec<PathBuf>| v.iter().map(|p| clean(p)).collect::<Vec<_>>();
        Observer {
            listener: Some(listener),
            mounts: mounts.into_iter().map(|(m, rw)| (clean(&m), rw)).collect(),
            landlock_write: cleaned(landlock_write),
            seen: BTreeSet::new(),
            protected_missing: cleaned(plan.map(|p| p.watched_protected()).unwrap_or_default()),
            connect_port: None,
            records: Vec::new(),
        }
    }

    /// Judge every `connect` for the fallback forwarder on `port` (the command installed
    /// the filter with `connect`).
    pub(crate) fn guard_connect(mut self, port: Option<u16>) -> Self {
        self.connect_port = port;
        self
    }

    /// The listener, to poll on; `None` once closed.
    pub(crate) fn listener(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.listener.as_ref().map(|l| l.as_fd())
    }

    fn fd(&self) -> Option<RawFd> {
        self.listener.as_ref().map(|l| l.as_raw_fd())
    }

    /// Stop listening (every observed process is gone).
    pub(crate) fn close(&mut self) {
        self.listener = None;
    }

    /// Would a write to `p` be refused?
    fn refused(&self, p: &Path) -> bool {
        // Virtual files are the kernel's business, not the plan's.
        if p.starts_with("/proc") || p.starts_with("/sys") {
            return false;
        }
        // `/dev/fd/N`, `/dev/stdout` and the like lead to descriptors the command already
        // holds (cargo's jobserver reopens its pipe so): /proc again, never a file.
        let through_proc = crate::mounts::DEV_LINKS.iter().any(|(name, target)| {
            target.starts_with("/proc/") && p.starts_with(Path::new("/dev").join(name))
        });
        if through_proc {
            return false;
        }
        // The innermost mount holding `p`: of the mounts above one path, the longest; of
        // two at the same path, the later (mounted over the first).
        let mount_rw = self
            .mounts
            .iter()
            .filter(|(m, _)| under(p, m))
            .max_by_key(|(m, _)| m.as_os_str().len())
            .is_some_and(|(_, rw)| *rw);
        let landlock_rw = self.landlock_write.iter().any(|w| under(p, w));
        !(mount_rw && landlock_rw)
    }

    /// Handle one notification: read, judge, record, and always let the kernel decide.
    #[allow(unsafe_code)]
    pub(crate) fn handle(&mut self) {
        let Some(fd) = self.fd() else {
            return;
        };
        // SAFETY: all-zero is a valid `seccomp_notif`, and the kernel requires it zeroed.
        let mut req: SeccompNotif = unsafe { std::mem::zeroed() };
        // SAFETY: `req` is a writable `struct seccomp_notif` of the size the ioctl encodes.
        if unsafe { libc::ioctl(fd, NOTIF_RECV, &mut req) } < 0 {
            return;
        }
        if matches!(i64::from(req.data.nr), libc::SYS_connect | libc::SYS_listen) {
            // Notified only with the guard on; without a port, nothing is allowed.
            let answer = crate::connect_guard::judge(fd, &req, self.connect_port.unwrap_or(0));
            // SAFETY: `resp` is a valid `struct seccomp_notif_resp`; the kernel only reads it.
            let _ = unsafe { libc::ioctl(fd, NOTIF_SEND, &answer.resp) };
            if let Some(r) = answer.record
                && self.records.len() < MAX_RECORDS
            {
                self.records.push(r);
            }
            return;
        }
        let target = self.target(&req);
        let mut id = req.id;
        // SAFETY: reads the 8-byte id; checks the process still waits on this call, so
        // what was read belongs to it.
        let valid = unsafe { libc::ioctl(fd, NOTIF_ID_VALID, &mut id) } == 0;
        // Creating a protected path that did not exist is refused now. This check reads
        // the path from the command's memory, which another of its threads could change
        // before the kernel reads it; the removal of such paths after the run stays as the
        // backstop (see `run/settle.rs`).
        let protected = valid
            && target
                .as_ref()
                .is_some_and(|(p, _)| self.protected_missing.iter().any(|m| under(p, m)));
        let resp = if protected {
            SeccompNotifResp::error(req.id, libc::EACCES)
        } else {
            SeccompNotifResp::proceed(req.id)
        };
        // The command goes on while what it asked is judged for the report (the path was
        // read, and checked to be its own, above).
        // SAFETY: `resp` is a valid `struct seccomp_notif_resp`; the kernel only reads it.
        let _ = unsafe { libc::ioctl(fd, NOTIF_SEND, &resp) };
        if let (true, Some((path, call))) = (valid, target)
            && self.records.len() < MAX_RECORDS
            && (protected || self.refused(&path))
            && self.seen.insert(path.clone())
        {
            let detail = if protected {
                format!(
                    "{call} would create a protected path (agent, IDE or git configuration); refused"
                )
            } else {
                format!(
                    "{call} on a path outside the writable roots, or read-only or masked inside them"
                )
            };
            self.records.push(Blocked {
                kind: BlockedKind::Write,
                target: path.display().to_string(),
                detail,
            });
        }
    }

    /// The absolute, lexically clean path of the request, and the call's name.
    fn target(&self, req: &SeccompNotif) -> Option<(PathBuf, &'static str)> {
        let nr = i64::from(req.data.nr);
        let (_, dirfd_arg, path_arg, _) = WATCHED.iter().find(|w| w.0 == nr)?;
        let pid = req.pid;
        let raw = read_string(pid, req.data.args[*path_arg])?;
        let rel =
            PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(raw));
        let base = if rel.is_absolute() {
            PathBuf::from("/")
        } else {
            let dirfd = dirfd_arg.map(|a| req.data.args[a] as i32);
            match dirfd {
                Some(fd) if fd != libc::AT_FDCWD => {
                    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?
                }
                _ => std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?,
            }
        };
        Some((clean(&base.join(rel)), syscall_name(nr)))
    }
}

fn syscall_name(nr: i64) -> &'static str {
    match nr {
        libc::SYS_openat | libc::SYS_open | libc::SYS_creat => "open for writing",
        libc::SYS_mkdir | libc::SYS_mkdirat => "mkdir",
        libc::SYS_mknod | libc::SYS_mknodat => "mknod",
        libc::SYS_unlink | libc::SYS_unlinkat | libc::SYS_rmdir => "delete",
        libc::SYS_rename | libc::SYS_renameat | libc::SYS_renameat2 => "rename",
        libc::SYS_link | libc::SYS_linkat => "hard link",
        libc::SYS_symlink | libc::SYS_symlinkat => "symlink",
        libc::SYS_truncate => "truncate",
        _ => "write",
    }
}

/// Ask the kernel to hand each notification of `listener` over on the current CPU, both
/// ways (Linux 6.6): the command and its supervisor take turns on one CPU instead of each
/// waking the other on another. An older kernel refuses the request, which only costs
/// speed.
#[allow(unsafe_code)]
fn sync_wake_up(listener: RawFd) {
    const NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
    const USER_NOTIF_FD_SYNC_WAKE_UP: libc::c_ulong = 1;
    // SAFETY: this ioctl takes its flags by value and touches no memory of ours.
    let _ = unsafe { libc::ioctl(listener, NOTIF_SET_FLAGS, USER_NOTIF_FD_SYNC_WAKE_UP) };
}

/// Read a NUL-terminated string of at most 4096 bytes from `pid`'s memory.
fn read_string(pid: u32, addr: u64) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let mut got = 0;
    let mut mem: Option<std::fs::File> = None;
    // Read page by page: the string may end before an unmapped page.
    while got < buf.len() {
        let page_left = 4096 - ((addr as usize + got) % 4096);
        let want = page_left.min(buf.len() - got);
        let at = addr + got as u64;
        let chunk = &mut buf[got..got + want];
        let n = match &mem {
            None => match vm_read(pid, at, chunk) {
                Ok(n) => n,
                // Where `process_vm_readv` is refused (a seccomp policy of the host's
                // own), through /proc as before.
                Err(Errno::ENOSYS | Errno::EPERM) => {
                    // The kernel's view of the process's memory, never a FIFO.
                    #[allow(clippy::disallowed_methods)]
                    let f = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
                    let n = std::os::unix::fs::FileExt::read_at(&f, chunk, at).ok()?;
                    mem = Some(f);
                    n
                }
                Err(_) => return None,
            },
            Some(f) => std::os::unix::fs::FileExt::read_at(f, chunk, at).ok()?,
        };
        if n == 0 {
            break;
        }
        if let Some(end) = buf[got..got + n].iter().position(|b| *b == 0) {
            buf.truncate(got + end);
            return Some(buf);
        }
        got += n;
    }
    None
}

/// `buf.len()` bytes at `addr` of `pid`'s memory, with one system call (no descriptor
/// to open and close for each notification).
#[allow(unsafe_code)]
fn vm_read(pid: u32, addr: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` describes `buf`, which is writable and outlives the call; `remote`
    // names memory of the other process, which the kernel reads with its own checks.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

/// Remove `.` and resolve `..` lexically.
/// Is `p` at or below `dir`? Both in [`clean`]'s form (absolute, no `.`, `..` or empty
/// component, no trailing `/`): then this is [`Path::starts_with`], by bytes, which the
/// observer asks of every mount for every call it sees.
fn under(p: &Path, dir: &Path) -> bool {
    let (p, d) = (p.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    d == b"/" || (p.starts_with(d) && (p.len() == d.len() || p[d.len()] == b'/'))
}

fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_is_starts_with_for_clean_paths() {
        let paths = [
            "/",
            "/a",
            "/ab",
            "/a/b",
            "/a/bc",
            "/a/b/c",
            "/home/u",
            "/home/u/.ssh",
            "/home/user",
            "/home/u2/x",
            "/.a",
            "/a/.b",
        ];
        for p in paths {
            for d in paths {
                let (p, d) = (Path::new(p), Path::new(d));
                assert_eq!(
                    under(p, d),
                    p.starts_with(d),
                    "{} under {}",
                    p.display(),
                    d.display()
                );
            }
        }
        // What `clean` makes of other spellings compares the same way.
        let dir = clean(Path::new("/home//u/./"));
        assert!(under(&clean(Path::new("/home/u/../u/.ssh")), &dir));
        assert!(!under(&clean(Path::new("/home/u/../u2")), &dir));
    }

    #[test]
    fn program_jumps_land_inside() {
        for connect in [false, true] {
            let p = program(connect);
            for (i, ins) in p.iter().enumerate() {
                if ins.code & 0x07 == 0x05 {
                    assert!(i + 1 + (ins.jt as usize) < p.len());
                    assert!(i + 1 + (ins.jf as usize) < p.len());
                }
            }
            assert_eq!(p[p.len() - 1].k, RET_USER_NOTIF);
            let watches_connect = p.iter().any(|i| i.k == libc::SYS_connect as u32);
            assert_eq!(watches_connect, connect);
        }
    }

    #[test]
    fn lexical_clean() {
        assert_eq!(clean(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(clean(Path::new("/../x")), PathBuf::from("/x"));
    }

    #[test]
    fn refusal_prediction_follows_the_plan() {
        let plan = Plan {
            ops: vec![
                MountOp::RootBind { read_only: true },
                MountOp::Scratch {
                    path: "/tmp".into(),
                },
                MountOp::Tmpfs {
                    path: "/run".into(),
                },
                MountOp::Dev,
                MountOp::Bind {
                    src: "/w".into(),
                    dst: "/w".into(),
                    read_only: false,
                },
                MountOp::Protect {
                    path: "/w/.git/hooks".into(),
                },
            ],
            ..Default::default()
        };
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let o = Observer::new(
            OwnedFd::from(a),
            Some(&plan),
            vec!["/w".into(), "/tmp".into(), "/run".into(), "/dev".into()],
        );
        // A hiding tmpfs and /dev are read-only, but for the devices.
        assert!(o.refused(Path::new("/run/x")));
        assert!(o.refused(Path::new("/dev/x")));
        assert!(!o.refused(Path::new("/dev/null")));
        assert!(o.refused(Path::new("/usr/x")));
        assert!(o.refused(Path::new("/w/.git/hooks/pre-commit")));
        assert!(!o.refused(Path::new("/w/src/main.rs")));
        assert!(!o.refused(Path::new("/tmp/x")));
        assert!(!o.refused(Path::new("/proc/self/attr/current")));
        // Descriptors reopened through /dev's links are not writes to /dev.
        assert!(!o.refused(Path::new("/dev/fd/7")));
        assert!(!o.refused(Path::new("/dev/stdout")));
        assert!(o.refused(Path::new("/dev/fdx")));
    }
}
