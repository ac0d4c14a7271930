//! The inspector: one pass over a package's entries that judges every name, kind, mode and
//! byte count as it is read, hashes every file, keeps the text that the static review
//! needs, and (when installing) streams every file into a staging directory.

use crate::error::SkillError;
use crate::frontmatter::{FrontMatter, name_problem};
use crate::limits::{Counted, Limits, Overrun};
use crate::manifest::FileRecord;
use crate::name::{check as check_name, collision_key};
use crate::report::{Check, Finding, Severity, shown_bytes};
use crate::source::{Flow, Kind, Meta, SourceKind, sniff, walk};
use crate::staged::recheck_links_in;
use cordon_policy::links::resolve_link;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Text kept for the static review: files up to this size.
pub(crate) const REVIEW_BYTES: usize = 1 << 20;

/// How to inspect.
#[derive(Debug, Clone, Default)]
pub struct InspectOptions {
    /// Limits on entries and unpacked bytes.
    pub limits: Limits,
    /// Permit symbolic links whose target stays inside the package.
    pub allow_internal_symlinks: bool,
}

/// What an inspection found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Inspection {
    /// The source as given.
    pub source: PathBuf,
    /// What kind of source it is.
    pub kind: SourceKind,
    /// The front matter of `SKILL.md`, when there is one.
    pub front_matter: Option<FrontMatter>,
    /// Every regular file, relative to the package root, with the mode it installs with.
    pub files: Vec<FileRecord>,
    /// Symbolic links (path, target) that install, when internal links are allowed.
    pub symlinks: Vec<(String, String)>,
    /// Every finding, in the order the checks made them.
    pub findings: Vec<Finding>,
    /// Entries visited.
    pub entries: u64,
    /// Bytes unpacked (counted as read, not as declared).
    pub unpacked_bytes: u64,
    /// The staged package's root, relative to the staging directory.
    #[serde(skip)]
    pub(crate) staged_root: Option<PathBuf>,
}

impl Inspection {
    /// The most serious finding's verdict (pass when there is none).
    pub fn verdict(&self) -> Severity {
        self.findings
            .iter()
            .map(|f| f.verdict)
            .max()
            .unwrap_or(Severity::Pass)
    }

    /// The package name from the front matter, when it is valid.
    pub fn name(&self) -> Option<&str> {
        self.front_matter
            .as_ref()
            .and_then(|f| f.name.as_deref())
            .filter(|n| name_problem(n).is_none())
    }
}

/// Inspect `src` (a directory, zip, tar or gzip-compressed tar) without writing anything.
pub fn inspect(src: &Path, opts: &InspectOptions) -> Result<Inspection, SkillError> {
    inspect_into(src, opts, None)
}

struct State<'a> {
    opts: &'a InspectOptions,
    stage: Option<&'a cordon_fs::Dir>,
    findings: Vec<Finding>,
    entries: u64,
    total_left: u64,
    keys: HashMap<String, String>,
    files: BTreeMap<String, (String, u32)>,
    dirs: BTreeSet<String>,
    symlinks: BTreeMap<String, String>,
    texts: BTreeMap<String, String>,
    /// Text files not reviewed by name, kept in case something runs them.
    extra: BTreeSet<String>,
    /// Compiled code (native, Python bytecode), found by content or name.
    opaque: BTreeMap<String, crate::opaque::Opaque>,
    /// Set once something is refused: staging stops (the package will not install), the
    /// inspection goes on to report the rest unless a limit stopped it.
    refused: bool,
}

