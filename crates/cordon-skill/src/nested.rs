//! Archives inside a package. cordon never unpacks or installs their content as part of
//! the skill, but a skill may unpack one at run time (`web-artifacts-builder` ships a
//! `.tar.gz` of components it extracts), so an archive is listed and judged as if it
//! were unpacked: an entry that would be unsafe there (a `..` or absolute name, a link
//! out, a device, set-id bits, a bomb) refuses the package; otherwise it is a review
//! whose message shows what the archive holds.

use crate::limits::{Counted, Limits};
use crate::name::{check as check_name, collision_key};
use crate::report::{Check, Finding, Severity, shown};
use crate::source::{Flow, Kind, SourceKind, walk_bytes};
use cordon_policy::links::resolve_link;
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;

/// Bytes of a nested archive kept in memory to list it; a larger one is reviewed unlisted.
pub(crate) const NESTED_BYTES: usize = 32 << 20;

/// What a file is called when a zip's end record is found past its start (a zip behind
/// other data, as a self-extracting archive is).
pub(crate) const ZIP_INSIDE: &str = "zip archive behind other data";

/// Names shown in a listing.
const SHOWN: usize = 12;

/// Judge the archive `bytes` found at `name` (`what` as [`archive_magic`] named it).
///
/// [`archive_magic`]: crate::inspect
pub(crate) fn judge(name: &str, bytes: &[u8], what: &str, limits: &Limits) -> Finding {
    let kind = if what == "zip archive" || what == ZIP_INSIDE {
        Some(SourceKind::Zip)
    } else if what == "tar archive" {
        Some(SourceKind::Tar)
    } else if what == "gzip stream" {
        Some(gzip_kind(bytes))
    } else {
        None
    };
    let Some(kind) = kind else {
        return Finding::new(
            Check::NestedArchive,
            Severity::Review,
            Some(name),
            format!(
                "the file is a {what}, which cordon cannot list; it is installed as a file, not unpacked: look inside it before the skill unpacks it"
            ),
        );
    };
    if kind == SourceKind::Directory {
        // A plain gzip stream: one file. Count what it inflates to.
        let mut total = limits.max_total_bytes;
        let mut r = Counted::new(
            flate2::read::GzDecoder::new(bytes),
            limits.max_file_bytes,
            &mut total,
        );
        let n = std::io::copy(&mut r, &mut std::io::sink());
        return match n {
            Ok(n) => Finding::new(
                Check::NestedArchive,
                Severity::Review,
                Some(name),
                format!(
                    "the file is a gzip-compressed file of {n} bytes; it is installed as it is, not unpacked"
                ),
            ),
            Err(e) => refuse(name, format!("it does not inflate safely: {e}")),
        };
    }
    let mut lister = Lister {
        limits,
        total_left: limits.max_total_bytes,
        entries: 0,
        names: Vec::new(),
        keys: HashSet::new(),
        links: BTreeMap::new(),
        unsafe_entry: None,
    };
    let walked = walk_bytes(
        Path::new(name),
        bytes,
        kind,
        limits.max_entries,
        &mut |m, r| lister.visit(m.name, m.kind, m.mode, r),
    );
    if let Some(why) = lister.unsafe_entry.take() {
        return refuse(name, why);
    }
    if let Err(e) = walked {
        if what == ZIP_INSIDE {
            // The end record may be chance bytes, or an archive made to be listed by one
            // tool and not another: a human looks.
            return Finding::new(
                Check::NestedArchive,
                Severity::Review,
                Some(name),
                format!(
                    "the file holds a zip end-of-central-directory record but cordon cannot list it ({e}); an unzip tool may still unpack it: look inside it before the skill unpacks it"
                ),
            );
        }
        return refuse(name, format!("it cannot be read to its end ({e})"));
    }
    for (link, target) in &lister.links {
        let link_of = |p: &str| lister.links.get(p).map(String::as_str);
        if let Err(why) = resolve_link(link, target, &link_of) {
            return refuse(
                name,
                format!("{}: a link that leaves the archive ({why})", shown(link)),
            );
        }
    }
    let unpacked = limits.max_total_bytes - lister.total_left;
    let mut list: Vec<String> = lister.names.iter().take(SHOWN).map(|n| shown(n)).collect();
    if lister.names.len() > SHOWN {
        list.push(format!("… {} more", lister.names.len() - SHOWN));
    }
    Finding::new(
        Check::NestedArchive,
        Severity::Review,
        Some(name),
        format!(
            "the file is a {what} of {} entries ({unpacked} bytes unpacked), safe to unpack but not reviewed as part of the skill; it holds: {}",
            lister.entries,
            list.join(", ")
        ),
    )
}

