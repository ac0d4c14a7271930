#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Package builders for the tests: every archive is generated here, byte by byte where
//! the archive crates would refuse to write something malicious.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

pub const SKILL: &str = "---\nname: demo\ndescription: A demo skill\nscripts:\n  - scripts/run.sh\n---\n# Demo\n\nRun `scripts/run.sh`.\n";
pub const RUN: &str = "#!/bin/sh\nls -la\n";

/// One tar entry, written with a raw name (no checks of the tar crate's own).
pub struct T<'a> {
    pub name: &'a [u8],
    pub ty: tar::EntryType,
    pub mode: u32,
    pub data: &'a [u8],
    pub link: &'a [u8],
}

pub fn f<'a>(name: &'a str, data: &'a str) -> T<'a> {
    T {
        name: name.as_bytes(),
        ty: tar::EntryType::Regular,
        mode: 0o644,
        data: data.as_bytes(),
        link: b"",
    }
}

pub fn tar_bytes(entries: &[T<'_>]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_gnu();
        let name = &mut h.as_old_mut().name;
        name[..e.name.len()].copy_from_slice(e.name);
        h.set_entry_type(e.ty);
        h.set_mode(e.mode);
        h.set_size(e.data.len() as u64);
        if !e.link.is_empty() {
            h.set_link_name_literal(e.link).unwrap();
        }
        h.set_cksum();
        b.append(&h, e.data).unwrap();
    }
    b.into_inner().unwrap()
}

pub fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// Zip entries (name, content, unix mode), deflated.
pub fn zip_bytes(entries: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data, mode) in entries {
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(*mode);
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A package directory with SKILL.md, the declared script and a resource.
pub fn dir_pkg(root: &Path, skill: &str, run: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::write(root.join("SKILL.md"), skill).unwrap();
    std::fs::write(root.join("scripts/run.sh"), run).unwrap();
    std::fs::set_permissions(
        root.join("scripts/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(root.join("notes.txt"), "plain notes\n").unwrap();
    root.to_path_buf()
}

/// Set the unix mode (file type and permission bits) of `name` in a zip's central
/// directory: the zip writer masks modes to `0o777`, an attacker's tool does not.
pub fn set_zip_mode(mut z: Vec<u8>, name: &str, mode: u32) -> Vec<u8> {
    let mut i = 0;
    while i + 46 < z.len() {
        if &z[i..i + 4] == b"PK\x01\x02" {
            let n = u16::from_le_bytes([z[i + 28], z[i + 29]]) as usize;
            if &z[i + 46..i + 46 + n] == name.as_bytes() {
                z[i + 5] = 3; // made by: Unix
                z[i + 38..i + 42].copy_from_slice(&(mode << 16).to_le_bytes());
            }
        }
        i += 1;
    }
    z
}