impl State<'_> {
    fn find(
        &mut self,
        check: Check,
        verdict: Severity,
        entry: Option<&str>,
        msg: impl Into<String>,
    ) {
        if verdict == Severity::Refuse {
            self.refused = true;
        }
        self.findings.push(Finding::new(check, verdict, entry, msg));
    }

    fn visit(&mut self, meta: Meta, content: &mut dyn Read) -> Result<Flow, SkillError> {
        self.entries += 1;
        if self.entries > self.opts.limits.max_entries {
            let max = self.opts.limits.max_entries;
            self.find(
                Check::Limit,
                Severity::Refuse,
                None,
                format!("the package has more than {max} entries; inspection stopped there"),
            );
            return Ok(Flow::Stop);
        }
        let raw_shown = shown_bytes(&meta.name);
        let name = match check_name(&meta.name, self.opts.limits.max_name_bytes) {
            Ok(n) => n,
            Err(why) => {
                self.find(Check::Name, Severity::Refuse, Some(&raw_shown), why);
                return Ok(Flow::Continue);
            }
        };
        if let Some(why) = crate::metadata::reserved(&name) {
            self.find(Check::Name, Severity::Refuse, Some(&name), why);
            return Ok(Flow::Continue);
        }
        if let Some(why) = crate::metadata::hidden_in_name(&name) {
            self.find(Check::Name, Severity::Refuse, Some(&name), why);
            return Ok(Flow::Continue);
        }
        let key = collision_key(&name);
        if let Some(prev) = self.keys.get(&key) {
            let msg = if *prev == name {
                "the package holds two entries with this name".to_string()
            } else {
                format!(
                    "this name and {prev:?} are the same file on case-insensitive or normalizing file systems"
                )
            };
            self.find(Check::Collision, Severity::Refuse, Some(&name), msg);
            return Ok(Flow::Continue);
        }
        self.keys.insert(key, name.clone());
        if meta.mode & 0o7000 != 0 {
            self.find(
                Check::Mode,
                Severity::Refuse,
                Some(&name),
                format!(
                    "the entry has setuid, setgid or sticky bits (mode {:o})",
                    meta.mode
                ),
            );
        }
        if let Some(anc) =
            ancestors(&name).find(|a| self.symlinks.contains_key(*a) || self.files.contains_key(*a))
        {
            self.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(&name),
                format!(
                    "the entry lies beneath {anc:?}, which is a link or a file (symlink-then-write)"
                ),
            );
            return Ok(Flow::Continue);
        }
        match meta.kind {
            Kind::File => return self.file(name, meta.mode, content),
            Kind::Dir => {
                if self.files.contains_key(&name) {
                    self.find(
                        Check::Collision,
                        Severity::Refuse,
                        Some(&name),
                        "a file and a directory share this name",
                    );
                }
                self.add_dirs(&name, true)?;
            }
            Kind::Symlink(target) => {
                let target = String::from_utf8_lossy(&target).into_owned();
                if !self.opts.allow_internal_symlinks {
                    self.find(Check::EntryKind, Severity::Refuse, Some(&name), format!(
                        "symbolic link to {:?}; links are refused unless --allow-internal-symlinks is given",
                        crate::report::shown(&target)));
                }
                self.symlinks.insert(name, target);
            }
            Kind::HardLink(_) => self.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(&name),
                "hard links are refused (one may alias a file outside the package)",
            ),
            Kind::Device => self.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(&name),
                "device entries are refused",
            ),
            Kind::Fifo => self.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(&name),
                "FIFO entries are refused",
            ),
            Kind::Socket => self.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(&name),
                "socket entries are refused",
            ),
            Kind::Other(what) => self.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(&name),
                format!("{what} is not a file, directory or link"),
            ),
        }
        Ok(Flow::Continue)
    }

    fn add_dirs(&mut self, name: &str, itself: bool) -> Result<(), SkillError> {
        for a in ancestors(name).chain(itself.then_some(name)) {
            self.dirs.insert(a.to_string());
        }
        if let (Some(stage), false, true) = (self.stage, self.refused, itself) {
            stage.create_dir_all(Path::new(name), 0o755).map_err(|e| {
                SkillError::io(
                    format!("create {}", stage.display_path(Path::new(name)).display()),
                    e.into(),
                )
            })?;
        }
        Ok(())
    }

    fn file(
        &mut self,
        name: String,
        mode: u32,
        content: &mut dyn Read,
    ) -> Result<Flow, SkillError> {
        if self.dirs.contains(&name) {
            self.find(
                Check::Collision,
                Severity::Refuse,
                Some(&name),
                "a file and a directory share this name",
            );
            return Ok(Flow::Continue);
        }
        self.add_dirs(&name, false)?;
        let mut out = match (self.stage, self.refused) {
            (Some(stage), false) => {
                // Beneath the staging directory's handle, never through a link: the
                // staging directory sits in the install directory, where a run may
                // have been.
                let rel = Path::new(&name);
                let shown = stage.display_path(rel);
                if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                    stage.create_dir_all(parent, 0o755).map_err(|e| {
                        SkillError::io(format!("create {}", shown.display()), e.into())
                    })?;
                }
                let f = stage
                    .create_new(rel, 0o600)
                    .map_err(|e| SkillError::io(format!("stage {}", shown.display()), e.into()))?;
                Some(std::io::BufWriter::new(f))
            }
            _ => None,
        };
        let base = name.rsplit('/').next().unwrap_or(&name);
        let named = reviewable(base);
        let mut keep = true;
        let mut text: Vec<u8> = Vec::new();
        let mut head: Vec<u8> = Vec::new();
        let mut hash = Sha256::new();
        let mut reader = Counted::new(
            content,
            self.opts.limits.max_file_bytes,
            &mut self.total_left,
        );
        // A nested archive is kept (up to a bound) to be listed; whether a file is one is
        // known once its head is read.
        let mut nest: Option<Vec<u8>> = Some(Vec::new());
        // A zip is found by its end-of-central-directory record anywhere in the file
        // (unzip skips whatever precedes an archive), not by magic at its start.
        let mut eocd = false;
        let mut carry: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        let result: Result<(), std::io::Error> = loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            };
            let chunk = &buf[..n];
            hash.update(chunk);
            if head.len() < 512 {
                head.extend_from_slice(&chunk[..chunk.len().min(512 - head.len())]);
            }
            if !eocd {
                carry.extend_from_slice(chunk);
                eocd = has_eocd(&carry);
                let keep_from = carry.len().saturating_sub(3);
                carry.drain(..keep_from);
            }
            if let Some(v) = nest.as_mut() {
                if v.len() + n > crate::nested::NESTED_BYTES {
                    nest = None;
                } else {
                    v.extend_from_slice(chunk);
                }
            }
            if keep && text.len() + n <= REVIEW_BYTES {
                text.extend_from_slice(chunk);
            } else if keep {
                keep = false;
                if named || head.starts_with(b"#!") {
                    text = b"\0too-large".to_vec();
                }
            }
            if let Some(w) = out.as_mut()
                && let Err(e) = w.write_all(chunk)
            {
                return Err(SkillError::io(format!("stage {name}"), e));
            }
        };
        let overrun = reader.overrun;
        let size = reader.read;
        if let Err(e) = result {
            let msg = match overrun {
                Some(Overrun::File) => format!(
                    "the file unpacks to more than {} bytes (counted while inflating; the header's size is not trusted); inspection stopped",
                    self.opts.limits.max_file_bytes
                ),
                Some(Overrun::Total) => format!(
                    "the package unpacks to more than {} bytes (counted while inflating); inspection stopped",
                    self.opts.limits.max_total_bytes
                ),
                None => format!("the entry cannot be read: {e}"),
            };
            self.find(Check::Limit, Severity::Refuse, Some(&name), msg);
            return Ok(Flow::Stop);
        }
        if let Some(w) = out.as_mut() {
            w.flush()
                .map_err(|e| SkillError::io(format!("stage {name}"), e))?;
        }
        let picture = crate::opaque::picture(&head, nest.as_deref());
        // A PDF that shows text: an agent reads that text as it reads any document.
        let pdf_text = if picture.is_none() && head.starts_with(b"%PDF") {
            nest.as_deref().map(crate::pdftext::extract)
        } else {
            None
        };
        let what = archive_magic(&head).or(eocd.then_some(crate::nested::ZIP_INSIDE));
        if let Some(what) = what {
            match nest {
                Some(bytes) => {
                    let f = crate::nested::judge(&name, &bytes, what, &self.opts.limits);
                    self.find(f.check, f.verdict, Some(&name), f.message);
                }
                None => self.find(
                    Check::NestedArchive,
                    Severity::Review,
                    Some(&name),
                    format!(
                        "the file is a {what} too large for cordon to list (over {} bytes); it is installed as a file, not unpacked: look inside it before the skill unpacks it",
                        crate::nested::NESTED_BYTES
                    ),
                ),
            }
        }
        if let Some(o) = crate::opaque::classify(&name, &head).or(picture) {
            self.opaque.insert(name.clone(), o);
        }
        if text.starts_with(b"\0too-large") {
            self.find(
                Check::Command,
                Severity::Review,
                Some(&name),
                format!(
                    "the file is too large ({size} bytes) for the static review; read it yourself"
                ),
            );
        } else {
            // Not a script by its name or first line: reviewed only if something runs it.
            let script = named || head.starts_with(b"#!");
            let (t, problem) = crate::textread::read(keep.then_some(text), &head, script);
            if let Some(t) = t {
                if !script {
                    self.extra.insert(name.clone());
                }
                self.texts.insert(name.clone(), t);
            }
            if let Some(p) = problem {
                self.find(Check::Command, Severity::Review, Some(&name), p);
            }
        }
        match pdf_text {
            Some(crate::pdftext::PdfText::Text(t)) if !t.trim().is_empty() => {
                self.extra.insert(name.clone());
                self.texts.insert(name.clone(), t);
            }
            Some(crate::pdftext::PdfText::Unreadable) => self.find(
                Check::HiddenText,
                Severity::Review,
                Some(&name),
                "the PDF shows text in font codes cordon cannot read (two-byte or private codes); read it yourself before an agent does",
            ),
            _ => {}
        }
        self.files.insert(name, (hex(&hash.finalize()), mode));
        Ok(Flow::Continue)
    }
}

