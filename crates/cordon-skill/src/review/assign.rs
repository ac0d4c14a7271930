//! How each file of a package is read: the one place that gives a file a language or
//! makes it instructions, from what the package does with it rather than from its
//! extension alone.
//!
//! - A file a SKILL.md command runs is read in that interpreter's language
//!   ([`runnable::executed_in_markdown`]).
//! - A file a script loads by a literal path is read in the loader's language, whatever
//!   its extension: Node runs `require('./table.dat')` as JavaScript, Ruby's `load` and
//!   `require_relative` run any file as Ruby, and a Python `runpy`/`exec(open(…))`/
//!   `importlib` of a path named in the script runs it as Python. The rule is applied
//!   again to what is loaded, so a chain of loads is followed.
//! - A text file an instruction file names (SKILL.md, any Markdown of the package, and
//!   the files these name in turn) is instructions, in whatever format: `.txt`, `.rst`,
//!   `.html`, `.adoc`, `.json`, `.yaml`, `.mdx` …
//! - A package file a command copies into the project where it configures what runs or
//!   what an agent is told is read as what it becomes there (`cp hooks.yaml
//!   .pre-commit-config.yaml`, `cp style.txt CLAUDE.md`), and a patch the command
//!   applies is read file by file, each file's added lines as the file they make.
//! - Ruby code after `__END__` that the script reads through `DATA` is Ruby (and the
//!   tags of an ERB template there are Ruby code).
//!
//! What is read this way but is not text the review can read (a binary, a file too
//! large) is reported: a script runs a file cordon cannot read.

use super::noderesolve::Resolved;
use super::runnable::{self, Interp};
use crate::script::Lang;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// How a file is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Run by an interpreter (a SKILL.md command, a script's load, a copy into the
    /// project as code).
    Runs(Interp),
    /// Read by an agent as instructions.
    Instructions,
}

/// The readings of a package's files, and texts made from them (a patch's files, a
/// Ruby script's data section) to be reviewed as files of their own.
#[derive(Debug, Default)]
pub(crate) struct Assigned {
    pub reading: BTreeMap<String, (Reading, String)>,
    /// (shown name, text, how it is read).
    pub derived: Vec<(String, String, Reading)>,
    /// (loader, file): a script loads a package file that is not readable text.
    pub unreadable: Vec<(String, String)>,
    /// (loader, specifier): a script loads code from outside the package.
    pub outside: Vec<(String, String)>,
}

fn is_markdown(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    l.ends_with(".md") || l.ends_with(".markdown")
}

fn dir_of(p: &str) -> &str {
    p.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `rel` resolved against `dir`, lexically (`..` pops); `None` if it climbs out.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') || dir.is_empty() {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// Is `name` written in `text` as a whole path (not inside a longer name)?
fn names(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        before.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
            && after.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '/')))
    })
}

/// A licence text (`LICENSE.txt`, `COPYING`, `NOTICE`): named as the terms the package
/// comes under, not as steps to follow. It is still looked at like any text nothing
/// names (a command-shaped line in it is a review).
fn licence(p: &str) -> bool {
    let base = p.rsplit('/').next().unwrap_or(p).to_ascii_uppercase();
    ["LICENSE", "LICENCE", "COPYING", "NOTICE"]
        .iter()
        .any(|l| base.starts_with(l))
}

