//! The sandbox's namespaces, as far as they can be made before the spec is known: the
//! user, IPC, UTS and network namespaces with the uid/gid maps, and the probe that
//! tells `cordon doctor` whether this host can make the full tier's namespaces at all.
//! (The mount and PID namespaces wait for the spec: see `run_inner`.)
//!
//! It must never fork, and never run in the caller's own process: a namespace cannot be
//! left again, so only the re-executed helper, or the throwaway probe, enters one.

use nix::errno::Errno;
use nix::sched::{CloneFlags, unshare};
use nix::unistd::{getgid, getuid};
use std::path::Path;

/// Make the sandbox's user, IPC, UTS and (when `isolate_net`) network namespaces for
/// this process, map its uid and gid, and make it non-dumpable (after the maps, which a
/// non-dumpable process could not write). The mount and PID namespaces are made later,
/// when the spec is here (`run_inner`): the mount table's copy must be the one the
/// mount plan was computed against.
pub(super) fn unshare_namespaces(isolate_net: bool) -> Result<(), nix::Error> {
    let uid = getuid();
    let gid = getgid();
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
    if isolate_net {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).and_then(|()| write_id_maps(uid.as_raw(), gid.as_raw()))?;
    // Nothing outside can read this process's memory or descriptors through /proc
    // (such as the spec pipe) while it waits for the spec. (`run_inner` sets it again
    // and checks the result.)
    let _ = nix::sys::prctl::set_dumpable(false);
    Ok(())
}

#[allow(clippy::disallowed_methods)] // /proc/self's id maps: a kernel interface no run can reach.
fn write_id_maps(uid: u32, gid: u32) -> Result<(), nix::Error> {
    let w = |path: &str, text: String| {
        std::fs::write(path, text)
            .map_err(|e| e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO))
    };
    w("/proc/self/setgroups", "deny".into())?;
    w("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    w("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// Can this host create the namespaces the full tier needs? Run in a throwaway helper
/// process, so the caller's own process is never changed.
pub(super) fn probe_namespaces() -> Result<(), String> {
    let uid = getuid().as_raw();
    let gid = getgid().as_raw();
    unshare(
        CloneFlags::CLONE_NEWUSER
            | CloneFlags::CLONE_NEWNS
            | CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS
            | CloneFlags::CLONE_NEWNET,
    )
    .map_err(|e| {
        format!(
            "unshare of user, mount, PID, IPC, UTS and network namespaces failed: {}",
            e.desc()
        )
    })?;
    write_id_maps(uid, gid)
        .map_err(|e| format!("writing the uid/gid maps failed: {}", e.desc()))?;
    nix::mount::mount(
        None::<&str>,
        "/",
        None::<&str>,
        nix::mount::MsFlags::MS_REC | nix::mount::MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|e| format!("making the mount tree private failed: {}", e.desc()))?;
    nix::mount::mount(
        Some("tmpfs"),
        Path::new("/tmp"),
        Some("tmpfs"),
        nix::mount::MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| format!("mounting a tmpfs failed: {}", e.desc()))?;
    Ok(())
}
