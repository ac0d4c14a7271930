//! The three-way judgement of a configuration file (and `.gitmodules`) a run left against
//! the host's current one.

use super::allowlist::{ALLOWLIST, Allowed, Values};
use super::{ConfigPairs, GitConfigVerdict};
use crate::gitconfig::risky_key;
use std::collections::{BTreeMap, BTreeSet};

/// A key split as git splits it: the section and last part compared in any case, the
/// subsection (everything between the first and last dot) as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    pub(super) section: String,
    pub(super) sub: Option<String>,
    pub(super) key: String,
}

impl Key {
    pub(super) fn parse(name: &str) -> Key {
        let (section, sub, key) = match name.split_once('.') {
            Some((section, rest)) => match rest.rsplit_once('.') {
                Some((sub, key)) => (section, Some(sub), key),
                None => (section, None, rest),
            },
            // Not a key git prints; it matches no allowlist entry.
            None => (name, None, ""),
        };
        Key {
            section: section.to_ascii_lowercase(),
            sub: sub.map(str::to_owned),
            key: key.to_ascii_lowercase(),
        }
    }

    fn is(&self, section: &str, key: &str) -> bool {
        self.section == section && self.key == key
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.sub {
            Some(sub) => write!(f, "{}.{}.{}", self.section, sub, self.key),
            None => write!(f, "{}.{}", self.section, self.key),
        }
    }
}

fn lookup(key: &Key) -> Option<&'static Allowed> {
    ALLOWLIST.iter().find(|a| {
        let pattern = Key::parse(a.name);
        pattern.section == key.section
            && pattern.key == key.key
            && match (pattern.sub.as_deref(), key.sub.as_deref()) {
                (None, None) => true,
                (Some("<name>"), Some(_)) => true,
                (Some(p), Some(s)) => p == s,
                _ => false,
            }
    })
}

/// A value as git reads a boolean: a key without `=` is true, an empty value false.
fn git_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else {
        return Some(true);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" | "" => Some(false),
        n => git_int(n).map(|i| i != 0),
    }
}

