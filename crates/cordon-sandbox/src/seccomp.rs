//! seccomp: the system calls a contained command never needs, refused with an error
//! (never a kill, so programs that probe for a feature fall back cleanly).
//!
//! Installed last, after Landlock and after every capability is gone, so nothing that
//! builds the sandbox needs an exception. `clone3` answers `ENOSYS` so libc falls back to
//! `clone`, whose flags a classic filter can inspect. Refusals with `SECCOMP_RET_ERRNO` are
//! not observable from outside; the report says so.

use crate::error::SandboxError;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;

/// Which socket families the command may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sockets {
    /// `AF_UNIX` only (no network, and no network namespace of its own: the fallback
    /// tier).
    UnixOnly,
    /// `AF_UNIX`, `AF_INET`, `AF_INET6`: at the full tier, in a network namespace that
    /// holds only its own loopback (and the proxy's forwarder, when there is one).
    UnixAndInet,
    /// `AF_UNIX`, and TCP over `AF_INET` and `AF_INET6` (type `SOCK_STREAM`, protocol 0
    /// or TCP), whose connections go through the supervisor (`connect_guard.rs`); no
    /// `MSG_FASTOPEN` (a connection opened by `sendto`/`sendmsg`, not `connect`). The
    /// fallback tier with a proxy, which has no network namespace: nothing else would
    /// contain UDP or ICMP.
    UnixAndTcp,
    /// Any family (full network).
    Any,
}

const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];
/// `CLONE_NEWTIME` shares its bit with `clone`'s exit signal, so it is checked on
/// `unshare` only (`clone3` is refused as a whole).
const CLONE_NEWTIME: u64 = 0x80;

/// `ioctl` requests that inject input into a terminal (same on x86_64 and aarch64).
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// `personality(PER_LINUX)`, the default, and the query `personality(0xffffffff)`: the
/// only persona values allowed. Other flags weaken the command's own defences
/// (`ADDR_NO_RANDOMIZE` turns off ASLR, `READ_IMPLIES_EXEC` makes readable memory
/// executable) or change how the kernel treats it.
const PER_LINUX: u64 = 0;
const PERSONALITY_QUERY: u64 = 0xffff_ffff;

/// System calls refused unconditionally.
fn denied_syscalls() -> Vec<i64> {
    vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_setns,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
    ]
}

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    val: u64,
) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, len, op, val)
        .map_err(|e| SandboxError::setup(format!("seccomp: {e}")))
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conds).map_err(|e| SandboxError::setup(format!("seccomp: {e}")))
}

/// The main filter: every refusal answers `EPERM`.
fn eperm_filter(sockets: Sockets) -> Result<BpfProgram, SandboxError> {
    use SeccompCmpArgLen::{Dword, Qword};
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in denied_syscalls() {
        rules.insert(nr, Vec::new());
    }
    let ns_rules = |arg: u8, flags: &[u64]| -> Result<Vec<SeccompRule>, SandboxError> {
        flags
            .iter()
            .map(|f| rule(vec![cond(arg, Qword, SeccompCmpOp::MaskedEq(*f), *f)?]))
            .collect()
    };
    rules.insert(libc::SYS_clone, ns_rules(0, NAMESPACE_FLAGS)?);
    let mut unshare_flags = NAMESPACE_FLAGS.to_vec();
    unshare_flags.push(CLONE_NEWTIME);
    rules.insert(libc::SYS_unshare, ns_rules(0, &unshare_flags)?);
    // The ioctl request is an `unsigned int` to the kernel: compare the low 32 bits only,
    // so high garbage bits cannot slip past.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Dword, SeccompCmpOp::Eq, TIOCSTI)?])?,
            rule(vec![cond(1, Dword, SeccompCmpOp::Eq, TIOCLINUX)?])?,
        ],
    );
    // The persona is an `unsigned int` to the kernel as well.
    rules.insert(
        libc::SYS_personality,
        vec![rule(vec![
            cond(0, Dword, SeccompCmpOp::Ne, PER_LINUX)?,
            cond(0, Dword, SeccompCmpOp::Ne, PERSONALITY_QUERY)?,
        ])?],
    );
    let families: &[i32] = match sockets {
        Sockets::UnixOnly => &[libc::AF_UNIX],
        Sockets::UnixAndInet | Sockets::UnixAndTcp => {
            &[libc::AF_UNIX, libc::AF_INET, libc::AF_INET6]
        }
        Sockets::Any => &[],
    };
    if !families.is_empty() {
        let conds = families
            .iter()
            .map(|f| cond(0, Dword, SeccompCmpOp::Ne, *f as u64))
            .collect::<Result<Vec<_>, _>>()?;
        let mut socket_rules = vec![rule(conds)?];
        if sockets == Sockets::UnixAndTcp {
            socket_rules.extend(non_tcp_ip_sockets()?);
            for (nr, flags_arg) in [
                (libc::SYS_sendto, 3),
                (libc::SYS_sendmsg, 2),
                (libc::SYS_sendmmsg, 3),
            ] {
                let fastopen = libc::MSG_FASTOPEN as u64;
                rules.insert(
                    nr,
                    vec![rule(vec![cond(
                        flags_arg,
                        Dword,
                        SeccompCmpOp::MaskedEq(fastopen),
                        fastopen,
                    )?])?],
                );
            }
        }
        rules.insert(libc::SYS_socket, socket_rules);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )
    .map_err(|e| SandboxError::setup(format!("seccomp: {e}")))?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SandboxError::setup(format!("seccomp: {e}")))
}