/// Inspect, staging files under `stage` when given.
pub(crate) fn inspect_into(
    src: &Path,
    opts: &InspectOptions,
    stage: Option<&cordon_fs::Dir>,
) -> Result<Inspection, SkillError> {
    let kind = sniff(src)?;
    let mut st = State {
        opts,
        stage,
        findings: Vec::new(),
        entries: 0,
        total_left: opts.limits.max_total_bytes,
        keys: HashMap::new(),
        files: BTreeMap::new(),
        dirs: BTreeSet::new(),
        symlinks: BTreeMap::new(),
        texts: BTreeMap::new(),
        extra: BTreeSet::new(),
        opaque: BTreeMap::new(),
        refused: false,
    };
    walk(src, kind, opts.limits.max_entries, &mut |m, r| {
        st.visit(m, r)
    })?;
    for repo in crate::metadata::bare_repositories(&st.files, &st.dirs) {
        let at = if repo.is_empty() {
            "the package root"
        } else {
            repo.as_str()
        };
        st.find(Check::Name, Severity::Refuse, Some(at),
            "this folder is laid out as a bare git repository (HEAD, config, objects or refs); its config can run programs on the next git command in it");
    }
    let unpacked = opts.limits.max_total_bytes - st.total_left;
    let entries = st.entries;
    let (prefix, front_matter) = entry_point(&mut st);
    let strip = |p: &str| p.strip_prefix(&prefix).unwrap_or(p).to_string();
    let scripts: BTreeSet<String> = front_matter
        .as_ref()
        .map(|f| {
            f.scripts
                .iter()
                .filter_map(|s| check_name(s.as_bytes(), 1024).ok())
                .collect()
        })
        .unwrap_or_default();
    for s in &scripts {
        if !st.files.contains_key(&format!("{prefix}{s}")) {
            st.find(
                Check::Mode,
                Severity::Review,
                Some(s),
                "SKILL.md declares this script, but the package has no such file",
            );
        }
    }
    let mut files = Vec::new();
    for (path, (sha256, mode)) in std::mem::take(&mut st.files) {
        let rel = strip(&path);
        let script = scripts.contains(&rel);
        if mode & 0o111 != 0 && !script {
            st.find(
                Check::Mode,
                Severity::Pass,
                Some(&rel),
                "executable bit dropped: SKILL.md does not declare this file a script",
            );
        }
        files.push(FileRecord {
            path: rel,
            sha256,
            mode: if script { 0o755 } else { 0o644 },
            script,
        });
    }
    let symlinks = check_symlinks(&mut st, &prefix, &files);
    let texts: Vec<(String, String)> = std::mem::take(&mut st.texts)
        .into_iter()
        .map(|(p, t)| (strip(&p), t))
        .collect();
    let extra: BTreeSet<String> = std::mem::take(&mut st.extra)
        .iter()
        .map(|p| strip(p))
        .collect();
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let all: BTreeSet<String> = paths.iter().cloned().collect();
    let opaque = std::mem::take(&mut st.opaque)
        .into_iter()
        .map(|(p, o)| (strip(&p), o))
        .collect();
    st.findings.extend(crate::opaque::judge(&opaque, &all));
    st.findings.extend(crate::opaque::pictures(&opaque, &texts));
    let mut review = crate::review::review_package(&texts, &scripts, &extra, &all);
    st.findings.append(&mut review);
    for f in crate::autorun::judge(&paths, &texts) {
        st.find(f.check, f.verdict, f.entry.as_deref(), f.message);
    }
    let mut staged_root = match (stage, st.refused) {
        (Some(stage), false) => Some(finish_stage(stage, &prefix, &files, &symlinks)?),
        _ => None,
    };
    if let (Some(root), Some(stage)) = (&staged_root, stage) {
        // The kernel's own answer on the tree that will be installed: a link that
        // resolves outside it (whatever the map above thought) stops the install.
        let escapes = match stage.open_dir(root) {
            Ok(dir) => recheck_links_in(&dir, &symlinks),
            Err(e) => symlinks
                .iter()
                .map(|(p, _)| {
                    (
                        p.clone(),
                        format!("the staged package cannot be opened ({e})"),
                    )
                })
                .collect(),
        };
        for (path, why) in &escapes {
            st.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(path),
                format!("the installed link does not stay inside the package: {why}"),
            );
        }
        if !escapes.is_empty() {
            staged_root = None;
        }
    }
    Ok(Inspection {
        source: src.to_path_buf(),
        kind,
        front_matter,
        files,
        symlinks,
        findings: st.findings,
        entries,
        unpacked_bytes: unpacked,
        staged_root,
    })
}