/// A value as git reads an integer, with an optional `k`, `m` or `g` unit.
fn git_int(v: &str) -> Option<i64> {
    let v = v.trim();
    let digits = v.strip_suffix(['k', 'K', 'm', 'M', 'g', 'G']).unwrap_or(v);
    let unsigned = digits.strip_prefix('-').unwrap_or(digits);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn one_of(value: Option<&str>, words: &[&str]) -> bool {
    value.is_some_and(|v| words.iter().any(|w| v.trim().eq_ignore_ascii_case(w)))
}

/// What the three-way rules know about the repository.
pub(super) struct Context {
    /// Whether the host had the repository (`false`: the run made it).
    pub(super) existing: bool,
    /// The remotes with a URL: the host's, or in a repository the run made, the run's own.
    pub(super) remotes: BTreeSet<String>,
}

fn remotes_with_url(pairs: &ConfigPairs) -> BTreeSet<String> {
    pairs
        .iter()
        .map(|(name, _)| Key::parse(name))
        .filter(|k| k.is("remote", "url"))
        .filter_map(|k| k.sub)
        .collect()
}

/// Why the allowlist does not admit setting `key` to `value`, or `None` when it does.
pub(super) fn not_admitted(key: &Key, value: Option<&str>, cx: &Context) -> Option<String> {
    let unknown = || {
        Some(format!(
            "it sets {key}, which is not a git setting known to be harmless"
        ))
    };
    if key.section == "remote"
        && let Some(remote) = &key.sub
    {
        if cx.existing && !cx.remotes.contains(remote) {
            return Some(format!(
                "it adds the remote {remote} ({key}), which the host's repository does not have"
            ));
        }
        if cx.existing && matches!(key.key.as_str(), "url" | "pushurl") {
            return Some(format!(
                "it changes {key}, which decides where git sends the user's commits and \
                 credentials"
            ));
        }
        if !cx.remotes.contains(remote) {
            return Some(format!(
                "it sets {key} for a remote without a URL, which git would take for a URL"
            ));
        }
    }
    let Some(allowed) = lookup(key) else {
        return unknown();
    };
    let shown = value.unwrap_or("true");
    let bad_value = || {
        Some(format!(
            "it sets {key} to {shown}, a value not known to be harmless"
        ))
    };
    let ok = match allowed.values {
        Values::Any => true,
        Values::Bool => git_bool(value).is_some(),
        Values::BoolOr(words) => git_bool(value).is_some() || one_of(value, words),
        Values::OneOf(words) => one_of(value, words),
        Values::OnlyFalse => git_bool(value) == Some(false),
        Values::OnlyTrue => git_bool(value) == Some(true),
        Values::KnownRemote => {
            let named = value.unwrap_or("");
            if named == "." || cx.remotes.contains(named) {
                true
            } else {
                return Some(format!(
                    "it sets {key} to {named}, which is not a remote the repository has \
                     (git would take it for a URL)"
                ));
            }
        }
        Values::TrackingRefspec => {
            let remote = key.sub.as_deref().unwrap_or("");
            if tracking_refspec(value.unwrap_or(""), remote) {
                true
            } else {
                return Some(format!(
                    "it sets {key} to {shown}, which stores outside refs/remotes/{remote}/ \
                     and refs/tags/"
                ));
            }
        }
        Values::OwnRemoteUrl => !cx.existing && plain_url(value.unwrap_or("")),
    };
    if ok { None } else { bad_value() }
}

/// Why the allowlist does not admit removing `key`, or `None` when it does.
fn removal_not_admitted(key: &Key) -> Option<String> {
    if key.section == "remote" && matches!(key.key.as_str(), "url" | "pushurl") {
        return Some(format!(
            "it removes {key}, which decides where git sends the user's commits and credentials"
        ));
    }
    match lookup(key).map(|a| a.values) {
        Some(Values::OnlyTrue) => Some(format!("it removes {key}, which turns a safety check off")),
        Some(_) => None,
        None => Some(format!(
            "it removes {key}, which is not a git setting known to be harmless"
        )),
    }
}

/// A fetch refspec (`[+]src:dst`) whose destination is this remote's tracking refs or tags.
fn tracking_refspec(spec: &str, remote: &str) -> bool {
    let spec = spec.trim().strip_prefix('+').unwrap_or(spec.trim());
    let Some((_, dst)) = spec.split_once(':') else {
        return false;
    };
    if dst.split('/').any(|c| c == "..") {
        return false;
    }
    let tracking = format!("refs/remotes/{remote}/");
    (dst.starts_with(&tracking) && dst.len() > tracking.len())
        || (dst.starts_with("refs/tags/") && dst.len() > "refs/tags/".len())
}

/// A remote URL git reaches with one of its own transports: not `<helper>::<address>`
/// (`ext::` runs a command) and not an option.
fn plain_url(url: &str) -> bool {
    let url = url.trim();
    if url.is_empty() || url.starts_with('-') {
        return false;
    }
    match url.split_once("::") {
        Some((helper, _)) => helper.contains('/'),
        None => true,
    }
}

/// Each key's values in file order.
fn by_key(pairs: &ConfigPairs) -> BTreeMap<Key, Vec<Option<&str>>> {
    let mut map: BTreeMap<Key, Vec<Option<&str>>> = BTreeMap::new();
    for (name, value) in pairs {
        map.entry(Key::parse(name))
            .or_default()
            .push(value.as_deref());
    }
    map
}

/// The keys whose values differ between `host` and `run`: each run pair of such a key
/// (in run order), then each host value the run no longer has (in host order).
struct Changes<'a> {
    set: Vec<(Key, Option<&'a str>)>,
    removed: Vec<(Key, Option<&'a str>)>,
}

fn changes<'a>(host: &'a ConfigPairs, run: &'a ConfigPairs) -> Changes<'a> {
    let (h, r) = (by_key(host), by_key(run));
    let same = |k: &Key| h.get(k) == r.get(k);
    let set = run
        .iter()
        .map(|(n, v)| (Key::parse(n), v.as_deref()))
        .filter(|(k, _)| !same(k))
        .collect();
    let mut removed = Vec::new();
    for (name, value) in host {
        let key = Key::parse(name);
        if same(&key) {
            continue;
        }
        let kept = r.get(&key).is_some_and(|vs| vs.contains(&value.as_deref()));
        if !kept {
            removed.push((key, value.as_deref()));
        }
    }
    Changes { set, removed }
}

/// Judge the git configuration file a run left (`run`) against the host's current one.
///
/// `host` is the host's file as `git config --list` prints it, or `None` when the git
/// directory did not exist on the host (the run made the repository). Pass `Some(&[])`
/// when the host's file exists but cannot be parsed: then every key counts as changed.
///
/// - A changed or added key that runs a program or moves where git reads its settings
///   ([`risky_key`]) refuses the file.
/// - Keys with the same values in both pass, whatever they are: the host had them.
/// - Any other change, addition or removal passes only when the allowlist admits the key
///   and, for the conditional ones, its value; otherwise the file is held.
/// - In a repository the host has, a remote's `url` or `pushurl` never changes, a remote
///   it does not have is never added, `branch.<b>.remote` names only a remote it has (or
///   `.`), and `remote.<r>.fetch` stores only into `refs/remotes/<r>/` or tags.
/// - In a repository the run made, the remotes with a URL in the file are the run's own
///   (a clone's `remote.origin.url`, `fetch`, `branch.main.remote`); nothing else beyond
///   the allowlist passes.
pub fn judge_config(host: Option<&ConfigPairs>, run: &ConfigPairs) -> GitConfigVerdict {
    let cx = Context {
        existing: host.is_some(),
        remotes: remotes_with_url(host.unwrap_or(run)),
    };
    let host = host.unwrap_or(&[]);
    let changes = changes(host, run);
    for (key, value) in &changes.set {
        let name = key.to_string();
        if let Some(why) = risky_key(&name, *value) {
            return GitConfigVerdict::Refuse(format!("it sets the git key {name}, which {why}"));
        }
    }
    let held = changes
        .set
        .iter()
        .find_map(|(key, value)| not_admitted(key, *value, &cx))
        .or_else(|| {
            changes
                .removed
                .iter()
                .find_map(|(key, _)| removal_not_admitted(key))
        });
    match held {
        Some(why) => GitConfigVerdict::Hold(why),
        None => GitConfigVerdict::Merge,
    }
}

/// Keys of a submodule in `.gitmodules` that change only what git reports or how much it
/// fetches from the URL the submodule already has; `None` means any value, on removal.
fn gitmodules_admits(key: &str, value: Option<Option<&str>>) -> bool {
    match (key, value) {
        ("shallow" | "fetchrecursesubmodules" | "ignore", None) => true,
        ("shallow", Some(v)) => git_bool(v).is_some(),
        ("fetchrecursesubmodules", Some(v)) => git_bool(v).is_some() || one_of(v, &["on-demand"]),
        // `none` is the default; every other value hides some change from `git status`.
        ("ignore", Some(v)) => one_of(v, &["none"]),
        _ => false,
    }
}

/// Why changing `key` of `.gitmodules` needs a human.
fn gitmodules_change(key: &Key, verb: &str) -> String {
    if key.section == "submodule" && key.sub.is_some() {
        format!(
            "it {verb} {key}, which decides what the host's git fetches or checks out for a \
             submodule"
        )
    } else {
        format!("it {verb} {key}, which is not a .gitmodules setting known to be harmless")
    }
}

/// Judge a `.gitmodules` a run left (`run`) against the host's current one (`None`
/// when the host has none), both as `git config --list` prints them.
///
/// A new submodule, or a changed `url`, `path`, `update` or `branch` of one, decides what
/// the host's `git submodule update` fetches and checks out: held. An `update = !command`
/// is refused (git would run the command). What passes: removing a whole submodule, and
/// `shallow`, `fetchRecurseSubmodules` and `ignore = none` of a submodule the host's file
/// has.
pub fn judge_gitmodules(host: Option<&ConfigPairs>, run: &ConfigPairs) -> GitConfigVerdict {
    let host = host.unwrap_or(&[]);
    let submodules = |pairs: &ConfigPairs| -> BTreeSet<String> {
        pairs
            .iter()
            .map(|(n, _)| Key::parse(n))
            .filter(|k| k.section == "submodule")
            .filter_map(|k| k.sub)
            .collect()
    };
    let (had, has) = (submodules(host), submodules(run));
    let changes = changes(host, run);
    for (key, value) in &changes.set {
        if key.is("submodule", "update") && value.is_some_and(|v| v.trim_start().starts_with('!')) {
            return GitConfigVerdict::Refuse(format!(
                "it sets {key} to a command, which git would run"
            ));
        }
    }
    for (key, value) in &changes.set {
        let ours = key.section == "submodule";
        match &key.sub {
            Some(name) if ours && !had.contains(name) => {
                return GitConfigVerdict::Hold(format!(
                    "it adds the submodule {name}, whose URL the host's git would fetch"
                ));
            }
            Some(_) if ours && gitmodules_admits(&key.key, Some(*value)) => {}
            _ => return GitConfigVerdict::Hold(gitmodules_change(key, "sets")),
        }
    }
    for (key, _) in &changes.removed {
        let ours = key.section == "submodule";
        let whole = ours && key.sub.as_ref().is_some_and(|name| !has.contains(name));
        let harmless = whole || (ours && gitmodules_admits(&key.key, None));
        if !harmless {
            return GitConfigVerdict::Hold(gitmodules_change(key, "removes"));
        }
    }
    GitConfigVerdict::Merge
}
