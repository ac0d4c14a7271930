//! A script that moves to another working folder (`os.chdir(Path.home())`,
//! `process.chdir(os.homedir())`, `Dir.chdir`, `with contextlib.chdir(…)`) or starts a
//! process in one (`cwd=`, `chdir:`) names files there by relative paths: `.bashrc`
//! after a move to the home folder is `~/.bashrc`. A link the script makes
//! (`Path("h").symlink_to(Path.home())`, `fs.symlinkSync(os.homedir(), "h")`) does the
//! same for the paths through it: `h/.bashrc` is `~/.bashrc`.
//!
//! The script's paths, the files it writes and the processes it starts are judged once
//! more as they would be in each such place: relative paths joined to the folder, paths
//! through a link taken to where it points, processes after a `cd` to the folder or an
//! `ln -s` of the link (the shell analysis follows both). A place known only at run time
//! is the home folder at worst, as elsewhere in the review. Only refusals are taken from
//! this second judgement: what a path is as written was judged already, and a place
//! known only at run time makes every path a guess that only a file the guards protect
//! makes worth a word.

use super::Cx;
use crate::report::{Finding, Severity};
use crate::script::{Cmd, Facts, RUNTIME};
use std::cell::Cell;
use std::collections::HashSet;

/// Places judged per script, and processes and paths judged in each.
const MAX_PLACES: usize = 6;
const MAX_EACH: usize = 64;

/// Where a script's paths may lead other than where they are written.
struct Place {
    line: usize,
    /// The folder moved to, or what the link points to.
    to: String,
    exact: bool,
    /// The link's own path, for a link.
    link: Option<String>,
}

/// Judge `f`'s paths, written files and processes in each working folder it moves to
/// and through each link it makes, adding the refusals that judgement finds to `out`.
pub(super) fn judge(cx: &Cx<'_>, path: &str, f: &Facts, out: &mut Vec<Finding>) {
    // The second judgement is of facts made here: it is not moved again (its processes
    // start with the `ln -s` or `cd` that stands for the place).
    if MOVING.with(Cell::get) {
        return;
    }
    let places = places(f);
    if places.is_empty() {
        return;
    }
    MOVING.with(|m| m.set(true));
    judge_in(cx, path, f, places, out);
    MOVING.with(|m| m.set(false));
}

thread_local! {
    /// Facts moved to a place are being judged.
    static MOVING: Cell<bool> = const { Cell::new(false) };
}

fn judge_in(cx: &Cx<'_>, path: &str, f: &Facts, places: Vec<Place>, out: &mut Vec<Finding>) {
    let mut said: HashSet<String> = out.iter().map(|g| g.message.clone()).collect();
    for place in places {
        let moved = rebased(f, &place);
        let mut got = Vec::new();
        // Destinations were judged with the script; this judgement only adds refusals.
        super::facts::judge(cx, path, &moved, &mut HashSet::new(), &mut got);
        let to = if place.exact {
            crate::report::shown(&place.to)
        } else {
            "a place known only at run time".to_string()
        };
        let how = match &place.link {
            Some(l) => format!(
                " (through the link {} to {to}, line {})",
                crate::report::shown(l),
                place.line
            ),
            None => format!(" (in the working folder {to}, line {})", place.line),
        };
        for mut g in got.into_iter().filter(|g| g.verdict == Severity::Refuse) {
            if said.insert(g.message.clone()) {
                g.message.push_str(&how);
                out.push(g);
            }
        }
    }
}

/// The distinct working folders of a script, each relative one also taken from the
/// folders before it (`chdir(home)` then `chdir(".ssh")` is `~/.ssh`), then its links.
fn places(f: &Facts) -> Vec<Place> {
    let mut seen = HashSet::new();
    let mut all: Vec<Place> = Vec::new();
    for (line, dir, exact) in &f.bases {
        // Each relative folder is joined to those before it: without a bound here, a
        // script of many `chdir`s would double the list with each.
        if all.len() >= MAX_PLACES {
            break;
        }
        let dir = dir.trim_end_matches('/');
        let mut add = vec![(dir.to_string(), *exact)];
        if !is_rooted(dir) {
            add.extend(all.iter().map(|p| (join(&p.to, dir), p.exact && *exact)));
        }
        for (d, e) in add {
            // The package's own folder is where relative paths were judged already.
            if d.is_empty() || d == "." || !seen.insert(d.clone()) {
                continue;
            }
            all.push(Place {
                line: *line,
                to: d,
                exact: e,
                link: None,
            });
        }
    }
    all.truncate(MAX_PLACES);
    let links: Vec<(usize, String, String, bool)> =
        f.links.iter().cloned().chain(spawned_links(f)).collect();
    // A link is followed when its own path is known; where it points may be a guess.
    let first_link = all.len();
    for (line, link, to, _) in links.iter().filter(|(_, l, _, _)| !l.contains(RUNTIME)) {
        let link = link.trim_start_matches("./").trim_end_matches('/');
        if link.is_empty() || all.len() >= 2 * MAX_PLACES {
            break;
        }
        all.push(Place {
            line: *line,
            to: to.trim_end_matches('/').to_string(),
            exact: !to.contains(RUNTIME),
            link: Some(link.to_string()),
        });
    }
    // A folder moved to through a link (`chdir("work/home")` after linking
    // `work/home` to the home folder) is where the link points.
    let through: Vec<Place> = all[..first_link]
        .iter()
        .flat_map(|folder| {
            all[first_link..].iter().filter_map(|link| {
                let to = moved(link, &folder.to)?;
                Some(Place {
                    line: folder.line,
                    to,
                    exact: folder.exact && link.exact,
                    link: None,
                })
            })
        })
        .take(MAX_PLACES)
        .collect();
    all.extend(through);
    all
}

