//! Reading a package source as a stream of entries. This module only reads: names, kinds
//! and modes are passed on as the source states them, and the inspector decides.

use crate::error::SkillError;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What kind of source a package came in, told from its content (not its file name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SourceKind {
    /// A directory on disk.
    Directory,
    /// A zip archive.
    Zip,
    /// An uncompressed tar archive.
    Tar,
    /// A gzip-compressed tar archive.
    TarGz,
}

/// The kind of one entry, as the source declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink(Vec<u8>),
    HardLink(Vec<u8>),
    Device,
    Fifo,
    Socket,
    Other(String),
}

/// One entry's header.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub name: Vec<u8>,
    pub kind: Kind,
    /// Permission bits including setuid/setgid/sticky (`0o7777`).
    pub mode: u32,
}

/// Whether the walk goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// A visitor of entries: the header and a reader of its content (empty for non-files).
pub(crate) type Visit<'a> = dyn FnMut(Meta, &mut dyn Read) -> Result<Flow, SkillError> + 'a;

/// Tell what `path` is.
pub(crate) fn sniff(path: &Path) -> Result<SourceKind, SkillError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| SkillError::not_package(path, format!("it cannot be read ({e})")))?;
    if meta.is_dir() {
        return Ok(SourceKind::Directory);
    }
    let mut head = [0u8; 262];
    let (mut f, _) = cordon_fs::open_regular(path)
        .map_err(|e| SkillError::not_package(path, format!("it cannot be opened ({e})")))?;
    let n = read_full(&mut f, &mut head)
        .map_err(|e| SkillError::not_package(path, format!("it cannot be read ({e})")))?;
    let head = &head[..n];
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Ok(SourceKind::Zip)
    } else if head.starts_with(&[0x1f, 0x8b]) {
        Ok(SourceKind::TarGz)
    } else if head.len() >= 262 && &head[257..262] == b"ustar" {
        Ok(SourceKind::Tar)
    } else {
        Err(SkillError::not_package(
            path,
            "its content is none of these formats",
        ))
    }
}

fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Walk every entry of `path` in the order the source holds them.
pub(crate) fn walk(
    path: &Path,
    kind: SourceKind,
    max_entries: u64,
    visit: &mut Visit<'_>,
) -> Result<(), SkillError> {
    match kind {
        SourceKind::Directory => walk_dir(path, visit),
        SourceKind::Zip => walk_zip(path, max_entries, visit),
        SourceKind::Tar => {
            let f = open(path)?;
            walk_tar(path, BufReader::new(f), visit)
        }
        SourceKind::TarGz => {
            let f = open(path)?;
            walk_tar(path, flate2::read::GzDecoder::new(BufReader::new(f)), visit)
        }
    }
}

/// A package archive: a regular file only (it is opened twice, to sniff and to read, and
/// a FIFO at the path would block the open).
fn open(path: &Path) -> Result<File, SkillError> {
    cordon_fs::open_regular(path)
        .map(|(f, _)| f)
        .map_err(|e| SkillError::not_package(path, format!("it cannot be opened ({e})")))
}

fn walk_tar(path: &Path, reader: impl Read, visit: &mut Visit<'_>) -> Result<(), SkillError> {
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .map_err(|e| SkillError::not_package(path, e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| SkillError::not_package(path, e.to_string()))?;
        let header = entry.header();
        let mode = header.mode().unwrap_or(0) & 0o7777;
        let ty = header.entry_type();
        let link = || {
            entry
                .link_name_bytes()
                .map(|b| b.into_owned())
                .unwrap_or_default()
        };
        let kind = if ty.is_file() || ty.is_contiguous() {
            Kind::File
        } else if ty.is_dir() {
            Kind::Dir
        } else if ty.is_symlink() {
            Kind::Symlink(link())
        } else if ty.is_hard_link() {
            Kind::HardLink(link())
        } else if ty.is_character_special() || ty.is_block_special() {
            Kind::Device
        } else if ty.is_fifo() {
            Kind::Fifo
        } else {
            Kind::Other(format!("tar entry type {:?}", ty.as_byte() as char))
        };
        let meta = Meta {
            name: entry.path_bytes().into_owned(),
            kind,
            mode,
        };
        if visit(meta, &mut entry)? == Flow::Stop {
            break;
        }
    }
    Ok(())
}

/// Walk an archive held in memory (a package's nested archive), as [`walk`] does a file.
/// `path` only names it in errors.
pub(crate) fn walk_bytes(
    path: &Path,
    bytes: &[u8],
    kind: SourceKind,
    max_entries: u64,
    visit: &mut Visit<'_>,
) -> Result<(), SkillError> {
    match kind {
        SourceKind::Directory => Err(SkillError::not_package(path, "it is not an archive")),
        SourceKind::Zip => walk_zip_from(path, std::io::Cursor::new(bytes), max_entries, visit),
        SourceKind::Tar => walk_tar(path, bytes, visit),
        SourceKind::TarGz => walk_tar(path, flate2::read::GzDecoder::new(bytes), visit),
    }
}

fn walk_zip(path: &Path, max_entries: u64, visit: &mut Visit<'_>) -> Result<(), SkillError> {
    let f = open(path)?;
    walk_zip_from(path, BufReader::new(f), max_entries, visit)
}

