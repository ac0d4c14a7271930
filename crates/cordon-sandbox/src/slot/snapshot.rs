//! Snapshots of a slot: a zstd-compressed tar stream of its `home/` and `tmp/`, behind a
//! manifest that carries the BLAKE3 hash of the compressed archive.
//!
//! File layout: a [`HEADER_LEN`]-byte header (the line [`SNAPSHOT_MAGIC`], then the
//! manifest as one line of JSON, padded with spaces), then the archive. The developer
//! caches are left out: they are rebuilt from the network and hold overlayfs whiteouts.
//!
//! Restoring trusts nothing in the file. The whole archive is hashed and compared with
//! the manifest before anything is unpacked (and hashed again as it is unpacked); each
//! entry must be a directory, a regular file or a symlink that stays inside its tree,
//! with a relative name of plain components under `home/` or `tmp/`, no setuid or
//! setgid bit, and the totals may not exceed what the manifest declares. Entries are
//! created relative to directory descriptors with `O_NOFOLLOW` and `O_EXCL` in a fresh
//! staging directory beside the slot, which replaces the slot by `rename` only once
//! everything is unpacked: a refused archive leaves the slot as it was.

use super::tree::{Entry, walk};
use super::{SlotError, SlotErrorKind, SlotName, SlotPaths, mkdir_0700};
use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

/// First line of every snapshot file.
pub const SNAPSHOT_MAGIC: &str = "cordon-slot-snapshot 1";
/// Bytes of the header (magic line and manifest) before the archive.
const HEADER_LEN: usize = 4096;
/// The trees of a slot that a snapshot holds.
const TREES: &[&str] = &["home", "tmp"];

/// What a restore unpacks at most, whatever the snapshot declares: a snapshot file is
/// input from anywhere, and its manifest is part of that input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreLimits {
    /// Bytes of regular files, inflated.
    pub bytes: u64,
    /// Entries (directories, regular files, symlinks).
    pub entries: u64,
    /// Components of an entry's name, its tree's top included.
    pub depth: usize,
}

impl RestoreLimits {
    /// cordon's own caps: 16 GiB of files, a million entries, and no name deeper than
    /// the slot walk goes (256 levels), so that whatever is restored can be sized,
    /// snapshotted and removed again.
    pub const DEFAULT: RestoreLimits = RestoreLimits {
        bytes: 16 << 30,
        entries: 1_000_000,
        depth: super::tree::MAX_DEPTH,
    };
}

impl Default for RestoreLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a snapshot says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The slot's key.
    pub key: String,
    /// The slot's scope.
    pub scope: String,
    /// When it was taken (seconds since the epoch).
    pub created: u64,
    /// Directories, regular files and symlinks in the archive.
    pub entries: u64,
    /// Bytes of the regular files.
    pub bytes: u64,
    /// Bytes of the compressed archive.
    pub archive_bytes: u64,
    /// BLAKE3 of the compressed archive (hex).
    pub archive_blake3: String,
}

/// What [`snapshot`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotReport {
    /// The manifest written.
    pub manifest: Manifest,
    /// Symlinks left out because they lead out of the slot.
    pub left_out_links: u64,
    /// Devices, FIFOs and sockets left out.
    pub left_out_special: u64,
}

/// What [`restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    /// The manifest of the snapshot restored.
    pub manifest: Manifest,
}

fn bad(file: &Path, why: impl std::fmt::Display) -> SlotError {
    SlotError::new(
        SlotErrorKind::BadSnapshot,
        format!(
            "refusing the snapshot {}: {why}; nothing was changed",
            file.display()
        ),
    )
}

struct HashWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
    len: u64,
}

impl<W: Write> Write for HashWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

struct HashReader<R> {
    inner: R,
    hasher: blake3::Hasher,
}

