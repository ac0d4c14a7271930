//! The static review of `SKILL.md` and the scripts: what the package would do once an
//! agent follows its instructions, read as text and never run.
//!
//! Shell text (fenced shell blocks in Markdown, shell scripts) is judged by cordon's
//! policy core exactly as a `bash` tool call would be, against a fixed, file-less view of
//! a machine (home `/home/user`, the skill installed at `/skills/pkg`): its guards find
//! sensitive reads and fetch-to-exec, its analyzer finds the programs run and the code it
//! cannot see through. Other languages are read for the shapes listed in [`PATTERNS`].
//! Every URL is normalized to an origin with its effective port.

mod assign;
mod credname;
mod document;
mod envset;
mod facts;
mod harness;
mod noderesolve;
mod notebook;
mod project;
mod prose;
mod reader;
mod reads;
mod remote;
mod runnable;
mod shellsrc;
mod skillmd;
mod text;
mod trees;
mod workdir;
mod written;
mod xml;

use crate::markdown::CodeKind;
use crate::report::{Check, Finding, Severity};
use cordon_policy::{Decision, FakeFs, LoadOptions, OpKind, Policy, Request, Step};
pub(crate) use reads::{judge_glob, judge_read};
use reads::{plain_global_git_config, public_key};
use regex::Regex;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;
use text::{
    code_candidates, judge_prose, judge_shell_text, looks_like_command, prose_shell_shape,
    shell_texts, strip_prompts,
};

pub(crate) const HOME: &str = "/home/user";
pub(crate) const SKILL_DIR: &str = "/skills/pkg";

/// Shapes looked for in any reviewed text, with the check and the sentence they report.
const PATTERNS: &[(Check, &str, &str)] = &[
    (
        Check::ConstructedShell,
        r"shell\s*=\s*True",
        "runs a command string through a shell (shell=True)",
    ),
    (
        Check::ConstructedShell,
        r"\bos\.(system|popen)\s*\(",
        "runs a command string through a shell (os.system/os.popen)",
    ),
    (
        Check::ConstructedShell,
        r"\bsubprocess\.(getoutput|getstatusoutput)\s*\(",
        "runs a command string through a shell",
    ),
    (
        Check::ConstructedShell,
        r"\b(child_process|execSync|spawnSync)\b|\brequire\(\s*['\x22]child_process",
        "starts processes from JavaScript (child_process)",
    ),
    (
        Check::ConstructedShell,
        r"(^|[^\w.])(eval|exec)\s*\(",
        "evaluates text built at run time as code (eval/exec)",
    ),
    (
        Check::ConstructedShell,
        r"\bnew\s+Function\s*\(",
        "evaluates text built at run time as code (new Function)",
    ),
    (
        Check::DownloadExec,
        r"(curl|wget)\b[^\n]*(-o|-O|>)[^\n]*\n?[^\n]*(chmod\s+\+x|\bsh\b|\bbash\b|\bsource\b)",
        "downloads a file and then runs it",
    ),
    (
        Check::DownloadExec,
        r"(urlopen|requests\.get|urllib\.request|fetch\s*\(|https?\.get\s*\()[\s\S]{0,400}(\bexec\s*\(|\beval\s*\(|subprocess|os\.system)|(\bexec|\beval)\s*\([^\n]{0,200}(urlopen|requests\.get|fetch\s*\()",
        "downloads content and executes it",
    ),
    (
        Check::LifecycleHook,
        r#""(preinstall|install|postinstall|prepare|prepublish|preuninstall|postuninstall)"\s*:"#,
        "declares an npm lifecycle script, which runs at install time",
    ),
    (
        Check::LifecycleHook,
        r"\b(npm|pnpm|yarn)\s+(install|i|add|ci)\b|\bpip3?\s+install\b|\bgem\s+install\b|\bcargo\s+install\b|\bgo\s+install\b",
        "installs packages whose install hooks run code",
    ),
    (
        Check::LifecycleHook,
        r"\bcmdclass\b|\bsetuptools\.command\b",
        "hooks into Python packaging commands",
    ),
    (
        Check::AmbientCredential,
        r"\.aws/(credentials|config)|\bAWS_(SECRET_ACCESS_KEY|SESSION_TOKEN|ACCESS_KEY_ID)\b",
        "uses AWS credentials from the user's environment",
    ),
    (
        Check::AmbientCredential,
        r"\b(GITHUB_TOKEN|GH_TOKEN|GITLAB_TOKEN|NPM_TOKEN|OPENAI_API_KEY|ANTHROPIC_API_KEY|HF_TOKEN)\b",
        "uses an API token from the user's environment",
    ),
    (
        Check::AmbientCredential,
        r"\bgh\s+auth\s+token\b|\bgcloud\s+auth\s+print-|\bgit\s+credential\b|\bsecurity\s+find-(generic|internet)-password\b",
        "asks a credential helper for the user's credentials",
    ),
    (
        Check::AmbientCredential,
        r"\.netrc\b|\.docker/config\.json|\.kube/config|\.config/gh/|\bSSH_AUTH_SOCK\b|\.git-credentials",
        "uses credentials stored in the user's home",
    ),
    (
        Check::AmbientCredential,
        r"169\.254\.169\.254|metadata\.google\.internal",
        "reaches a cloud metadata service for instance credentials",
    ),
];