fn walk_zip_from(
    path: &Path,
    reader: impl Read + std::io::Seek,
    max_entries: u64,
    visit: &mut Visit<'_>,
) -> Result<(), SkillError> {
    let mut archive =
        zip::ZipArchive::new(reader).map_err(|e| SkillError::not_package(path, e.to_string()))?;
    // The central directory's count is a claim, but one that only makes the walk shorter:
    // every entry is still counted as it is visited.
    let count = archive.len();
    for i in 0..count {
        if i as u64 > max_entries {
            break;
        }
        let mut file = archive
            .by_index(i)
            .map_err(|e| SkillError::not_package(path, format!("entry {i}: {e}")))?;
        // The raw Unix mode: the zip crate's `unix_mode` clears setuid/setgid/sticky,
        // which are exactly what must be seen here.
        let raw = file.external_attributes() >> 16;
        let unix = if file.system() == zip::System::Unix && raw != 0 {
            Some(raw)
        } else {
            file.unix_mode()
        };
        let mode = unix.unwrap_or(0o644) & 0o7777;
        let fmt = unix.map(|m| m & 0o170000).unwrap_or(0);
        let name = file.name_raw().to_vec();
        let kind = if file.is_dir() {
            Kind::Dir
        } else if file.is_symlink() || fmt == 0o120000 {
            let mut target = Vec::new();
            (&mut file)
                .take(4097)
                .read_to_end(&mut target)
                .map_err(|e| SkillError::not_package(path, format!("entry {i}: {e}")))?;
            Kind::Symlink(target)
        } else {
            match fmt {
                0o020000 | 0o060000 => Kind::Device,
                0o010000 => Kind::Fifo,
                0o140000 => Kind::Socket,
                _ => Kind::File,
            }
        };
        if visit(Meta { name, kind, mode }, &mut file)? == Flow::Stop {
            break;
        }
    }
    Ok(())
}

/// Deepest directory level of a directory source that is walked.
const MAX_DEPTH: usize = 256;

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Walk a directory source relative to directory descriptors: every directory is opened
/// from its parent's descriptor with `O_NOFOLLOW | O_DIRECTORY` and every file with
/// `O_NOFOLLOW`, and what was opened is checked with `fstat`. A directory swapped for a
/// symlink while the walk runs fails to open instead of leading the walk out of the
/// package (as `cordon-sandbox`'s slot walk does; that one reports to slots, this one
/// to the inspector, so the few lines are not shared across the crates).
fn walk_dir(root: &Path, visit: &mut Visit<'_>) -> Result<(), SkillError> {
    let fd = cordon_fs::Dir::open_ambient(root)
        .map(OwnedFd::from)
        .map_err(|e| {
            SkillError::io(
                format!(
                    "open {} (it must be a directory, not a link)",
                    root.display()
                ),
                e.into(),
            )
        })?;
    walk_dir_at(root, &fd, Path::new(""), 0, visit).map(|_| ())
}

fn walk_dir_at(
    root: &Path,
    fd: &OwnedFd,
    rel: &Path,
    depth: usize,
    visit: &mut Visit<'_>,
) -> Result<Flow, SkillError> {
    let err = |what: &Path, e: rustix::io::Errno| {
        SkillError::io(format!("read {}", root.join(what).display()), e.into())
    };
    if depth >= MAX_DEPTH {
        return Err(SkillError::io(
            format!("read {}", root.join(rel).display()),
            std::io::Error::other(format!("nested more than {MAX_DEPTH} directories deep")),
        ));
    }
    let mut names: Vec<Vec<u8>> = Vec::new();
    for entry in Dir::read_from(fd).map_err(|e| err(rel, e))? {
        let entry = entry.map_err(|e| err(rel, e))?;
        let n = entry.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push(n.to_vec());
        }
    }
    names.sort();
    for name in names {
        let name = OsStr::from_bytes(&name);
        // A checkout's own history is not part of the package.
        if depth == 0 && name == ".git" {
            continue;
        }
        let rel_path = rel.join(name);
        let st = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| err(&rel_path, e))?;
        let meta = |kind| Meta {
            name: rel_path.as_os_str().as_bytes().to_vec(),
            kind,
            mode: st.st_mode & 0o7777,
        };
        let flow = match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => {
                // Opened before it is reported: what is walked is what was opened.
                let sub = rustix::fs::openat(fd, name, dir_flags(), Mode::empty())
                    .map_err(|e| err(&rel_path, e))?;
                if visit(meta(Kind::Dir), &mut std::io::empty())? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                walk_dir_at(root, &sub, &rel_path, depth + 1, visit)?
            }
            FileType::Symlink => {
                let target =
                    rustix::fs::readlinkat(fd, name, Vec::new()).map_err(|e| err(&rel_path, e))?;
                visit(
                    meta(Kind::Symlink(target.into_bytes())),
                    &mut std::io::empty(),
                )?
            }
            FileType::RegularFile => {
                let f = rustix::fs::openat(
                    fd,
                    name,
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
                    Mode::empty(),
                )
                .map_err(|e| err(&rel_path, e))?;
                // What was opened decides, not the earlier look at the name.
                let st = rustix::fs::fstat(&f).map_err(|e| err(&rel_path, e))?;
                let kind = if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                    Kind::Other("an entry that changed while it was read".into())
                } else if st.st_nlink > 1 {
                    Kind::HardLink(Vec::new())
                } else {
                    Kind::File
                };
                let m = Meta {
                    name: rel_path.as_os_str().as_bytes().to_vec(),
                    kind,
                    mode: st.st_mode & 0o7777,
                };
                if m.kind == Kind::File {
                    visit(m, &mut File::from(f))?
                } else {
                    visit(m, &mut std::io::empty())?
                }
            }
            FileType::BlockDevice | FileType::CharacterDevice => {
                visit(meta(Kind::Device), &mut std::io::empty())?
            }
            FileType::Fifo => visit(meta(Kind::Fifo), &mut std::io::empty())?,
            _ => visit(meta(Kind::Socket), &mut std::io::empty())?,
        };
        if flow == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}