fn refuse(name: &str, why: String) -> Finding {
    Finding::new(
        Check::NestedArchive,
        Severity::Refuse,
        Some(name),
        format!("the archive inside the package is unsafe to unpack: {why}"),
    )
}

/// A gzip stream holds a tar archive when its inflated content has the tar magic;
/// `Directory` stands for "one plain file".
fn gzip_kind(bytes: &[u8]) -> SourceKind {
    let mut head = Vec::new();
    let ok = flate2::read::GzDecoder::new(bytes)
        .take(512)
        .read_to_end(&mut head)
        .is_ok();
    if ok && head.len() >= 262 && &head[257..262] == b"ustar" {
        SourceKind::TarGz
    } else {
        SourceKind::Directory
    }
}

struct Lister<'a> {
    limits: &'a Limits,
    total_left: u64,
    entries: u64,
    names: Vec<String>,
    keys: HashSet<String>,
    links: BTreeMap<String, String>,
    unsafe_entry: Option<String>,
}

impl Lister<'_> {
    fn visit(
        &mut self,
        raw: Vec<u8>,
        kind: Kind,
        mode: u32,
        content: &mut dyn Read,
    ) -> Result<Flow, crate::SkillError> {
        let stop = |me: &mut Self, why: String| {
            me.unsafe_entry = Some(why);
            Ok(Flow::Stop)
        };
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return stop(
                self,
                format!("it has more than {} entries", self.limits.max_entries),
            );
        }
        let name = match check_name(&raw, self.limits.max_name_bytes) {
            Ok(n) => n,
            Err(why) => {
                let raw = crate::report::shown_bytes(&raw);
                return stop(self, format!("{raw}: {why}"));
            }
        };
        if !self.keys.insert(collision_key(&name)) {
            return stop(
                self,
                format!(
                    "{name}: two entries are this one file on case-insensitive or normalizing file systems"
                ),
            );
        }
        if mode & 0o7000 != 0 {
            return stop(
                self,
                format!("{name}: setuid, setgid or sticky bits (mode {mode:o})"),
            );
        }
        match kind {
            Kind::File => {
                let mut r = Counted::new(content, self.limits.max_file_bytes, &mut self.total_left);
                if let Err(e) = std::io::copy(&mut r, &mut std::io::sink()) {
                    return stop(
                        self,
                        format!("{name}: it unpacks past cordon's limits or cannot be read ({e})"),
                    );
                }
                self.names.push(name);
            }
            Kind::Dir => self.names.push(format!("{name}/")),
            Kind::Symlink(target) => {
                let target = String::from_utf8_lossy(&target).into_owned();
                if target.starts_with('/')
                    || target.contains('\\')
                    || target.chars().any(char::is_control)
                {
                    return stop(self, format!("{name}: a link to {}", shown(&target)));
                }
                self.names.push(format!("{name} -> {}", shown(&target)));
                self.links.insert(name, target);
            }
            Kind::HardLink(_) => return stop(self, format!("{name}: a hard link")),
            Kind::Device | Kind::Fifo | Kind::Socket | Kind::Other(_) => {
                return stop(self, format!("{name}: not a file, directory or link"));
            }
        }
        Ok(Flow::Continue)
    }
}