static COMPILED: LazyLock<Vec<(Check, Regex, &'static str)>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .filter_map(|(c, p, m)| Regex::new(p).ok().map(|r| (*c, r, *m)))
        .collect()
});

static URL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>`)\]}]+"#).ok());

static PATH_LITERAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"["'`]((?:~|\$HOME|/etc|/root|/home/[^/"'`]+|/proc)/[^"'`\s]+)["'`]"#).ok()
});

/// Review the texts (package-relative path, content). `scripts` are the declared ones;
/// `extra` texts are reviewed only when something runs them (a shebang, a declaration,
/// or a SKILL.md command that executes them). An executable bit on an undeclared file is
/// dropped at install, so it does not make the file runnable.
#[cfg(test)]
pub(crate) fn review(
    texts: &[(String, String)],
    scripts: &BTreeSet<String>,
    extra: &BTreeSet<String>,
) -> Vec<Finding> {
    let files = texts.iter().map(|(p, _)| p.clone()).collect();
    review_package(texts, scripts, extra, &files)
}

/// [`review`] of a package whose regular files are `files` (`texts` are those of them
/// that are text the review keeps).
pub(crate) fn review_package(
    texts: &[(String, String)],
    scripts: &BTreeSet<String>,
    extra: &BTreeSet<String>,
    files: &BTreeSet<String>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(policy) = policy() else {
        out.push(Finding::new(Check::Command, Severity::Review, None,
            "cordon's policy core could not be set up for the static review; review the package by hand"));
        return out;
    };
    let fs = FakeFs::new().dir(HOME).dir(SKILL_DIR);
    let mut origins = HashSet::new();
    let own: BTreeSet<&str> = texts.iter().map(|(p, _)| p.as_str()).collect();
    let by_path: HashMap<&str, &str> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let cx = Cx {
        policy: &policy,
        fs: &fs,
        own: &own,
        texts: &by_path,
    };
    // How each file is read: by what runs, loads, names or copies it (`assign`).
    let assigned = assign::assign(texts, files, extra, scripts);
    for (loader, file) in &assigned.unreadable {
        out.push(Finding::new(Check::ConstructedShell, Severity::Review, Some(file), format!(
            "{loader} loads this file as code, and it is not text cordon can read; review it yourself")));
    }
    noderesolve::report_outside(&assigned.outside, &mut out);
    let mut readings: HashMap<&str, &assign::Reading> = assigned
        .reading
        .iter()
        .map(|(p, (r, _))| (p.as_str(), r))
        .collect();
    let derived: Vec<(String, String)> = assigned
        .derived
        .iter()
        .map(|(p, t, r)| {
            readings.insert(p.as_str(), r);
            (p.clone(), t.clone())
        })
        .collect();
    // Where the package's instructions name a harness's settings, if they do.
    let settings = harness::settings_named(texts.iter().chain(&derived), &readings);
    for (path, text) in texts.iter().chain(&derived) {
        let reading = readings.get(path.as_str()).copied();
        let executed = match reading {
            Some(assign::Reading::Runs(i)) => Some(i),
            _ => None,
        };
        let instructions = reading == Some(&assign::Reading::Instructions);
        let first = text.lines().next().unwrap_or("");
        let lower = path.to_ascii_lowercase();
        let is_md = lower.ends_with(".md") || lower.ends_with(".markdown");
        let shebang = first.starts_with("#!") && !is_md;
        // direnv runs `.envrc` on entering the folder.
        let envrc = lower.rsplit('/').next() == Some(".envrc");
        let runs = shebang || envrc || scripts.contains(path) || executed.is_some() || instructions;
        // The files a package's XML makes a parser load, whatever reads it.
        if xml::is_xml(path, text) {
            xml::judge(&cx, path, text, &mut out);
        }
        if extra.contains(path) && !runs {
            document::look_at(&cx, path, text, &mut out);
            continue;
        }
        // What runs the file decides how it is read, not its extension.
        let forced = if shebang {
            runnable::of_shebang(first)
        } else if is_md || lower.ends_with(".ipynb") || instructions {
            None
        } else {
            executed.cloned().or_else(|| {
                let other = match lower.rsplit_once('.').map(|(_, e)| e) {
                    Some("pl" | "pm") => Some("perl"),
                    Some("php") => Some("php"),
                    Some("lua") => Some("lua"),
                    Some("ps1" | "psm1") => Some("powershell"),
                    Some("tcl") => Some("tcl"),
                    _ => None,
                };
                match other {
                    Some(o) => Some(runnable::Interp::Other(o.into())),
                    None if runs && crate::script::Lang::of_file(path, text).is_none() => {
                        Some(runnable::Interp::Shell)
                    }
                    None => None,
                }
            })
        };
        if let Some(runnable::Interp::Other(name)) = &forced {
            out.push(Finding::new(
                Check::ConstructedShell,
                Severity::Review,
                Some(path),
                format!("a script in {name}, which cordon cannot read; review it yourself"),
            ));
        }
        if let Some((line, what, n)) = crate::metadata::hidden_in_text(text) {
            out.push(Finding::new(Check::HiddenText, Severity::Review, Some(path), format!(
                "line {line}: the text contains {what} ({n} such character(s)): what a reader sees is not what an agent reads")));
        }
        let lang = match &forced {
            Some(runnable::Interp::Lang(l)) => Some(*l),
            Some(_) => None,
            None => crate::script::Lang::of_file(path, text),
        };
        let mut patterns_on: Vec<(usize, String)> = Vec::new();
        if lower.ends_with(".ipynb") {
            for (cell, source) in notebook::cells(text) {
                let facts = crate::script::analyze(crate::script::Lang::Python, &source, 1);
                // IPython magics (`%%bash`, `%sx`, an indented or assigned `!cmd`) are
                // not Python: what the parser cannot read may run anything.
                let magic = source
                    .lines()
                    .any(|l| l.trim_start().starts_with(['%', '!']) || l.contains("= !"));
                if facts.parse_errors > 0 || magic {
                    out.push(Finding::new(Check::ConstructedShell, Severity::Review,
                        Some(&format!("{path} (cell {cell})")),
                        "the cell holds IPython syntax or text the Python parser cannot read (a magic or shell escape); the review may miss what it runs"));
                }
                facts::judge(
                    &cx,
                    &format!("{path} (cell {cell})"),
                    &facts,
                    &mut origins,
                    &mut out,
                );
            }
        } else if is_md || instructions {
            harness::judge(&cx, path, text, settings.as_deref(), &mut out);
            prose::judge(path, text, is_md, &mut out);
            if !is_md {
                document::judge_lines(&cx, path, text, &mut out);
            }
            if lower.rsplit('/').next() == Some("skill.md") {
                skillmd::judge(&cx, path, text, &mut out);
            }
            for code in crate::markdown::code(text) {
                let fenced = code.kind == CodeKind::Fenced;
                let unreadable = matches!(
                    code.lang.to_ascii_lowercase().as_str(),
                    "powershell"
                        | "ps1"
                        | "pwsh"
                        | "perl"
                        | "php"
                        | "lua"
                        | "bat"
                        | "cmd"
                        | "batch"
                );
                if fenced && unreadable {
                    out.push(Finding::new(
                        Check::ConstructedShell,
                        Severity::Review,
                        Some(path),
                        format!(
                            "line {}: a {} block, which cordon cannot read; review it yourself",
                            code.line, code.lang
                        ),
                    ));
                }
                if let Some(l) = crate::script::Lang::of_fence(&code.lang).filter(|_| fenced) {
                    let facts = crate::script::analyze(l, &code.text, code.line);
                    facts::judge(&cx, path, &facts, &mut origins, &mut out);
                    // A fence's language is the author's word: its lines are command
                    // candidates all the same.
                    let shell = strip_prompts(&code.text);
                    judge_shell_text(&cx, path, code.line, &shell, false, &mut out);
                } else if code.kind == CodeKind::Inline && is_path_mention(&code.text) {
                    // `~/.aws/credentials` on its own in a sentence names a file; it is
                    // not a command that runs it. What the words ask for is a review.
                    let mut got = Vec::new();
                    judge_read(&cx, path, code.line, code.text.trim(), &mut got);
                    for mut g in got {
                        g.verdict = Severity::Review;
                        g.message.push_str(" (named in the instructions)");
                        out.push(g);
                    }
                    // A file cordon never lets an agent write, named where the agent is
                    // told what to do: whatever the verb, a human should see it.
                    if let Some(why) = protected_named(code.text.trim()) {
                        out.push(Finding::new(
                            Check::Persistence,
                            Severity::Review,
                            Some(path),
                            format!(
                                "line {}: the instructions name {}, which {why}",
                                code.line,
                                crate::report::shown(code.text.trim())
                            ),
                        ));
                    }
                } else if code.kind == CodeKind::Prose {
                    if prose_shell_shape(&code.text) {
                        judge_prose(&cx, path, code.line, &code.text, &mut out);
                    }
                } else {
                    let strict = fenced && SHELL_FENCES.contains(&code.lang.as_str());
                    let shell = strip_prompts(&code.text);
                    judge_shell_text(&cx, path, code.line, &shell, strict, &mut out);
                    if !strict {
                        // `text`, no language, inline or HTML code: code-shaped content is
                        // read as the code it parses as.
                        code_candidates(&cx, path, code.line, &code.text, &mut out);
                    }
                }
                if code.kind != CodeKind::Prose {
                    patterns_on.push((code.line, code.text));
                }
            }
        } else if let Some(l) = lang {
            if l == crate::script::Lang::Python
                && let Some(why) = runnable::python_text_disagreement(text)
            {
                out.push(Finding::new(
                    Check::ConstructedShell,
                    Severity::Review,
                    Some(path),
                    format!("{why}: Python would read this file differently from cordon's parser"),
                ));
            }
            let facts = crate::script::with_script(path, || crate::script::analyze(l, text, 1));
            if facts.parse_errors > 0 {
                // What the parser could not read may hold anything: fail towards a human.
                out.push(Finding::new(Check::ConstructedShell, Severity::Review, Some(path), format!(
                    "the {l:?} parser could not read {} part(s) of this file; the review may miss what they do",
                    facts.parse_errors)));
            }
            facts::judge(&cx, path, &facts, &mut origins, &mut out);
        } else if forced == Some(runnable::Interp::Shell) {
            judge_shell(&cx, path, 1, text, true, &mut out);
            patterns_on.push((1, text.clone()));
        } else {
            for (line, shell) in shell_texts(path, text, scripts.contains(path)) {
                judge_shell(&cx, path, line, &shell, true, &mut out);
            }
            patterns_on.push((1, text.clone()));
        }
        for (first, piece) in &patterns_on {
            for (check, re, msg) in COMPILED.iter() {
                // Parsed languages are judged from their syntax trees; the shapes only
                // stand in for languages without a parser and for configuration files.
                if (is_md || instructions) && !MD_CHECKS.contains(check) {
                    continue;
                }
                if let Some(m) = re.find(piece) {
                    out.push(Finding::new(
                        *check,
                        Severity::Review,
                        Some(path),
                        format!("line {}: {msg}", first + line_of(piece, m.start()) - 1),
                    ));
                }
            }
        }
        if lang.is_none()
            && let Some(re) = PATH_LITERAL.as_ref()
        {
            for c in re.captures_iter(text) {
                let Some(p) = c.get(1) else { continue };
                let mut got = Vec::new();
                judge_read(&cx, path, line_of(text, p.start()), p.as_str(), &mut got);
                if is_md || instructions {
                    // A credential file named in instructions (`never paste ~/.aws/…`)
                    // is not read by naming it: commands that read it are judged as
                    // commands. A human should see what the words ask for.
                    for g in &mut got {
                        g.verdict = Severity::Review;
                        g.message.push_str(" (named in the instructions)");
                    }
                }
                out.append(&mut got);
            }
        }
        if let Some(re) = URL.as_ref() {
            for m in re.find_iter(text) {
                let url = m.as_str().trim_end_matches(['.', ',', ';', ':']);
                facts::origin(path, line_of(text, m.start()), url, &mut origins, &mut out);
            }
        }
        envset::judge_text(path, text, &mut out);
        for s in cordon_policy::secrets::find(text) {
            out.push(Finding::new(Check::Secret, Severity::Review, Some(path), format!(
                "line {}: a literal that looks like a {} (a package should not carry credentials)",
                line_of(text, s.range.start), s.kind)));
        }
        if path.rsplit('/').next() == Some("setup.py") {
            out.push(Finding::new(
                Check::LifecycleHook,
                Severity::Review,
                Some(path),
                "setup.py runs arbitrary code when the package is installed with pip",
            ));
        }
    }
    // The same finding from two readings of one text (its syntax and its words) once.
    let mut seen = HashSet::new();
    out.retain(|f| seen.insert((f.entry.clone(), f.message.clone())));
    out
}

/// Fence languages that are shell: their text is judged as a `bash` call would be. A
/// fence without a language may hold anything (a tree, output) and is judged leniently.
const SHELL_FENCES: &[&str] = &[
    "bash",
    "sh",
    "shell",
    "console",
    "zsh",
    "shell-session",
    "shellsession",
    "terminal",
];

/// The shapes still looked for in Markdown code (installing packages, credential helpers).
const MD_CHECKS: &[Check] = &[Check::LifecycleHook, Check::AmbientCredential];

/// The policy core and the machine view the review judges against.
pub(crate) struct Cx<'a> {
    pub policy: &'a Policy,
    pub fs: &'a FakeFs,
    /// The package's files this review reads.
    pub own: &'a BTreeSet<&'a str>,
    /// Their texts.
    pub texts: &'a HashMap<&'a str, &'a str>,
}

impl Cx<'_> {
    /// The text of the package's file `path`.
    fn text_of(&self, path: &str) -> Option<&str> {
        self.texts.get(path).copied()
    }

    /// The package's own file that a path in a command names, if any: `scripts/x.py`,
    /// `./scripts/x.py`, or an absolute path ending in the package's path
    /// (`/mnt/skills/public/docx/scripts/x.py`).
    fn own_file(&self, named: &str) -> Option<&str> {
        let named = named.trim_end_matches('.').trim_start_matches("./");
        if named.contains(['$', '`', '*', '?']) {
            return None;
        }
        self.own
            .iter()
            .copied()
            .find(|p| named == *p || named.ends_with(&format!("/{p}")))
    }
}

