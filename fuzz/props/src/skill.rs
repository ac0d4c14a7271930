//! Skill archives (zip, tar, gzip-compressed tar): inspected and installed.
//!
//! The bytes are the package file. It is installed (`yes`: as if a human said yes to the
//! review) with small limits into a fresh directory. Properties: nothing is created
//! outside the install directory; no symbolic link is installed (internal links are not
//! allowed here); no staging directory is left behind; what is installed keeps within
//! the limits (entries, bytes of a file, bytes in all).

use cordon_skill::{InspectOptions, InstallOptions, Limits, MANIFEST_NAME, SourceInfo, install};
use std::path::Path;

const LIMITS: Limits = Limits {
    max_entries: 64,
    max_file_bytes: 64 << 10,
    max_total_bytes: 256 << 10,
    max_name_bytes: 255,
};

/// Every entry below `dir`, as (path, metadata), without following links.
fn walk(dir: &Path, out: &mut Vec<(std::path::PathBuf, std::fs::Metadata)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let is_dir = m.is_dir();
        out.push((p.clone(), m));
        if is_dir {
            walk(&p, out);
        }
    }
}

/// The property.
pub fn check(data: &[u8]) {
    let root = crate::scratch::input_dir("cordon-fuzz-skill");
    let src = root.path().join("package");
    #[allow(clippy::disallowed_methods)] // the fuzz input is written with std::fs
    std::fs::write(&src, data).expect("the package file");
    let into = root.path().join("into");
    let opts = InstallOptions {
        inspect: InspectOptions {
            limits: LIMITS,
            allow_internal_symlinks: false,
        },
        into: into.clone(),
        source: SourceInfo {
            location: "fuzz".into(),
            revision: None,
        },
        upgrade: false,
        yes: true,
    };
    let result = install(&src, &opts);
    let mut all = Vec::new();
    walk(root.path(), &mut all);
    let mut entries = 0u64;
    let mut total = 0u64;
    for (p, m) in &all {
        if *p == src || *p == into {
            continue;
        }
        assert!(
            p.starts_with(&into),
            "{} was created outside the install directory ({result:?})",
            p.display()
        );
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            !name.starts_with(".cordon-stage-"),
            "a staging directory was left: {}",
            p.display()
        );
        assert!(
            !m.file_type().is_symlink(),
            "a link was installed: {}",
            p.display()
        );
        if p.parent() == Some(into.as_path()) || name == MANIFEST_NAME {
            continue;
        }
        entries += 1;
        if m.is_file() {
            assert!(
                m.len() <= LIMITS.max_file_bytes,
                "{} is {} bytes",
                p.display(),
                m.len()
            );
            total += m.len();
        }
    }
    assert!(entries <= LIMITS.max_entries, "{entries} entries installed");
    assert!(total <= LIMITS.max_total_bytes, "{total} bytes installed");
    if let Ok(i) = &result
        && i.installed
    {
        let t = i
            .target
            .as_ref()
            .expect("an installed package has a target");
        assert!(
            t.starts_with(&into) && t.is_dir(),
            "installed at {}",
            t.display()
        );
    }
}