/// Links made by the processes a script starts (`ln -s ~ h`, `ln -sfn HOME h`): the
/// link's path, what it points to, and whether both are exact.
fn spawned_links(f: &Facts) -> Vec<(usize, String, String, bool)> {
    let mut out = Vec::new();
    for (line, cmd) in f.spawns.iter().take(MAX_EACH) {
        let argvs: Vec<(Vec<String>, bool)> = match cmd {
            Cmd::Argv { argv, exact } => vec![(argv.clone(), *exact)],
            Cmd::Shell { text, exact } => cordon_shell::analyze(text)
                .commands
                .iter()
                .filter_map(|c| {
                    let p = c.program.as_ref()?;
                    let mut argv = vec![p.value.clone()];
                    argv.extend(c.args.iter().map(|w| w.value.clone()));
                    Some((argv, *exact && c.args.iter().all(|w| w.literal)))
                })
                .collect(),
            Cmd::Unknown => continue,
        };
        for (argv, exact) in argvs {
            if let Some((target, link)) = ln_operands(&argv) {
                let home = |s: &str| match s.strip_prefix("$HOME") {
                    Some(rest) => format!("~{rest}"),
                    None => s.to_string(),
                };
                out.push((*line, home(&link), home(&target), exact));
            }
        }
    }
    out
}

/// `ln [-s] [-f] [-n] TARGET LINK` (or `ln TARGET`, a link of its name here): what it
/// points to and the link. A target folder (`-t`) or more operands are not followed.
fn ln_operands(argv: &[String]) -> Option<(String, String)> {
    let program = argv.first()?;
    if program.rsplit('/').next() != Some("ln") {
        return None;
    }
    let mut operands = Vec::new();
    let mut options = true;
    for a in &argv[1..] {
        match a.as_str() {
            "--" if options => options = false,
            o if options && o.starts_with("--") => {
                if o.starts_with("--target-directory") {
                    return None;
                }
            }
            o if options && o.starts_with('-') && o.len() > 1 => {
                if o.contains('t') {
                    return None;
                }
            }
            o => operands.push(o.to_string()),
        }
    }
    match operands.as_slice() {
        [target, link] => Some((target.clone(), link.clone())),
        [target] => {
            let name = target.trim_end_matches('/').rsplit('/').next()?.to_string();
            Some((target.clone(), name))
        }
        _ => None,
    }
}