/// Find the package root (the archive's root, or its one top directory) and read the
/// front matter of its `SKILL.md`.
fn entry_point(st: &mut State<'_>) -> (String, Option<FrontMatter>) {
    let mut prefix = String::new();
    if !st.files.contains_key("SKILL.md") {
        let tops: BTreeSet<&str> = st
            .keys
            .values()
            .map(|n| n.split('/').next().unwrap_or(n))
            .collect();
        if let [top] = tops.into_iter().collect::<Vec<_>>()[..]
            && st.files.contains_key(&format!("{top}/SKILL.md"))
        {
            prefix = format!("{top}/");
        }
    }
    let entry = format!("{prefix}SKILL.md");
    if !st.files.contains_key(&entry) {
        st.find(
            Check::EntryPoint,
            Severity::Refuse,
            None,
            "there is no SKILL.md at the package root (or in its one top directory)",
        );
        return (prefix, None);
    }
    let Some(text) = st.texts.get(&entry) else {
        st.find(
            Check::EntryPoint,
            Severity::Refuse,
            Some("SKILL.md"),
            "SKILL.md is not UTF-8 text of a reviewable size",
        );
        return (prefix, None);
    };
    let Some(fm) = FrontMatter::parse(text) else {
        st.find(
            Check::EntryPoint,
            Severity::Refuse,
            Some("SKILL.md"),
            "SKILL.md has no front matter (a `---` block with `name:`) at its top",
        );
        return (prefix, None);
    };
    match fm.name.as_deref() {
        None => st.find(
            Check::EntryPoint,
            Severity::Refuse,
            Some("SKILL.md"),
            "the front matter of SKILL.md has no `name`",
        ),
        Some(n) => match name_problem(n) {
            Some(why) => st.find(
                Check::EntryPoint,
                Severity::Refuse,
                Some("SKILL.md"),
                format!("invalid name {:?}: {why}", crate::report::shown(n)),
            ),
            None => st.find(
                Check::EntryPoint,
                Severity::Pass,
                Some("SKILL.md"),
                format!("entry point found; the package installs as {n}/"),
            ),
        },
    }
    (prefix, Some(fm))
}

