//! The known limits: violations the harness found that are understood and written down
//! with their reason, so that the suite fails only on new ones. Each entry is a class, a
//! glob on the program that did it, a glob on the target, optionally `when:GLOB` on the
//! command text, and the reason.

use crate::compare::Violation;
use crate::sandbox::{HOME, WORKSPACE};
use globset::{GlobBuilder, GlobMatcher};

const KNOWN_LIMITS: &str = include_str!("known-limits.txt");

pub struct Limit {
    /// `known-limits.txt:LINE`.
    pub origin: String,
    pub class: String,
    pub program: GlobMatcher,
    pub target: GlobMatcher,
    /// On the command text, when the entry says `when:GLOB`.
    pub when: Option<GlobMatcher>,
    /// The entry as written (class, program, target).
    pub key: String,
    pub reason: String,
}

/// Parse `known-limits.txt`. In a target, a leading `~` is the decoy home and a leading
/// `./` the workspace; `*` stays within one path component, `**` crosses them, and
/// `DIR/**` covers DIR itself too. In a
/// `when:` glob, `*` matches anything and `?` stands for a space too.
pub fn load() -> Result<Vec<Limit>, String> {
    let mut out: Vec<Limit> = Vec::new();
    for (i, line) in KNOWN_LIMITS.lines().enumerate() {
        let origin = format!("known-limits.txt:{}", i + 1);
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        // An indented line continues the reason above.
        if line.starts_with([' ', '\t']) {
            match out.last_mut() {
                Some(l) => {
                    l.reason.push(' ');
                    l.reason.push_str(t);
                    continue;
                }
                None => return Err(format!("{origin}: a continuation line with no entry above")),
            }
        }
        let mut f = t.split_whitespace();
        let (Some(class), Some(program), Some(target)) = (f.next(), f.next(), f.next()) else {
            return Err(format!("{origin}: expected CLASS PROGRAM TARGET REASON"));
        };
        let mut rest: Vec<&str> = f.collect();
        let when = match rest.first().and_then(|w| w.strip_prefix("when:")) {
            Some(g) => {
                let m = GlobBuilder::new(g)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| format!("{origin}: {e}"))?;
                rest.remove(0);
                Some(m)
            }
            None => None,
        };
        let reason = rest.join(" ");
        if reason.is_empty() {
            return Err(format!("{origin}: every known limit needs its reason"));
        }
        const CLASSES: &[&str] = &[
            "exec",
            "read-inside",
            "read-outside",
            "write-inside",
            "write-outside",
            "delete-inside",
            "delete-outside",
            "network",
        ];
        if !CLASSES.contains(&class) {
            return Err(format!("{origin}: unknown class `{class}`"));
        }
        let expanded = if let Some(rest) = target.strip_prefix('~') {
            format!("{HOME}{rest}")
        } else if let Some(rest) = target.strip_prefix("./") {
            format!("{WORKSPACE}/{rest}")
        } else {
            target.to_string()
        };
        let glob = |g: &str| {
            GlobBuilder::new(g)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("{origin}: {e}"))
        };
        // `DIR/**` covers DIR itself too.
        let target_glob = match expanded.strip_suffix("/**") {
            Some(dir) if !dir.is_empty() => glob(&format!("{{{dir},{dir}/**}}"))?,
            _ => glob(&expanded)?,
        };
        let program_glob = glob(program)?;
        out.push(Limit {
            origin,
            class: class.to_string(),
            program: program_glob,
            target: target_glob,
            when,
            key: format!("{class} {program} {target}"),
            reason,
        });
    }
    Ok(out)
}

/// The first known limit that covers `v`, found running `text`.
pub fn find<'a>(limits: &'a [Limit], v: &Violation, text: &str) -> Option<&'a Limit> {
    limits.iter().find(|l| {
        l.class == v.class
            && l.program.is_match(&v.program)
            && l.target.is_match(&v.target)
            && l.when.as_ref().is_none_or(|w| w.is_match(text))
    })
}