impl<R: Read> Read for HashReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Whether `target`, a symlink at `link` (relative to its tree's top, the top included
/// as first component), resolves inside that tree by its own components.
fn link_stays_inside(link: &Path, target: &Path) -> bool {
    if target.is_absolute() {
        return false;
    }
    let mut depth = link.components().count() as i64 - 2;
    for c in target.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return false,
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// Write a snapshot of the slot at `paths` to `out` (replaced atomically when it exists).
/// The caller holds the slot's guard, so no run changes the slot meanwhile.
pub fn snapshot(
    paths: &SlotPaths,
    name: &SlotName,
    out: &Path,
) -> Result<SnapshotReport, SlotError> {
    let out = cordon_fs::OutputFile::prepare(out).map_err(|e| {
        SlotError::io(
            format_args!("cannot write the snapshot {}", out.display()),
            e,
        )
    })?;
    snapshot_to(paths, name, &out)
}

/// [`snapshot`] to an output file anchored earlier: prepare it before taking the slot's
/// guard (a run still in the slot could rename or replace the directory meanwhile), and
/// the snapshot is written in the directory that was there then, under a new name
/// renamed over the file's (a link planted at the name is replaced, never followed).
pub fn snapshot_to(
    paths: &SlotPaths,
    name: &SlotName,
    out_file: &cordon_fs::OutputFile,
) -> Result<SnapshotReport, SlotError> {
    let out = out_file.path();
    if !paths.exists() {
        return Err(SlotError::new(
            SlotErrorKind::NotFound,
            format!("there is no slot {name} to snapshot"),
        ));
    }
    let werr = |e: std::io::Error| {
        SlotError::io(
            format_args!("cannot write the snapshot {}", out.display()),
            e,
        )
    };
    // The archive is streamed into the temporary file `cordon-fs` creates beside the
    // output; a `SlotError` met on the way is kept here and returned as it was.
    let mut failed: Option<SlotError> = None;
    let mut made = None;
    let written = out_file.write_from(0o600, &mut |tmp| {
        let mut fill = || -> Result<(Manifest, u64, u64), SlotError> {
            tmp.write_all(&[b' '; HEADER_LEN]).map_err(werr)?;
            let writer = tmp.try_clone().map_err(werr)?;
            let hashed = HashWriter {
                inner: std::io::BufWriter::new(writer),
                hasher: blake3::Hasher::new(),
                len: 0,
            };
            let encoder = zstd::Encoder::new(hashed, 3).map_err(werr)?;
            let mut tar = tar::Builder::new(encoder);
            tar.mode(tar::HeaderMode::Deterministic);
            let (mut entries, mut bytes, mut links_out, mut special) = (0u64, 0u64, 0u64, 0u64);
            for top in TREES {
                let root = paths.dir.join(top);
                if !std::fs::symlink_metadata(&root).is_ok_and(|m| m.is_dir()) {
                    continue;
                }
                let mut header = tar::Header::new_gnu();
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o700);
                header.set_size(0);
                tar.append_data(&mut header, top, std::io::empty())
                    .map_err(werr)?;
                entries += 1;
                walk(&root, false, &mut |rel, st, entry| {
                    let path = Path::new(top).join(rel);
                    let mut header = tar::Header::new_gnu();
                    header.set_mode(st.st_mode & 0o777);
                    header.set_mtime(u64::try_from(st.st_mtime).unwrap_or(0));
                    header.set_size(0);
                    match entry {
                        Entry::Dir => {
                            header.set_entry_type(tar::EntryType::Directory);
                            tar.append_data(&mut header, &path, std::io::empty())
                                .map_err(werr)?;
                        }
                        Entry::File(fd) => {
                            let size = u64::try_from(st.st_size).unwrap_or(0);
                            header.set_entry_type(tar::EntryType::Regular);
                            header.set_size(size);
                            let file = std::fs::File::from(fd.try_clone().map_err(werr)?);
                            tar.append_data(&mut header, &path, file.take(size))
                                .map_err(werr)?;
                            bytes += size;
                        }
                        Entry::Symlink(target) => {
                            if !link_stays_inside(&path, &target) {
                                links_out += 1;
                                return Ok(());
                            }
                            header.set_entry_type(tar::EntryType::Symlink);
                            tar.append_link(&mut header, &path, &target).map_err(werr)?;
                        }
                        Entry::Other => {
                            special += 1;
                            return Ok(());
                        }
                    }
                    entries += 1;
                    Ok(())
                })?;
            }
            let encoder = tar.into_inner().map_err(werr)?;
            let hashed = encoder.finish().map_err(werr)?;
            let manifest = Manifest {
                key: name.key.clone(),
                scope: name.scope.to_string(),
                created: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
                entries,
                bytes,
                archive_bytes: hashed.len,
                archive_blake3: hashed.hasher.finalize().to_hex().to_string(),
            };
            let mut w = hashed.inner;
            w.flush().map_err(werr)?;
            drop(w);
            let json = serde_json::to_string(&manifest)
                .map_err(|e| SlotError::io("cannot write the snapshot's manifest", e))?;
            let mut head = format!("{SNAPSHOT_MAGIC}\n{json}\n").into_bytes();
            if head.len() > HEADER_LEN {
                return Err(SlotError::io(
                    "cannot write the snapshot",
                    "its manifest is too long",
                ));
            }
            head.resize(HEADER_LEN, b' ');
            tmp.seek(SeekFrom::Start(0)).map_err(werr)?;
            tmp.write_all(&head).map_err(werr)?;
            tmp.sync_all().map_err(werr)?;
            Ok((manifest, links_out, special))
        };
        match fill() {
            Ok(m) => {
                made = Some(m);
                Ok(())
            }
            Err(e) => {
                let shown = e.to_string();
                failed = Some(e);
                Err(std::io::Error::other(shown))
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    written.map_err(|e| {
        SlotError::io(
            format_args!("cannot write the snapshot {}", out.display()),
            e,
        )
    })?;
    let Some((manifest, links_out, special)) = made else {
        return Err(SlotError::io(
            "cannot write the snapshot",
            "nothing was written",
        ));
    };
    Ok(SnapshotReport {
        manifest,
        left_out_links: links_out,
        left_out_special: special,
    })
}

/// Read and check a snapshot's header: its manifest.
pub fn read_manifest(file: &mut std::fs::File, path: &Path) -> Result<Manifest, SlotError> {
    let mut head = vec![0u8; HEADER_LEN];
    file.read_exact(&mut head)
        .map_err(|_| bad(path, "it is not a cordon slot snapshot (too short)"))?;
    let text = std::str::from_utf8(&head).map_err(|_| bad(path, "its header is not text"))?;
    let mut lines = text.splitn(3, '\n');
    if lines.next() != Some(SNAPSHOT_MAGIC) {
        return Err(bad(path, "it is not a cordon slot snapshot"));
    }
    let json = lines.next().unwrap_or_default();
    serde_json::from_str(json)
        .map_err(|e| bad(path, format_args!("its manifest is unreadable ({e})")))
}

/// Restore the slot at `paths` from the snapshot `file`, replacing the slot whole, within
/// [`RestoreLimits::DEFAULT`]. The caller holds the slot's guard.
pub fn restore(paths: &SlotPaths, file: &Path) -> Result<RestoreReport, SlotError> {
    restore_within(paths, file, &RestoreLimits::DEFAULT)
}

/// [`restore`] within `limits`: a snapshot that declares more, or holds more than it
/// declares, is refused.
pub fn restore_within(
    paths: &SlotPaths,
    file: &Path,
    limits: &RestoreLimits,
) -> Result<RestoreReport, SlotError> {
    // A regular file only: the snapshot is read twice (its hash, then its entries), and
    // a FIFO at the path would block the open.
    let (mut f, _) = cordon_fs::open_regular(file).map_err(|e| {
        SlotError::io(
            format_args!("cannot open the snapshot {}", file.display()),
            e,
        )
    })?;
    let manifest = read_manifest(&mut f, file)?;
    if manifest.bytes > limits.bytes || manifest.entries > limits.entries {
        return Err(bad(
            file,
            format_args!(
                "it declares {} entries and {} bytes of files, more than cordon restores ({} entries, {} bytes)",
                manifest.entries, manifest.bytes, limits.entries, limits.bytes
            ),
        ));
    }
    // Pass 1: the archive matches its manifest.
    let mut hasher = blake3::Hasher::new();
    let n = std::io::copy(&mut (&mut f).take(u64::MAX), &mut hasher).map_err(|e| {
        SlotError::io(
            format_args!("cannot read the snapshot {}", file.display()),
            e,
        )
    })?;
    if n != manifest.archive_bytes || hasher.finalize().to_hex().as_str() != manifest.archive_blake3
    {
        return Err(bad(
            file,
            "its archive does not match the hash in its manifest (damaged or altered)",
        ));
    }
    // Every step below is relative to the slots' directory, opened once: a link left
    // at the slot's name, the staging name or the old name is replaced or removed,
    // never followed.
    let parent = mkdir_0700(paths.parent())?;
    let staging = paths.beside("restore");
    let (staging_name, slot_name, old) = (
        base_name(&staging),
        base_name(&paths.dir),
        paths.beside("old"),
    );
    let old_name = base_name(&old);
    let ferr = |what: &Path, e: cordon_fs::FsError| {
        SlotError::io(format_args!("cannot prepare {}", what.display()), e)
    };
    parent
        .remove_tree(staging_name)
        .map_err(|e| ferr(&staging, e))?;
    parent
        .create_dir(staging_name, 0o700)
        .map_err(|e| ferr(&staging, e))?;
    let unpacked = parent
        .open_dir(staging_name)
        .map_err(|e| ferr(&staging, e))
        .and_then(|root| {
            f.seek(SeekFrom::Start(HEADER_LEN as u64))
                .map_err(|e| SlotError::io("cannot read the snapshot", e))?;
            unpack(&mut f, root.into(), &manifest, limits, file)
        });
    if let Err(e) = unpacked {
        let _ = parent.remove_tree(staging_name);
        return Err(e);
    }
    // Swap: the old slot aside, the staging directory in, the old one removed.
    let had = paths.exists();
    if had {
        parent.remove_tree(old_name).map_err(|e| ferr(&old, e))?;
        parent.rename(slot_name, &parent, old_name).map_err(|e| {
            SlotError::io(format_args!("cannot move {} aside", paths.dir.display()), e)
        })?;
    }
    if let Err(e) = parent.rename(staging_name, &parent, slot_name) {
        if had {
            let _ = parent.rename(old_name, &parent, slot_name);
        }
        let _ = parent.remove_tree(staging_name);
        return Err(SlotError::io(
            format_args!(
                "cannot put the restored slot in place at {}",
                paths.dir.display()
            ),
            e,
        ));
    }
    paths.create()?;
    if had {
        parent.remove_tree(old_name).map_err(|e| ferr(&old, e))?;
    }
    Ok(RestoreReport { manifest })
}

/// The last component of a slot path (slot paths are built by `SlotPaths`: never
/// empty, never `..`).
fn base_name(p: &Path) -> &Path {
    Path::new(p.file_name().unwrap_or_default())
}

fn unpack(
    f: &mut std::fs::File,
    root: OwnedFd,
    m: &Manifest,
    limits: &RestoreLimits,
    file: &Path,
) -> Result<(), SlotError> {
    // The manifest was checked against `limits`, but take the smaller of the two anyway:
    // the caps hold even if that check is ever loosened.
    let max_entries = m.entries.min(limits.entries);
    let max_bytes = m.bytes.min(limits.bytes);
    let mut hashed = HashReader {
        inner: f.take(m.archive_bytes),
        hasher: blake3::Hasher::new(),
    };
    let decoder = zstd::Decoder::new(&mut hashed)
        .map_err(|e| bad(file, format_args!("its archive cannot be read ({e})")))?;
    let mut archive = tar::Archive::new(decoder);
    let (mut entries, mut bytes) = (0u64, 0u64);
    let rd = |e: std::io::Error| bad(file, format_args!("its archive cannot be read ({e})"));
    for entry in archive.entries().map_err(rd)? {
        let mut entry = entry.map_err(rd)?;
        entries += 1;
        if entries > max_entries {
            return Err(bad(
                file,
                format_args!(
                    "it holds more entries than its manifest declares or cordon restores ({max_entries})"
                ),
            ));
        }
        let raw = entry.path().map_err(rd)?.into_owned();
        let path = checked_path(&raw).ok_or_else(|| {
            bad(
                file,
                format_args!(
                    "the entry `{}` is not a plain relative name under home/ or tmp/",
                    raw.display()
                ),
            )
        })?;
        if path.components().count() > limits.depth {
            return Err(bad(
                file,
                format_args!(
                    "the entry `{}` is nested deeper than cordon restores ({} levels)",
                    raw.display(),
                    limits.depth
                ),
            ));
        }
        let mode = entry.header().mode().map_err(rd)?;
        if mode & 0o6000 != 0 {
            return Err(bad(
                file,
                format_args!("the entry `{}` has a setuid or setgid bit", path.display()),
            ));
        }
        let (parent, name) = open_parent(&root, &path).map_err(|e| {
            bad(
                file,
                format_args!("cannot place `{}` ({e})", path.display()),
            )
        })?;
        let kind = entry.header().entry_type();
        let place = |e: rustix::io::Errno| {
            bad(
                file,
                format_args!("cannot create `{}` ({e})", path.display()),
            )
        };
        match kind {
            tar::EntryType::Directory => {
                let perm = Mode::from_raw_mode((mode & 0o777) | 0o700);
                match rustix::fs::mkdirat(&parent, name, perm) {
                    Ok(()) => {}
                    // The tops are created on demand by their children's parents? No:
                    // a directory may appear once only, except the tree tops.
                    Err(rustix::io::Errno::EXIST) if path.components().count() == 1 => {}
                    Err(e) => return Err(place(e)),
                }
            }
            tar::EntryType::Regular => {
                let size = entry.header().size().map_err(rd)?;
                bytes = bytes.saturating_add(size);
                if bytes > max_bytes {
                    return Err(bad(
                        file,
                        format_args!(
                            "its files are larger than its manifest declares or cordon restores ({max_bytes} bytes)"
                        ),
                    ));
                }
                let flags = OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC;
                let fd = rustix::fs::openat(
                    &parent,
                    name,
                    flags,
                    Mode::from_raw_mode(mode & 0o777 | 0o600),
                )
                .map_err(place)?;
                let mut out = std::fs::File::from(fd);
                let copied = std::io::copy(&mut (&mut entry).take(size), &mut out).map_err(rd)?;
                if copied != size {
                    return Err(bad(
                        file,
                        format_args!(
                            "the entry `{}` is shorter than its header says",
                            path.display()
                        ),
                    ));
                }
                let _ = rustix::fs::fchmod(&out, Mode::from_raw_mode(mode & 0o777));
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(rd)?
                    .ok_or_else(|| {
                        bad(
                            file,
                            format_args!("the symlink `{}` has no target", path.display()),
                        )
                    })?
                    .into_owned();
                if !link_stays_inside(&path, &target) {
                    return Err(bad(
                        file,
                        format_args!("the symlink `{}` leads out of the slot", path.display()),
                    ));
                }
                rustix::fs::symlinkat(&target, &parent, name).map_err(place)?;
            }
            other => {
                return Err(bad(
                    file,
                    format_args!(
                        "the entry `{}` is a {other:?} (only directories, regular files and symlinks are restored)",
                        path.display()
                    ),
                ));
            }
        }
    }
    // Whatever follows the tar stream belongs to the hash too.
    let mut rest = archive.into_inner();
    std::io::copy(&mut rest, &mut std::io::sink()).map_err(rd)?;
    drop(rest);
    if hashed.hasher.finalize().to_hex().as_str() != m.archive_blake3 {
        return Err(bad(file, "its archive changed while it was read"));
    }
    Ok(())
}

/// A tar entry's name as plain components under one of [`TREES`], or `None`.
fn checked_path(raw: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in raw.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let top = out.components().next()?;
    TREES.iter().any(|t| top.as_os_str() == *t).then_some(out)
}

/// The directory that will hold `path` (opened component by component, never through a
/// symlink) and the entry's own name.
fn open_parent<'p>(
    root: &OwnedFd,
    path: &'p Path,
) -> Result<(OwnedFd, &'p OsStr), rustix::io::Errno> {
    let name = path.file_name().ok_or(rustix::io::Errno::INVAL)?;
    let mut fd = rustix::fs::openat(
        root,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if let Some(parent) = path.parent() {
        for c in parent.components() {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            fd = rustix::fs::openat(&fd, c.as_os_str(), flags, Mode::empty())?;
        }
    }
    Ok((fd, name))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#[path = "snapshot_tests.rs"]
mod tests;