/// A path as it is in `place`: joined to a folder when relative, taken to where a link
/// points when it goes through the link; `None` when the place does not change it.
fn moved(place: &Place, p: &str) -> Option<String> {
    match &place.link {
        None => (!is_rooted(p)).then(|| join(&place.to, p)),
        Some(link) => {
            let p = p.trim_start_matches("./");
            let rest = p.strip_prefix(link.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then(|| format!("{}{rest}", place.to))
        }
    }
}

/// Only what a place changes: paths and written files taken there, processes started
/// after a `cd` to the folder or a link made; the script's destinations as context.
fn rebased(f: &Facts, place: &Place) -> Facts {
    let mut out = Facts {
        net: f.net.clone(),
        ..Facts::default()
    };
    for (line, p) in f.paths.iter().chain(&f.rel_paths).take(2 * MAX_EACH) {
        match moved(place, p) {
            Some(m) if place.exact => out.paths.push((*line, m)),
            Some(m) => out
                .globs
                .extend(crate::script::runtime_glob(&m).map(|g| (*line, g, true))),
            None => {}
        }
    }
    for (line, g, built) in f.globs.iter().take(MAX_EACH) {
        if let Some(m) = moved(place, g).filter(|_| place.link.is_some()) {
            out.globs
                .push((*line, m.replace(RUNTIME, "*"), *built || !place.exact));
        }
    }
    for (line, t, e) in f.targets.iter().take(MAX_EACH) {
        if let Some(m) = moved(place, t) {
            out.targets.push((*line, m, *e && place.exact));
        }
    }
    for (line, p, text) in f.written.iter().take(MAX_EACH) {
        if let Some(m) = moved(place, p).filter(|_| place.exact) {
            out.written.push((*line, m, text.clone()));
        }
    }
    let word = shell_word(&place.to, place.exact);
    let before = match &place.link {
        None => format!("cd {word}"),
        Some(l) => format!("ln -s {word} {}", super::facts::quote(l)),
    };
    for (line, cmd) in f.spawns.iter().take(MAX_EACH) {
        let (text, e) = match cmd {
            Cmd::Shell { text, exact } => (text.clone(), *exact),
            Cmd::Argv { argv, exact } if argv.first().is_some_and(|p| !p.contains(RUNTIME)) => (
                argv.iter()
                    .map(|a| super::facts::quote(a))
                    .collect::<Vec<_>>()
                    .join(" "),
                *exact,
            ),
            _ => continue,
        };
        out.spawns.push((
            *line,
            Cmd::Shell {
                text: format!("{before} && {text}"),
                exact: e,
            },
        ));
    }
    out
}

/// A path from the root or the home folder (or a run-time value, the home folder at
/// worst) is the same in every working folder.
fn is_rooted(p: &str) -> bool {
    p.starts_with(['/', '~']) || p.starts_with(RUNTIME)
}

fn join(base: &str, rel: &str) -> String {
    let rel = rel.trim_start_matches("./");
    if rel == "." || rel.is_empty() {
        base.to_string()
    } else if base.is_empty() {
        rel.to_string()
    } else {
        format!("{}/{rel}", base.trim_end_matches('/'))
    }
}

/// The folder as one shell word: `~` stays unquoted so that the shell expands it; a
/// folder known only at run time is a variable the analysis cannot know.
fn shell_word(base: &str, exact: bool) -> String {
    if !exact {
        return "\"$CORDON_UNKNOWN_FOLDER\"".into();
    }
    match base.strip_prefix('~') {
        Some("") => "~".into(),
        Some(rest) if rest.starts_with('/') => format!("~/{}", super::facts::quote(&rest[1..])),
        _ => super::facts::quote(base),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts_with(bases: &[(&str, bool)]) -> Facts {
        Facts {
            bases: bases.iter().map(|(b, e)| (1, b.to_string(), *e)).collect(),
            ..Facts::default()
        }
    }

    #[test]
    fn relative_folders_are_joined_to_the_folders_before_them() {
        let f = facts_with(&[("~", true), (".ssh", true), (".", true)]);
        let got: Vec<String> = places(&f).into_iter().map(|p| p.to).collect();
        assert_eq!(got, ["~", ".ssh", "~/.ssh"]);
    }

    #[test]
    fn many_relative_folders_stay_within_the_bound() {
        let many: Vec<(&str, bool)> = (0..200).map(|_| ("sub", true)).collect();
        let f = facts_with(&many);
        assert!(places(&f).len() <= 2 * MAX_PLACES);
    }

    #[test]
    fn a_path_through_a_link_is_where_the_link_points() {
        let link = Place {
            line: 1,
            to: "~".into(),
            exact: true,
            link: Some("user-templates".into()),
        };
        assert_eq!(
            moved(&link, "user-templates/.bashrc").as_deref(),
            Some("~/.bashrc")
        );
        assert_eq!(moved(&link, "./user-templates").as_deref(), Some("~"));
        assert_eq!(moved(&link, "user-templates-old/x"), None);
        assert_eq!(moved(&link, "/etc/passwd"), None);
        let folder = Place { link: None, ..link };
        assert_eq!(
            moved(&folder, ".ssh/id_ed25519").as_deref(),
            Some("~/.ssh/id_ed25519")
        );
        assert_eq!(moved(&folder, "~/.x"), None);
    }

    #[test]
    fn ln_operands_are_target_then_link() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ln_operands(&v(&["ln", "-sfn", "~", "h"])),
            Some(("~".into(), "h".into()))
        );
        assert_eq!(
            ln_operands(&v(&["/bin/ln", "-s", "--", "/etc", "e"])),
            Some(("/etc".into(), "e".into()))
        );
        assert_eq!(
            ln_operands(&v(&["ln", "-s", "/x/y/"])),
            Some(("/x/y/".into(), "y".into()))
        );
        assert_eq!(ln_operands(&v(&["ln", "-st", "d", "a", "b"])), None);
        assert_eq!(ln_operands(&v(&["cp", "a", "b"])), None);
    }

    #[test]
    fn a_home_folder_stays_a_word_the_shell_expands() {
        assert_eq!(shell_word("~", true), "~");
        assert_eq!(shell_word("~/.claude", true), "~/'.claude'");
        assert_eq!(shell_word("/x y", true), "'/x y'");
        assert!(shell_word("__runtime__/x", false).contains('$'));
    }
}