fn policy() -> Option<Policy> {
    let opts = LoadOptions {
        workspace: SKILL_DIR.into(),
        home: HOME.into(),
        skip_default_files: true,
        no_human: false,
        ..Default::default()
    };
    Policy::load(&opts, &FakeFs::new().dir(HOME).dir(SKILL_DIR)).ok()
}

pub(crate) fn judge_shell(
    cx: &Cx<'_>,
    path: &str,
    line: usize,
    shell: &str,
    list_programs: bool,
    out: &mut Vec<Finding>,
) {
    shellsrc::judge(path, line, shell, out);
    trees::judge(path, line, shell, out);
    remote::judge_push(path, line, shell, out);
    if list_programs {
        // Text that may not be shell runs this once per piece (`judge_shell_text`), not
        // once per line or per word of a sentence.
        project::judge(cx, path, line, shell, out);
    }
    let (policy, fs) = (cx.policy, cx.fs);
    let req = serde_json::json!({"tool": "bash", "input": {"command": shell}, "cwd": SKILL_DIR});
    let Ok(req) = Request::from_json(&req.to_string()) else {
        out.push(Finding::new(
            Check::Command,
            Severity::Review,
            Some(path),
            format!("line {line}: shell text cordon cannot analyze"),
        ));
        return;
    };
    let verdict = policy.decide(&req, fs);
    let mut programs = BTreeSet::new();
    for f in &verdict.findings {
        let rule = f.source.rule.as_deref().unwrap_or("");
        let target = crate::report::shown(&f.target);
        match (f.source.step, f.op) {
            // `cat ~/.ssh/id_ed25519.pub`: adding a key to a forge is an ordinary setup
            // step, and the key is public; the folder holds private keys, so a human
            // looks. Any other file there (or a pattern) is refused below.
            (Step::Guard, OpKind::Read) if f.decision == Decision::Deny && public_key(f) => out
                .push(Finding::new(
                    Check::SensitiveRead,
                    Severity::Review,
                    Some(path),
                    format!(
                        "line {line}: reads {target}, which holds no key of its own (a public key, host aliases or profile names), beside private keys"
                    ),
                )),
            // `git config --global user.email …`: an ordinary setting of the user's
            // git; a key that runs a program or redirects git is refused below.
            (Step::Guard, OpKind::Write)
                if f.decision == Decision::Deny && plain_global_git_config(f, shell) =>
            {
                out.push(Finding::new(
                    Check::Command,
                    Severity::Review,
                    Some(path),
                    format!(
                        "line {line}: changes the user's global git settings ({target}) with ordinary keys only"
                    ),
                ))
            }
            // `git config core.hooksPath .githooks`: the project's own committed hooks
            // enabled for its clone. cordon denies it when an agent runs it (hooks run
            // on the host at the next commit); a human should know the package asks.
            (Step::Guard, _)
                if f.decision == Decision::Deny
                    && let Some(dir) = reads::project_hooks_path(shell) =>
            {
                out.push(Finding::new(
                    Check::Command,
                    Severity::Review,
                    Some(path),
                    format!(
                        "line {line}: points git's hooks at the project's {} folder, so git runs the project's committed hooks (cordon denies this when an agent runs it)",
                        crate::report::shown(&dir)
                    ),
                ))
            }
            // `cp .env.example .env`: a project's own secrets file made from its
            // template, the usual first step of a web project. cordon denies the agent's
            // write of it; a human should see what goes in, nothing runs from it.
            (Step::Guard, OpKind::Write)
                if f.decision == Decision::Deny && project_secret_write(&f.target) =>
            {
                out.push(Finding::new(
                    Check::Command,
                    Severity::Review,
                    Some(path),
                    format!(
                        "line {line}: writes the project's {}, a file that holds secrets (cordon denies this when an agent runs it)",
                        crate::report::shown(f.target.trim_start_matches(&format!("{SKILL_DIR}/")))
                    ),
                ))
            }
            (Step::Guard, OpKind::Read | OpKind::List)
                if f.decision == Decision::Deny && reads::listing_only(f, shell) =>
            {
                out.push(reads::listing(path, line, &target));
            }
            (Step::Guard, OpKind::Read | OpKind::List) if f.decision == Decision::Deny => {
                out.push(Finding::new(
                    Check::SensitiveRead,
                    Severity::Refuse,
                    Some(path),
                    format!("line {line}: {}", f.reason),
                ))
            }
            // `sudo` in installation steps: cordon denies the call when an agent makes
            // it, so installing the package is not the danger; a human should know the
            // package asks for it.
            (Step::Guard, _) if f.decision == Decision::Deny && rule.contains("privilege") => out
                .push(Finding::new(
                    Check::Command,
                    Severity::Review,
                    Some(path),
                    format!(
                        "line {line}: {} (cordon denies this when an agent runs it)",
                        f.reason
                    ),
                )),
            (Step::Guard, _) if f.decision == Decision::Deny => {
                let check = if rule.contains("fetch") {
                    Check::DownloadExec
                } else {
                    Check::Command
                };
                out.push(Finding::new(
                    check,
                    Severity::Refuse,
                    Some(path),
                    format!("line {line}: {}", f.reason),
                ));
            }
            // A script of the package itself is reviewed on its own.
            (_, OpKind::Opaque)
                if let Some(own) = f
                    .reason
                    .split_once("runs the script ")
                    .and_then(|(_, d)| cx.own_file(d)) =>
            {
                out.push(Finding::new(
                    Check::Command,
                    Severity::Pass,
                    Some(path),
                    format!(
                        "line {line}: runs the package's own script {own}, reviewed on its own"
                    ),
                ))
            }
            (_, OpKind::Opaque) => out.push(Finding::new(
                Check::ConstructedShell,
                Severity::Review,
                Some(path),
                format!("line {line}: {}", f.reason),
            )),
            (_, OpKind::Write | OpKind::Delete)
                if f.location == Some(cordon_policy::Location::Outside) =>
            {
                out.push(Finding::new(
                    Check::Command,
                    Severity::Review,
                    Some(path),
                    format!(
                        "line {line}: {} {target} outside the skill's folder",
                        f.op.as_str()
                    ),
                ))
            }
            (_, OpKind::Exec | OpKind::Run) => {
                programs.insert(target);
            }
            _ => {}
        }
    }
    if !programs.is_empty() && list_programs {
        let list: Vec<_> = programs.into_iter().collect();
        out.push(Finding::new(
            Check::Command,
            Severity::Pass,
            Some(path),
            format!("line {line}: runs {}", list.join(", ")),
        ));
    }
}