/// `socket` rules refusing an `AF_INET`/`AF_INET6` socket that is not TCP: a type other
/// than `SOCK_STREAM` (the low four bits; the rest are `SOCK_NONBLOCK`/`SOCK_CLOEXEC`),
/// or a stream protocol other than 0 and `IPPROTO_TCP` (MPTCP, SCTP).
fn non_tcp_ip_sockets() -> Result<Vec<SeccompRule>, SandboxError> {
    use SeccompCmpArgLen::Dword;
    const SOCK_TYPE_MASK: u64 = 0xf;
    let mut out = Vec::new();
    for family in [libc::AF_INET, libc::AF_INET6] {
        let fam = || cond(0, Dword, SeccompCmpOp::Eq, family as u64);
        for ty in (0..=SOCK_TYPE_MASK).filter(|t| *t != libc::SOCK_STREAM as u64) {
            out.push(rule(vec![
                fam()?,
                cond(1, Dword, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), ty)?,
            ])?);
        }
        out.push(rule(vec![
            fam()?,
            cond(2, Dword, SeccompCmpOp::Ne, 0)?,
            cond(2, Dword, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
        ])?);
    }
    Ok(out)
}

/// Kill any other architecture, refuse the x32 ABI (syscall numbers with bit 30 set
/// share x86_64's audit arch, so the per-syscall rules would not see them), and answer
/// `clone3` with `ENOSYS` (its flags live in memory a filter cannot read, and libc falls
/// back to `clone`). Hand-written: seccompiler has no range test and one errno per filter.
#[cfg(target_arch = "x86_64")]
fn head_filter() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JGE_K: u16 = 0x35;
    const RET_K: u16 = 0x06;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const RET_KILL_PROCESS: u32 = 0x8000_0000;
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        ins(LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        ins(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        ins(RET_K, 0, 0, RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        ins(JGE_K, 0, 1, X32_SYSCALL_BIT),
        ins(RET_K, 0, 0, RET_ERRNO | libc::EPERM as u32),
        ins(JEQ_K, 0, 1, libc::SYS_clone3 as u32),
        ins(RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32),
        ins(RET_K, 0, 0, RET_ALLOW),
    ]
}

/// On other architectures `clone3` still answers `ENOSYS`.
#[cfg(not(target_arch = "x86_64"))]
fn head_filter() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        ins(LD_W_ABS, 0, 0, 0),
        ins(JEQ_K, 0, 1, libc::SYS_clone3 as u32),
        ins(RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32),
        ins(RET_K, 0, 0, RET_ALLOW),
    ]
}

/// The compiled filters, in installation order. Built before the last fork so that the
/// command's process only installs them.
///
/// The head and the main filter run as one program: the head's final `ALLOW` is dropped
/// so that it falls through into the main filter (whose jumps are all relative to its
/// own instructions). One program means one attach and one pass per system call.
pub(crate) fn filters(sockets: Sockets) -> Result<Vec<BpfProgram>, SandboxError> {
    let mut program = head_filter();
    match program.pop() {
        Some(last) if last.code == 0x06 && last.k == 0x7fff_0000 => {}
        _ => {
            return Err(SandboxError::setup(
                "seccomp: the head filter must end in ALLOW",
            ));
        }
    }
    program.extend(eperm_filter(sockets)?);
    // The kernel refuses longer programs (BPF_MAXINSNS).
    if program.len() > 4096 {
        return Err(SandboxError::setup("seccomp: the filter is too long"));
    }
    Ok(vec![program])
}

