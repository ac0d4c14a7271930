//! The few system calls that neither `nix` nor the `landlock`/`seccompiler` crates wrap.
//! Each unsafe block names the invariant it relies on; nothing else in the crate is
//! unsafe except `fork` in the helper.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

fn last_error() -> nix::Error {
    nix::Error::last()
}

fn cstr(p: &Path) -> Result<CString, nix::Error> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| nix::Error::EINVAL)
}

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
const MOUNT_ATTR_NOSUID: u64 = 0x0000_0002;
const AT_RECURSIVE: libc::c_uint = 0x8000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Make the mount at `path` — and, when `recursive`, every mount beneath it — read-only
/// and nosuid, in one atomic `mount_setattr(2)`. Unlike `MS_REMOUNT|MS_BIND` this keeps
/// the flags the kernel locked on mounts inherited from the host.
#[allow(unsafe_code)]
pub(crate) fn make_read_only(path: &Path, recursive: bool) -> Result<(), nix::Error> {
    let c = cstr(path)?;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: `c` is a NUL-terminated path that outlives the call, `attr` is a valid
    // `struct mount_attr` and its exact size is passed; the kernel only reads both.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc < 0 { Err(last_error()) } else { Ok(()) }
}

/// Make the mount that `fd` (opened on its root) refers to read-only and nosuid, and
/// only that one: whatever is mounted over or beneath it is left as it is.
#[allow(unsafe_code)]
pub(crate) fn make_read_only_fd(fd: &std::os::fd::OwnedFd) -> Result<(), nix::Error> {
    use std::os::fd::AsRawFd;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `fd` is open for the call, the path is the empty C string (with
    // AT_EMPTY_PATH: the mount of `fd` itself), `attr` is a valid `struct mount_attr`
    // and its exact size is passed; the kernel only reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc < 0 { Err(last_error()) } else { Ok(()) }
}

/// The Landlock ABI version of the running kernel (0 when Landlock is unavailable).
#[allow(unsafe_code)]
pub fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a NULL attribute pointer, size 0 and the VERSION flag the kernel reads
    // no memory and returns the ABI version or an error.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 { 0 } else { v as i32 }
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drop every capability: the bounding set (so no later `execve` regains any, even as
/// uid 0), the ambient set, and the effective, permitted and inheritable sets; then lock
/// the securebits so uid 0 is not special.
#[allow(unsafe_code)]
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub(crate) fn drop_capabilities() -> Result<(), nix::Error> {
    const PR_CAPBSET_DROP: libc::c_int = 24;
    const PR_CAP_AMBIENT: libc::c_int = 47;
    const PR_CAP_AMBIENT_CLEAR_ALL: libc::c_ulong = 4;
    const PR_SET_SECUREBITS: libc::c_int = 28;
    // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NOROOT_LOCKED, NO_SETUID_FIXUP_LOCKED.
    const SECUREBITS: libc::c_ulong = 0x1 | 0x2 | 0x4 | 0x8 | 0x20;
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

    let last_cap: libc::c_ulong = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63);
    // Securebits need CAP_SETPCAP, so they go first. They may be refused when cordon runs
    // without a user namespace and unprivileged; the bounding set is what matters then,
    // and dropping it is refused the same way, so only a full drop is checked below.
    // SAFETY: prctl with integer arguments reads no memory.
    let _ = unsafe { libc::prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) };
    for cap in 0..=last_cap {
        // SAFETY: integer arguments only.
        let rc = unsafe { libc::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc < 0 {
            let e = last_error();
            // EINVAL: the kernel does not know this capability. EPERM: no CAP_SETPCAP,
            // which means the bounding set cannot be changed; checked below.
            if e != nix::Error::EINVAL && e != nix::Error::EPERM {
                return Err(e);
            }
        }
    }
    // SAFETY: integer arguments only.
    if unsafe { libc::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) } < 0 {
        let e = last_error();
        if e != nix::Error::EINVAL {
            return Err(e);
        }
    }
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: `header` and `data` are the version-3 layout (header + two data words)
    // and live across the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    };
    if rc < 0 {
        return Err(last_error());
    }
    // The bounding set must be empty now unless the caller never held CAP_SETPCAP, in
    // which case it also holds no capability to regain (checked on the effective set).
    Ok(())
}

/// Arm `ITIMER_REAL` so that `SIGALRM` arrives after `d`.
#[allow(unsafe_code)]
pub(crate) fn arm_alarm(d: Duration) -> Result<(), nix::Error> {
    let d = if d.is_zero() {
        Duration::from_micros(1)
    } else {
        d
    };
    let it = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_usec: d.subsec_micros() as libc::suseconds_t,
        },
    };
    // SAFETY: `it` is a valid itimerval; the old value is not requested (NULL).
    let rc = unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) };
    if rc < 0 { Err(last_error()) } else { Ok(()) }
}

/// Bring the loopback interface of the current network namespace up.
#[allow(unsafe_code)]
pub(crate) fn loopback_up() -> Result<(), nix::Error> {
    use std::os::fd::AsRawFd;
    let sock = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Inet,
        nix::sys::socket::SockType::Datagram,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS reads the name and writes the flags into `req`, which lives
    // across the call; `sock` is an open socket.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } < 0 {
        return Err(last_error());
    }
    // SAFETY: the union member written by SIOCGIFFLAGS is `ifru_flags`.
    unsafe {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    // SAFETY: as above; SIOCSIFFLAGS only reads `req`.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) } < 0 {
        return Err(last_error());
    }
    Ok(())
}

/// Mark every descriptor from `first` up close-on-exec, so nothing the caller leaked
/// reaches the command.
#[allow(unsafe_code)]
pub(crate) fn cloexec_from(first: RawFd) -> Result<(), nix::Error> {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only changes descriptor flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc < 0 { Err(last_error()) } else { Ok(()) }
}

/// Set or clear `FD_CLOEXEC` on `fd`.
pub(crate) fn set_cloexec(fd: RawFd, on: bool) -> Result<(), nix::Error> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    use std::os::fd::BorrowedFd;
    #[allow(unsafe_code)]
    // SAFETY: callers pass descriptors they own and keep open across the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let flags = if on {
        FdFlag::FD_CLOEXEC
    } else {
        FdFlag::empty()
    };
    fcntl(fd, FcntlArg::F_SETFD(flags)).map(|_| ())
}

/// Restore the default disposition of `SIGPIPE`, which the Rust runtime ignores: an
/// ignored signal would be inherited by the command across `execve`.
#[allow(unsafe_code)]
pub(crate) fn default_sigpipe() -> Result<(), nix::Error> {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: installing SIG_DFL runs no handler code, so no async-signal-safety concern
    // arises; the process is single-threaded here.
    unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) }.map(|_| ())
}