/// Is an inline code span only a path from the home folder or the root (one word, no
/// shell syntax): a file named, not a command?
fn is_path_mention(code: &str) -> bool {
    let t = code.trim();
    t.starts_with(['~', '/'])
        && t.len() > 1
        && !t
            .chars()
            .any(|c| c.is_whitespace() || "|;&<>$`(){}*?[]'\"\\".contains(c))
}

/// Is the path (from the home folder or the root) one whose writing the guards deny,
/// and why?
fn protected_named(p: &str) -> Option<String> {
    use std::path::{Path, PathBuf};
    let full = match p.strip_prefix("~/") {
        Some(rest) => Path::new(HOME).join(rest),
        None if p.starts_with('/') => PathBuf::from(p),
        None => return None,
    };
    let hit = cordon_policy::guards::protected_write(&full, Path::new(HOME))?;
    Some(format!(
        "is where programs are started from or configured ({}); an agent told to write it changes what runs later",
        hit.pattern
    ))
}

/// Is `target` a file in the working folder named as a secrets file (`.env`,
/// `.env.local`), which nothing runs or reads as configuration?
fn project_secret_write(target: &str) -> bool {
    use std::path::Path;
    let Some(rel) = target.strip_prefix(&format!("{SKILL_DIR}/")) else {
        return false;
    };
    let p = Path::new(target);
    !rel.split('/').any(|c| c == ".." || c.is_empty())
        && !rel.contains('/')
        && p.file_name()
            .is_some_and(cordon_policy::guards::is_secret_file_name)
        // Denied for its name only, not as a file some program runs or obeys.
        && cordon_policy::guards::protected_write(p, Path::new(HOME))
            .is_none_or(|h| h.pattern.starts_with("secret file name"))
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests;