/// A document without its front matter's `license:` line (the licence file it names is
/// metadata, not an instruction).
fn without_licence_field(body: &str) -> String {
    let mut in_fm = false;
    let mut out = String::with_capacity(body.len());
    for (i, l) in body.lines().enumerate() {
        if l.trim_end() == "---" {
            in_fm = i == 0;
        }
        if in_fm && l.to_ascii_lowercase().starts_with("license:") {
            out.push('\n');
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The package files a script's load of `m` can mean, in the loader's language.
fn load_candidates(lang: Lang, dir: &str, m: &str) -> Vec<String> {
    let exts: &[&str] = match lang {
        Lang::Python => &["", ".py"],
        Lang::Ruby => &["", ".rb"],
        _ => &["", ".js", ".json", ".cjs", ".mjs", "/index.js"],
    };
    let mut out = Vec::new();
    for base in [join(dir, m), join("", m)].into_iter().flatten() {
        for e in exts {
            out.push(format!("{base}{e}"));
        }
    }
    if lang == Lang::Python && !m.contains('/') {
        let p = m.replace('.', "/");
        out.push(format!(
            "{}{p}.py",
            if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            }
        ));
    }
    out
}

static QUOTED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"["'`]([^"'`\s]{1,300})["'`]"#).ok());

/// Assign a reading to every file that has one.
/// `extra` are the text files not reviewed by name (no script extension, no shebang);
/// only those can be made instructions, and never a declared script (`scripts`).
pub(crate) fn assign(
    texts: &[(String, String)],
    files: &BTreeSet<String>,
    extra: &BTreeSet<String>,
    scripts: &BTreeSet<String>,
) -> Assigned {
    let mut a = Assigned::default();
    let text: BTreeMap<&str, &str> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let all: BTreeSet<String> = text.keys().map(|p| p.to_string()).collect();
    for (p, i) in runnable::executed_in_markdown(texts, &all) {
        a.reading
            .insert(p, (Reading::Runs(i), "a SKILL.md command runs it".into()));
    }
    // Instructions: Markdown, and text files instructions name, transitively.
    let plain = |p: &str| {
        let t = text.get(p).copied().unwrap_or("");
        extra.contains(p)
            && !scripts.contains(p)
            && !is_markdown(p)
            && !licence(p)
            && !t.starts_with("#!")
            && Lang::of_file(p, t).is_none()
    };
    let mut docs: Vec<String> = all.iter().filter(|p| is_markdown(p)).cloned().collect();
    let mut i = 0;
    while i < docs.len() {
        let d = docs[i].clone();
        i += 1;
        let body = without_licence_field(text.get(d.as_str()).copied().unwrap_or(""));
        for c in &all {
            if !plain(c) || a.reading.contains_key(c) || c == &d {
                continue;
            }
            let rel = c.strip_prefix(&format!("{}/", dir_of(&d))).unwrap_or(c);
            // Or by its name alone, when no other file of the package has it.
            let base = c.rsplit('/').next().unwrap_or(c);
            let unique = base.contains('.')
                && all
                    .iter()
                    .filter(|p| p.rsplit('/').next() == Some(base))
                    .count()
                    == 1;
            if names(&body, c) || names(&body, rel) || (unique && names(&body, base)) {
                a.reading
                    .insert(c.clone(), (Reading::Instructions, format!("{d} names it")));
                docs.push(c.clone());
            }
        }
    }
    // Copies and patches into the project, from the commands of instructions and shell
    // scripts.
    let own = |w: &str| {
        let w = w.trim_start_matches("./");
        all.iter()
            .find(|p| w == p.as_str() || w.ends_with(&format!("/{p}")))
            .cloned()
    };
    let mut shell_texts: Vec<String> = Vec::new();
    for d in &docs {
        let body = text.get(d.as_str()).copied().unwrap_or("");
        if is_markdown(d) {
            // Code, as SKILL.md's code is judged for writes (a sentence is not).
            shell_texts.extend(
                crate::markdown::code(body)
                    .into_iter()
                    .filter(|c| {
                        c.kind != crate::markdown::CodeKind::Prose && !runnable::other_language(c)
                    })
                    .map(|c| c.text),
            );
        } else {
            shell_texts.extend(body.lines().map(str::to_string));
        }
    }
    // Shell scripts, and what they run (`bash helper.dat`, `. ./lib.dat`), followed
    // through what they run in turn.
    let mut shell_files: Vec<String> = texts
        .iter()
        .filter(|(p, t)| {
            p.ends_with(".sh")
                || matches!(a.reading.get(p), Some((Reading::Runs(Interp::Shell), _)))
                || runnable::of_shebang(t.lines().next().unwrap_or("")) == Some(Interp::Shell)
        })
        .map(|(p, _)| p.clone())
        .collect();
    let mut k = 0;
    while k < shell_files.len() && k < 4096 {
        let p = shell_files[k].clone();
        k += 1;
        let body = text.get(p.as_str()).copied().unwrap_or("");
        shell_texts.push(body.to_string());
        let mut found = BTreeMap::new();
        runnable::executed_in_text(dir_of(&p), body, true, &all, &mut found);
        for (f, i) in found {
            if f == p || a.reading.contains_key(&f) {
                continue;
            }
            if i == Interp::Shell {
                shell_files.push(f.clone());
            }
            a.reading.insert(
                f,
                (Reading::Runs(i), format!("the shell script {p} runs it")),
            );
        }
    }
    // What an instruction in another format runs (`bash setup.dat` in a `.txt`).
    let others: Vec<(String, String)> = docs
        .iter()
        .filter(|d| !is_markdown(d))
        .map(|d| {
            (
                format!("{d}.md"),
                text.get(d.as_str()).copied().unwrap_or("").to_string(),
            )
        })
        .collect();
    for (p, i) in runnable::executed_in_markdown(&others, &all) {
        a.reading
            .insert(p, (Reading::Runs(i), "an instruction file runs it".into()));
    }
    copies(&shell_texts, &text, &own, &plain, &mut a);
    let spawned = loads(&text, files, &mut a);
    copies(
        &spawned.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>(),
        &text,
        &own,
        &plain,
        &mut a,
    );
    // What scripts spawn with a file of the package (`subprocess.run(['bash', 'x.dat'])`).
    let mut found = BTreeMap::new();
    for (p, c) in &spawned {
        runnable::executed_in_text(dir_of(p), c, true, &all, &mut found);
    }
    let mut again = false;
    for (f, i) in found {
        let t = text.get(f.as_str()).copied().unwrap_or("");
        if a.reading.contains_key(&f) || Lang::of_file(&f, t).is_some() {
            continue;
        }
        again |= matches!(i, Interp::Lang(_));
        a.reading
            .insert(f, (Reading::Runs(i), "a script runs it".into()));
    }
    if again {
        loads(&text, files, &mut a);
    }
    a
}

/// The readings of package files that commands (`shell`) copy or patch into the
/// project where they configure what runs or what an agent is told.
fn copies(
    shell: &[String],
    text: &BTreeMap<&str, &str>,
    own: &dyn Fn(&str) -> Option<String>,
    plain: &dyn Fn(&str) -> bool,
    a: &mut Assigned,
) {
    let text_of = |p: &str| text.get(p).map(|t| t.to_string());
    for s in shell {
        for w in super::project::writes(s, own, &text_of) {
            let Some(src) = w.source else { continue };
            let body = text.get(src.as_str()).copied().unwrap_or("");
            // A copy that becomes code (`cp vite.config.js.tmpl vite.config.js`, any
            // source file) is read as that code wherever it lands; other copies only
            // where they configure what runs or what an agent is told.
            let why = match super::project::control(&w.target) {
                Some(why) => why,
                None if Lang::of_file(&w.target, body).is_some() => {
                    "a file of code the project's tools run".to_string()
                }
                None => continue,
            };
            if !super::project::patch_targets(body).is_empty() {
                for (f, added) in super::project::patch_files(body) {
                    let reading = match Lang::of_file(&f, &added) {
                        Some(l) => Reading::Runs(Interp::Lang(l)),
                        None => Reading::Instructions,
                    };
                    let name = format!("{src} (its {f})");
                    if !a.derived.iter().any(|(n, _, _)| *n == name) {
                        a.derived.push((name, added, reading));
                    }
                }
                continue;
            }
            if !plain(&src) {
                // A script by its own name or first line is reviewed as itself.
                continue;
            }
            let why = format!("copied into the project as {}: {why}", w.target);
            match Lang::of_file(&w.target, body) {
                // Code wins over instructions: it is what the copy becomes.
                Some(l) => {
                    a.reading.insert(src, (Reading::Runs(Interp::Lang(l)), why));
                }
                None => {
                    a.reading.entry(src).or_insert((Reading::Instructions, why));
                }
            }
        }
    }
}

/// Follow what scripts load, from every file with a language; returns the command
/// lines the scripts spawn (for the copies they make).
fn loads(
    text: &BTreeMap<&str, &str>,
    files: &BTreeSet<String>,
    a: &mut Assigned,
) -> Vec<(String, String)> {
    let mut spawned = Vec::new();
    let lang_of = |p: &str, a: &Assigned| match a.reading.get(p) {
        Some((Reading::Runs(Interp::Lang(l)), _)) => Some(*l),
        Some(_) => None,
        None => text.get(p).and_then(|t| Lang::of_file(p, t)),
    };
    let mut queue: Vec<(String, Lang)> = text
        .keys()
        .filter_map(|p| lang_of(p, a).map(|l| (p.to_string(), l)))
        .collect();
    let mut done = BTreeSet::new();
    while let Some((p, lang)) = queue.pop() {
        if !done.insert(p.clone()) || done.len() > 4096 {
            continue;
        }
        let body = text.get(p.as_str()).copied().unwrap_or("");
        let facts = crate::script::analyze(lang, body, 1);
        for (_, c) in &facts.spawns {
            match c {
                crate::script::Cmd::Shell { text, .. } => spawned.push((p.clone(), text.clone())),
                crate::script::Cmd::Argv { argv, .. } => spawned.push((p.clone(), argv.join(" "))),
                crate::script::Cmd::Unknown => {}
            }
        }
        let dir = dir_of(&p);
        let mut named: Vec<String> = facts.imports.iter().map(|(_, m)| m.clone()).collect();
        // Code run from a file named only in the script's text (`runpy.run_path(P)`,
        // `exec(open(P).read())`, `load File.join(__dir__, P)`): every literal that names
        // a package file may be it. (Only then: a script that reads a template by name
        // does not run it.)
        if !facts.code.is_empty()
            && let Some(re) = QUOTED.as_ref()
        {
            named.extend(
                re.captures_iter(body)
                    .filter_map(|c| c.get(1))
                    .map(|m| m.as_str().to_string()),
            );
        }
        let js = matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
        if js {
            named.extend(super::noderesolve::specifiers(body));
        }
        let mut found: Vec<String> = Vec::new();
        for m in named {
            let resolved = if js {
                super::noderesolve::resolve(dir, &m, files, text)
            } else {
                Resolved::Elsewhere
            };
            if let Resolved::Elsewhere = resolved {
                // Also a literal naming a package file from the script's folder or the
                // root (a test runner's `files`, a loader given a path).
                found.extend(
                    load_candidates(lang, dir, &m)
                        .into_iter()
                        .find(|c| files.contains(c) && *c != p),
                );
                continue;
            }
            match resolved {
                Resolved::Files(f) => found.extend(f.into_iter().filter(|c| *c != p)),
                Resolved::Outside => {
                    let pair = (p.clone(), m);
                    if !a.outside.contains(&pair) {
                        a.outside.push(pair);
                    }
                }
                Resolved::Elsewhere => {}
            }
        }
        for f in found {
            // Node reads `.json` as data, and `.node` is native code (judged as such).
            let data = js && (f.ends_with(".json") || f.ends_with(".node"));
            if is_markdown(&f) || data {
                continue;
            }
            if !text.contains_key(f.as_str()) {
                let pair = (p.clone(), f);
                if crate::opaque::classify(&pair.1, b"").is_none() && !a.unreadable.contains(&pair)
                {
                    a.unreadable.push(pair);
                }
                continue;
            }
            if lang_of(&f, a).is_some() {
                continue;
            }
            a.reading.insert(
                f.clone(),
                (
                    Reading::Runs(Interp::Lang(lang)),
                    format!("{p} loads it as {lang:?}"),
                ),
            );
            queue.push((f, lang));
        }
        let seen = a
            .derived
            .iter()
            .any(|(n, _, _)| n.starts_with(&format!("{p} (")));
        if lang == Lang::Ruby
            && !seen
            && let Some((data, erb)) = ruby_data(body)
        {
            a.derived.push((
                format!("{p} (data after __END__)"),
                data,
                Reading::Runs(Interp::Lang(Lang::Ruby)),
            ));
            if !erb.trim().is_empty() {
                a.derived.push((
                    format!("{p} (ERB tags after __END__)"),
                    erb,
                    Reading::Runs(Interp::Lang(Lang::Ruby)),
                ));
            }
        }
    }
    spawned
}

/// A Ruby script's data section, when the script reads it (`DATA`): the section as
/// text, and the code of its ERB tags (`<% … %>`, `<%= … %>`) one per line.
fn ruby_data(body: &str) -> Option<(String, String)> {
    let start = body
        .match_indices("__END__")
        .find(|(i, _)| {
            (*i == 0 || body[..*i].ends_with('\n')) && body[i + 7..].starts_with(['\n', '\r'])
        })
        .map(|(i, _)| i)?;
    if !names(&body[..start], "DATA") {
        return None;
    }
    let data = body[start + 7..]
        .trim_start_matches(['\r', '\n'])
        .to_string();
    let mut erb = String::new();
    let mut rest = data.as_str();
    while let Some(open) = rest.find("<%") {
        let after = &rest[open + 2..];
        let after = after.strip_prefix(['=', '-', '#']).unwrap_or(after);
        let close = after.find("%>").unwrap_or(after.len());
        erb.push_str(after[..close].trim_end_matches('-'));
        erb.push('\n');
        rest = &after[close.min(after.len())..];
        if rest.is_empty() {
            break;
        }
    }
    Some((data, erb))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)]) -> Assigned {
        let texts: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let all: BTreeSet<String> = texts.iter().map(|(p, _)| p.clone()).collect();
        let extra = all.iter().filter(|p| !is_markdown(p)).cloned().collect();
        assign(&texts, &all, &extra, &BTreeSet::new())
    }

    #[test]
    fn loads_give_the_loader_s_language() {
        let a = run(&[
            ("scripts/go.js", "const t = require('./lib/y.bin');"),
            ("scripts/lib/y.bin", "module.exports = 1;"),
            ("go.rb", "load File.join(__dir__, 'x')\n"),
            ("x", "puts 1\n"),
            ("r.py", "import runpy\nrunpy.run_path('data/t.cfg')\n"),
            ("data/t.cfg", "print(1)\n"),
        ]);
        let lang = |p: &str| a.reading.get(p).map(|(r, _)| r.clone());
        assert_eq!(
            lang("scripts/lib/y.bin"),
            Some(Reading::Runs(Interp::Lang(Lang::JavaScript)))
        );
        assert_eq!(lang("x"), Some(Reading::Runs(Interp::Lang(Lang::Ruby))));
        assert_eq!(
            lang("data/t.cfg"),
            Some(Reading::Runs(Interp::Lang(Lang::Python)))
        );
    }

    #[test]
    fn named_text_files_are_instructions() {
        let a = run(&[
            ("SKILL.md", "Follow [setup](docs/setup.rst)."),
            ("docs/setup.rst", "Then read steps.json"),
            ("docs/steps.json", "{}"),
            ("docs/unnamed.txt", "x"),
        ]);
        assert!(matches!(
            a.reading.get("docs/setup.rst"),
            Some((Reading::Instructions, _))
        ));
        assert!(matches!(
            a.reading.get("docs/steps.json"),
            Some((Reading::Instructions, _))
        ));
        assert!(!a.reading.contains_key("docs/unnamed.txt"));
    }

    #[test]
    fn ruby_data_section_is_code_when_read() {
        let (d, erb) =
            ruby_data("x = ERB.new(DATA.read)\n__END__\nhi <%= `id` %> <% y %>\n").unwrap();
        assert!(d.starts_with("hi"));
        assert_eq!(erb, " `id` \n y \n");
        assert!(ruby_data("puts 1\n__END__\n<% `id` %>\n").is_none());
    }
}
