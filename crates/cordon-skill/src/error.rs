//! Errors that stop an inspection or installation before a verdict can be given.

use std::fmt;
use std::path::PathBuf;

/// Why a package could not be judged or installed at all (as opposed to a judged package
/// that was refused, which is a [`crate::Severity::Refuse`] finding).
#[derive(Debug)]
#[non_exhaustive]
pub enum SkillError {
    /// The source is not a directory, zip, tar or gzip-compressed tar, or is corrupt.
    NotAPackage {
        /// The source as given.
        path: PathBuf,
        /// What was wrong, one sentence.
        why: String,
    },
    /// The source or the destination could not be read or written.
    Io {
        /// What cordon was doing.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl SkillError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        SkillError::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn not_package(path: &std::path::Path, why: impl Into<String>) -> Self {
        SkillError::NotAPackage {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillError::NotAPackage { path, why } => write!(
                f,
                "{} is not a readable skill package (a directory, .zip, .tar, .tar.gz or .tgz): {why}",
                path.display()
            ),
            SkillError::Io { what, source } => write!(f, "cannot {what}: {source}"),
        }
    }
}

impl std::error::Error for SkillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SkillError::Io { source, .. } => Some(source),
            SkillError::NotAPackage { .. } => None,
        }
    }
}