fn check_symlinks(st: &mut State<'_>, prefix: &str, files: &[FileRecord]) -> Vec<(String, String)> {
    let mut ok = Vec::new();
    if !st.opts.allow_internal_symlinks {
        return ok;
    }
    let links = std::mem::take(&mut st.symlinks);
    // Package-relative: a `..` above the package root escapes even when the archive
    // holds the package in a top directory.
    let map: BTreeMap<String, String> = links
        .iter()
        .map(|(p, t)| (p.strip_prefix(prefix).unwrap_or(p).to_string(), t.clone()))
        .collect();
    let link_of = |p: &str| map.get(p).map(String::as_str);
    for (rel, target) in &map {
        // Resolved as the kernel would: component by component, through the package's
        // own links, so a chain that climbs out through another link is seen.
        let verdict = if target.contains('\\') || target.chars().any(char::is_control) {
            Err("its target holds a backslash or a control character".to_string())
        } else {
            match resolve_link(rel, target, &link_of) {
                Err(why) => Err(format!("it leaves the package: {why}")),
                Ok(r) if r.is_empty() => Err("it points at the package root".to_string()),
                Ok(r)
                    if files.iter().any(|f| f.path == r)
                        || st.dirs.contains(&format!("{prefix}{r}")) =>
                {
                    Ok(())
                }
                Ok(_) => Err("its target is not an entry of the package".to_string()),
            }
        };
        match verdict {
            Ok(()) => {
                st.find(
                    Check::EntryKind,
                    Severity::Pass,
                    Some(rel),
                    format!("internal link to {target:?}"),
                );
                ok.push((rel.clone(), target.clone()));
            }
            Err(why) => st.find(
                Check::EntryKind,
                Severity::Refuse,
                Some(rel),
                format!(
                    "symbolic link to {:?} refused: {why}",
                    crate::report::shown(target)
                ),
            ),
        }
    }
    ok
}

