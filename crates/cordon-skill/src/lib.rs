//! cordon-skill: vet an agent skill package before it is installed, and install it
//! atomically with a manifest of what was installed.
//!
//! A skill is a folder with a `SKILL.md` entry point, scripts and resources. It arrives as
//! a directory, a `.zip`, a `.tar` or a `.tar.gz`/`.tgz`. The archive crates (`zip`,
//! `tar`, `flate2`) only read; every decision is made here, on what was actually read:
//! limits count the bytes that came out of the decompressor, never the sizes the headers
//! declare, and files are streamed to a staging directory (or hashed and dropped when only
//! inspecting), so memory stays bounded whatever the package claims.
//!
//! This crate never runs anything from a package. Its static review judges the commands
//! that `SKILL.md` and the scripts contain with cordon's policy core (shell analyzer,
//! guards, origin normalization, secret detection), as text.
//!
//! ```no_run
//! use cordon_skill::{InspectOptions, inspect};
//! let report = inspect(std::path::Path::new("pkg.zip"), &InspectOptions::default()).unwrap();
//! println!("{}", report.verdict());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod autorun;
mod error;
mod frontmatter;
mod inspect;
mod install;
mod limits;
mod manifest;
mod markdown;
mod metadata;
mod name;
mod nested;
mod opaque;
mod pdftext;
mod report;
mod review;
mod script;
mod source;
mod staged;
mod textread;
mod yaml;

pub use error::SkillError;
pub use frontmatter::FrontMatter;
pub use inspect::{InspectOptions, Inspection, inspect};
pub use install::{InstallOptions, Installation, ManifestError, install, read_manifest};
pub use limits::Limits;
pub use manifest::{Change, Diff, DiffEntry, FileRecord, MANIFEST_NAME, Manifest, SourceInfo};
pub use report::{Check, Finding, Severity};
pub use source::SourceKind;
