//! A slot as the sandbox's HOME: refused where it cannot be one, and its mount points
//! made real directories before the helper mounts over them.

use super::HomeView;
use crate::error::SandboxError;
use crate::plan::Plan;
use crate::slot::SlotMounts;
use cordon_policy::settings::SandboxMode;
use std::path::Path;

/// Refuse a slot where it cannot be HOME.
pub(super) fn check_slot(
    slot: &SlotMounts,
    mode: SandboxMode,
    view: HomeView,
    home: &Path,
) -> Result<(), SandboxError> {
    if matches!(mode, SandboxMode::FullAccess) {
        return Err(SandboxError::invalid(
            "a slot cannot be used in full-access mode, which shows the real HOME writable; choose another --sandbox mode",
        ));
    }
    if view == HomeView::Visible {
        return Err(SandboxError::invalid(
            "a slot is the sandbox's HOME, so it cannot be used with --home visible",
        ));
    }
    if !home.is_dir() {
        return Err(SandboxError::invalid(format!(
            "a slot becomes the sandbox's HOME, and HOME ({}) is not a directory",
            home.display()
        )));
    }
    for d in [Some(&slot.home), slot.tmp.as_ref(), Some(&slot.caches)]
        .into_iter()
        .flatten()
    {
        if !std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()) {
            return Err(SandboxError::invalid(format!(
                "the slot directory {} is missing or not a directory",
                d.display()
            )));
        }
    }
    Ok(())
}

/// Make every directory on the way to a mount point under HOME a real directory of the
/// slot before the helper mounts: the slot was written by earlier sandboxed runs, and the
/// helper, which creates missing mount points, would otherwise follow a symlink planted
/// there (`~/.local -> /somewhere/on/the/host`) and create a directory where it leads.
/// Each component is opened with `O_NOFOLLOW` relative to its parent; a symlink or a
/// file in the way refuses the run.
pub(super) fn prepare_slot_mount_points(
    slot: &SlotMounts,
    home: &Path,
    plan: &Plan,
) -> Result<(), SandboxError> {
    use crate::plan::MountOp;
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let root = cordon_fs::Dir::open_ambient(&slot.home).map_err(|e| {
        SandboxError::setup(format!("cannot open the slot {}: {e}", slot.home.display()))
    })?;
    for op in &plan.ops {
        let dst = match op {
            MountOp::Bind { dst, .. } | MountOp::Socket { dst, .. } => dst,
            MountOp::Tmpfs { path }
            | MountOp::Scratch { path }
            | MountOp::Cache { path }
            | MountOp::MaskDir { path }
            | MountOp::MaskFile { path } => path,
            MountOp::Overlay { root } => root,
            _ => continue,
        };
        let Ok(rel) = dst.strip_prefix(home) else {
            continue;
        };
        let Some(parent) = rel.parent() else {
            continue;
        };
        let mut fd = rustix::fs::openat(&root, ".", flags, Mode::empty())
            .map_err(|e| SandboxError::setup(format!("cannot open the slot: {e}")))?;
        for c in parent.components() {
            let name = c.as_os_str();
            let refuse = |why: String| {
                SandboxError::setup(format!(
                    "refusing to start: in the slot's HOME, {} {why}, where cordon mounts {}; remove it, or the slot (`cordon slots rm`)",
                    home.join(rel.parent().unwrap_or(rel)).display(),
                    dst.display()
                ))
            };
            match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(refuse(format!("cannot be created ({e})"))),
            }
            fd = rustix::fs::openat(&fd, name, flags, Mode::empty())
                .map_err(|e| refuse(format!("is not a plain directory ({e})")))?;
        }
    }
    Ok(())
}