/// Install the filters on the calling thread (`PR_SET_NO_NEW_PRIVS` must be set).
pub(crate) fn install(filters: &[BpfProgram]) -> Result<(), SandboxError> {
    for f in filters {
        seccompiler::apply_filter(f).map_err(|e| SandboxError::setup(format!("seccomp: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile() {
        for s in [
            Sockets::UnixOnly,
            Sockets::UnixAndInet,
            Sockets::UnixAndTcp,
            Sockets::Any,
        ] {
            let f = filters(s).unwrap();
            assert!(f.iter().all(|p| !p.is_empty()));
        }
    }

    /// The fallback tier's proxy mode, installed on a thread of its own: TCP and Unix
    /// sockets only, and no connection opened by `sendto`.
    #[test]
    #[allow(unsafe_code)]
    fn the_fallback_proxy_mode_allows_tcp_only() {
        let results = std::thread::spawn(|| {
            nix::sys::prctl::set_no_new_privs().unwrap();
            install(&filters(Sockets::UnixAndTcp).unwrap()).unwrap();
            let open = |family: i32, ty: i32, proto: i32| {
                // SAFETY: socket takes three integers and touches no memory of ours.
                let fd = unsafe { libc::socket(family, ty, proto) };
                if fd >= 0 {
                    // SAFETY: `fd` was just opened here and is closed once.
                    unsafe { libc::close(fd) };
                }
                fd >= 0
            };
            let stream = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
            let sent = {
                // SAFETY: socket takes integers; the fd is closed below.
                let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
                let addr = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: 9u16.to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes([127, 0, 0, 1]),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: the buffer and address are valid for the lengths given.
                let rc = unsafe {
                    libc::sendto(
                        fd,
                        b"x".as_ptr().cast(),
                        1,
                        libc::MSG_FASTOPEN,
                        (&addr as *const libc::sockaddr_in).cast(),
                        std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                    )
                };
                let eperm =
                    rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
                // SAFETY: `fd` was opened above and is closed once.
                unsafe { libc::close(fd) };
                eperm
            };
            [
                open(libc::AF_UNIX, libc::SOCK_STREAM, 0),
                open(libc::AF_INET, stream, 0),
                open(libc::AF_INET6, libc::SOCK_STREAM, libc::IPPROTO_TCP),
                open(libc::AF_INET, libc::SOCK_DGRAM, 0),
                open(libc::AF_INET6, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0),
                open(libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP),
                open(libc::AF_INET, libc::SOCK_STREAM, 262), // IPPROTO_MPTCP
                open(libc::AF_NETLINK, libc::SOCK_RAW, 0),
                sent,
            ]
        })
        .join()
        .unwrap();
        assert_eq!(
            results,
            [true, true, true, false, false, false, false, false, true]
        );
    }

    /// The filter installed on a thread of its own (seccomp and no-new-privs hold per
    /// thread), which then tries each persona.
    #[test]
    #[allow(unsafe_code)]
    fn personality_allows_only_the_default_and_the_query() {
        let results = std::thread::spawn(|| {
            nix::sys::prctl::set_no_new_privs().unwrap();
            install(&filters(Sockets::Any).unwrap()).unwrap();
            [
                0u64,
                0xffff_ffff,
                0x0040000,
                0x0400000,
                0x0008,
                0x1_0000_0000,
            ]
            .map(|persona| {
                // SAFETY: personality takes one integer and touches no memory of ours.
                let rc = unsafe { libc::syscall(libc::SYS_personality, persona) };
                (persona, rc >= 0)
            })
        })
        .join()
        .unwrap();
        assert_eq!(
            results,
            [
                (0, true),
                (0xffff_ffff, true),
                (0x0040000, false),    // ADDR_NO_RANDOMIZE
                (0x0400000, false),    // READ_IMPLIES_EXEC
                (0x0008, false),       // PER_LINUX32
                (0x1_0000_0000, true), // the kernel reads an unsigned int: PER_LINUX
            ]
        );
    }
}