/// Give the staged files their modes and make the links, beneath `stage`; returns the
/// package root relative to `stage`.
fn finish_stage(
    stage: &cordon_fs::Dir,
    prefix: &str,
    files: &[FileRecord],
    links: &[(String, String)],
) -> Result<PathBuf, SkillError> {
    let root = PathBuf::from(prefix.trim_end_matches('/'));
    let err = |what: &str, p: &Path, e: cordon_fs::FsError| {
        SkillError::io(
            format!("{what} {}", stage.display_path(p).display()),
            e.into(),
        )
    };
    for f in files {
        let p = root.join(&f.path);
        stage
            .set_mode(&p, f.mode)
            .map_err(|e| err("set the mode of", &p, e))?;
    }
    // Links last: no file was written through one.
    for (path, target) in links {
        let p = root.join(path);
        stage
            .symlink(Path::new(target), &p)
            .map_err(|e| err("create link", &p, e))?;
    }
    Ok(root)
}

fn ancestors(name: &str) -> impl Iterator<Item = &str> {
    name.match_indices('/').map(move |(i, _)| &name[..i])
}

fn reviewable(base: &str) -> bool {
    const EXT: [&str; 22] = [
        "sh", "bash", "zsh", "py", "pyw", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx",
        "rb", "rake", "pl", "ps1", "php", "lua", "md", "markdown", "ipynb",
    ];
    const NAMES: [&str; 5] = [
        "package.json",
        "setup.py",
        "pyproject.toml",
        "Makefile",
        "setup.cfg",
    ];
    NAMES.contains(&base)
        || base
            .rsplit_once('.')
            .is_some_and(|(_, e)| EXT.contains(&e.to_ascii_lowercase().as_str()))
}

/// Does `bytes` hold a zip end-of-central-directory signature (or zip64's)?
fn has_eocd(bytes: &[u8]) -> bool {
    bytes
        .windows(4)
        .any(|w| w == b"PK\x05\x06" || w == b"PK\x06\x06")
}

/// Is `head` a tar header: its checksum field matches the sum of its bytes (the field
/// counted as spaces), whether or not it carries the `ustar` magic (v7 tar does not)?
fn tar_header(head: &[u8]) -> bool {
    if head.len() < 512 || head[..100].iter().all(|&b| b == 0) {
        return false;
    }
    let field = &head[148..156];
    let digits: String = field
        .iter()
        .map(|&b| b as char)
        .take_while(|c| *c != '\0')
        .collect();
    let Ok(want) = u32::from_str_radix(digits.trim(), 8) else {
        return false;
    };
    let sum: u32 = head[..512]
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    sum == want
}

fn archive_magic(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Some("zip archive")
    } else if head.starts_with(&[0x1f, 0x8b]) {
        Some("gzip stream")
    } else if (head.len() >= 262 && &head[257..262] == b"ustar") || tar_header(head) {
        Some("tar archive")
    } else if head.starts_with(b"7z\xbc\xaf\x27\x1c") {
        Some("7z archive")
    } else if head.starts_with(b"\xfd7zXZ\0") {
        Some("xz stream")
    } else if head.starts_with(b"BZh") && head.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
        Some("bzip2 stream")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd stream")
    } else if head.starts_with(b"Rar!") {
        Some("rar archive")
    } else {
        None
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
