//! Program knowledge: what each known program does with its arguments.
//!
//! Owns: one table entry per program (in the family modules below), each a small
//! function a reviewer can read next to the program's manual. An entry classifies an
//! invocation as read-only or mutating and lists the paths read, written and deleted,
//! the network targets, and every argument that makes the program run other code.
//! A program without an entry is `Unknown`, never read-only; an entry that meets a
//! form it does not model answers `Unknown` too.

mod build;
mod config_reads;
mod docs;
mod files;
mod git;
mod identity;
mod inline;
mod interp;
mod net;
pub(crate) mod runs;
mod services;
pub mod sources;
mod system;
mod text;

pub(crate) use inline::inline_code;
pub(crate) use net::sftp_batch;
pub(crate) use system::influential;

use crate::model::{Class, Effects, ExecArg, HazardKind, NetTarget, Word};

/// One invocation of a program, after wrapper peeling.
pub(crate) struct Invocation<'a> {
    /// The name the program is known by (`rm` for `/bin/rm`).
    pub name: &'a str,
    /// The arguments after the program name.
    pub args: &'a [Word],
    /// Assignments in the command's environment (`LESSOPEN=… less f`).
    pub assignments: &'a [(String, Word)],
}

/// What the knowledge base says about an invocation.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub effects: Effects,
    /// Strings the program runs as shell code (`bash -c STR`, `eval …`).
    pub shell_code: Vec<(String, Word)>,
    /// Commands the program runs through an argument (`find -exec CMD ;`).
    pub exec_argv: Vec<(String, Vec<Word>)>,
    /// The program reads code to run from standard input.
    pub stdin_code: bool,
    /// Host-like operands of a lookup tool, for the DNS-exfiltration check.
    pub lookup_hosts: Vec<Word>,
    /// URL operands whose host part matters for the DNS-exfiltration check.
    pub urls: Vec<Word>,
    /// The program's output is data fetched from the network.
    pub fetches: bool,
    /// The files the program writes come from the network (`git clone`).
    pub fetched_writes: bool,
    /// The program's output is its input decoded or transformed (`base64 -d`, `xxd -r`,
    /// `rev`, `tr`, `gunzip -c`, `printf '\x…'`): text a reader of the command does
    /// not see.
    pub decodes: bool,
    /// A `cd`-like change of directory for later commands.
    pub cd: Option<Cd>,
    /// The program runs code (a script, a heredoc) read from a file or stdin.
    pub runs_script: bool,
    /// Hazards the invocation carries by itself, with one sentence each: code that
    /// decodes text and runs it (`python3 -c "exec(b64decode(…))"`), a script run
    /// straight from a URL (`deno run https://…`).
    pub hazards: Vec<(HazardKind, String)>,
}

/// A change of working directory.
#[derive(Debug, Clone)]
pub(crate) enum Cd {
    To(Word),
    Unknown,
}

impl Outcome {
    fn new(class: Class) -> Self {
        Self {
            effects: Effects {
                class,
                ..Effects::default()
            },
            ..Self::default()
        }
    }

    pub(crate) fn read_only() -> Self {
        Self::new(Class::ReadOnly)
    }

    /// The interpreter runs the script file `script` (which it also reads).
    pub(crate) fn run_script(&mut self, interpreter: &str, script: &Word) {
        self.reads([script]);
        self.exec(interpreter, "script", &script.value);
        self.runs_script = true;
    }

    /// The interpreter reads the code it runs from standard input.
    pub(crate) fn run_stdin_code(&mut self) {
        self.stdin_code = true;
        self.mutate();
    }

    pub(crate) fn unknown() -> Self {
        Self::new(Class::Unknown)
    }

    pub(crate) fn mutating() -> Self {
        Self::new(Class::Mutating)
    }

    pub(crate) fn reads<'w>(&mut self, ws: impl IntoIterator<Item = &'w Word>) {
        self.effects
            .reads
            .extend(ws.into_iter().filter(|w| w.value != "-").cloned());
    }

    pub(crate) fn writes<'w>(&mut self, ws: impl IntoIterator<Item = &'w Word>) {
        let before = self.effects.writes.len();
        self.effects
            .writes
            .extend(ws.into_iter().filter(|w| w.value != "-").cloned());
        if self.effects.writes.len() > before {
            self.mutate();
        }
    }

    /// The program may write files beneath these destinations (see [`Effects::fills`]).
    pub(crate) fn fills<'w>(&mut self, ws: impl IntoIterator<Item = &'w Word>) {
        self.effects
            .fills
            .extend(ws.into_iter().filter(|w| w.value != "-").cloned());
    }

    pub(crate) fn deletes<'w>(&mut self, ws: impl IntoIterator<Item = &'w Word>) {
        let before = self.effects.deletes.len();
        self.effects.deletes.extend(ws.into_iter().cloned());
        if self.effects.deletes.len() > before {
            self.mutate();
        }
    }

    pub(crate) fn exec(&mut self, program: &str, arg: &str, detail: &str) {
        self.effects.executes.push(ExecArg {
            program: program.to_owned(),
            arg: arg.to_owned(),
            own_purpose: false,
            detail: crate::parse::truncate(detail.to_owned()),
        });
        self.mutate();
    }

    /// The value of `arg` is a command the program runs (`git -c core.pager=CMD`,
    /// `rsync -e CMD`, `tar --to-command=CMD`): analyzed as the shell text it is when
    /// literal (the program itself stays what it was, as `bash -c '…'` is read-only:
    /// the commands of the text carry their own effects), an executing argument
    /// otherwise.
    pub(crate) fn code(&mut self, program: &str, arg: &str, value: &Word) {
        let value = Word {
            value: value.value.trim().to_owned(),
            literal: value.literal,
        };
        if value.value.is_empty() {
            self.exec(program, arg, "runs a command given in its value");
            return;
        }
        self.shell_code.push((format!("{program} {arg}"), value));
    }

    /// Paths handed to code the analysis does not see (a script's arguments), which
    /// may do anything with them (see [`Effects::mentions`](crate::model::Effects)).
    pub(crate) fn mentions<'w>(&mut self, ws: impl IntoIterator<Item = &'w Word>) {
        self.push_mentions(ws, true);
    }

    /// Record mentions; `may_write` when the code naming them may write files.
    pub(crate) fn push_mentions<'w>(
        &mut self,
        ws: impl IntoIterator<Item = &'w Word>,
        may_write: bool,
    ) {
        for w in ws {
            if w.literal && looks_like_path(&w.value) {
                self.effects.mentions_may_write |= may_write;
                if !self.effects.mentions.contains(w) {
                    self.effects.mentions.push(w.clone());
                }
            }
        }
    }

    /// Paths named by the string literals of a piece of code.
    pub(crate) fn mentions_in_code(&mut self, code: &Word) {
        let found: Vec<Word> = string_literals(&code.value)
            .into_iter()
            .filter_map(|s| {
                // In code the shell expanded (`"open('$HOME/.x')"`), HOME is known.
                let s = if code.literal {
                    s
                } else if let Some(r) = s.strip_prefix("${HOME}").or(s.strip_prefix("$HOME")) {
                    format!("~{r}")
                } else {
                    s
                };
                (!s.contains(['$', '`'])).then(|| Word::literal(s))
            })
            .collect();
        self.push_mentions(&found, code_may_write(&code.value));
    }

    pub(crate) fn own_exec(&mut self, program: &str, arg: &str, detail: &str) {
        self.effects.executes.push(ExecArg {
            program: program.to_owned(),
            arg: arg.to_owned(),
            own_purpose: true,
            detail: crate::parse::truncate(detail.to_owned()),
        });
        self.mutate();
    }

    pub(crate) fn net(&mut self, target: &Word) {
        self.effects.network.push(NetTarget {
            target: target.value.clone(),
            literal: target.literal,
        });
        self.mutate();
    }

    pub(crate) fn net_unknown(&mut self) {
        self.effects.network_unknown_target = true;
        self.mutate();
    }

    pub(crate) fn privilege(&mut self, why: &str) {
        self.effects.privilege.get_or_insert_with(|| why.to_owned());
        self.mutate();
    }

    /// Mark as mutating unless the entry already said it does not know the form.
    pub(crate) fn mutate(&mut self) {
        if self.effects.class == Class::ReadOnly {
            self.effects.class = Class::Mutating;
        }
    }
}

/// A table entry: program names and the function that classifies an invocation.
pub(crate) struct Entry {
    pub names: &'static [&'static str],
    pub classify: fn(&Invocation<'_>) -> Outcome,
}

/// All families, searched in order.
const FAMILIES: &[&[Entry]] = &[
    files::ENTRIES,
    text::ENTRIES,
    git::ENTRIES,
    interp::ENTRIES,
    build::ENTRIES,
    net::ENTRIES,
    services::ENTRIES,
    system::ENTRIES,
    docs::ENTRIES,
];

/// Classify an invocation. Unknown programs are `Unknown`.
pub(crate) fn classify(inv: &Invocation<'_>) -> Outcome {
    for family in FAMILIES {
        for entry in *family {
            if entry.names.contains(&inv.name) {
                let mut o = (entry.classify)(inv);
                runs::apply(inv, &mut o);
                config_reads::apply(inv, &mut o);
                return o;
            }
        }
    }
    let mut o = interp::versioned(inv).unwrap_or_else(Outcome::unknown);
    runs::apply(inv, &mut o);
    config_reads::apply(inv, &mut o);
    o
}

/// True when the knowledge base has an entry for the name (used to decide whether a
/// function or alias shadows a real command).
pub(crate) fn knows(name: &str) -> bool {
    FAMILIES
        .iter()
        .any(|f| f.iter().any(|e| e.names.contains(&name)))
}

/// Options and operands of a command line.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// Options in order: name (`-o`, `--output`) and value when it takes one.
    pub opts: Vec<(String, Option<Word>)>,
    pub operands: Vec<Word>,
}

impl Parsed {
    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|(n, _)| names.contains(&n.as_str()))
    }

    pub(crate) fn values<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a Word> + 'a {
        self.opts
            .iter()
            .filter(move |(n, _)| names.contains(&n.as_str()))
            .filter_map(|(_, v)| v.as_ref())
    }
}

/// How a program's options are shaped.
pub(crate) struct Opts {
    /// Short options that take a value (`"nfo"`).
    pub short: &'static str,
    /// Long options that take a value, without dashes.
    pub long: &'static [&'static str],
    /// Stop option parsing at the first operand (POSIX style, used for programs whose
    /// operands are commands).
    pub posix: bool,
}

impl Opts {
    pub(crate) const fn gnu(short: &'static str, long: &'static [&'static str]) -> Self {
        Self {
            short,
            long,
            posix: false,
        }
    }
}

/// Split arguments into options and operands.
pub(crate) fn parse_args(args: &[Word], spec: &Opts) -> Parsed {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let a = w.value.as_str();
        if a == "--" {
            out.operands.extend(args[i + 1..].iter().cloned());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            if spec.posix {
                out.operands.extend(args[i..].iter().cloned());
                break;
            }
            out.operands.push(w.clone());
            i += 1;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            if let Some((name, value)) = long.split_once('=') {
                out.opts.push((
                    format!("--{name}"),
                    Some(Word {
                        value: value.to_owned(),
                        literal: w.literal,
                    }),
                ));
                i += 1;
            } else if spec.long.contains(&long) {
                out.opts.push((a.to_owned(), args.get(i + 1).cloned()));
                i += 2;
            } else {
                out.opts.push((a.to_owned(), None));
                i += 1;
            }
            continue;
        }
        let body = &a[1..];
        let mut step = 1;
        for (pos, ch) in body.char_indices() {
            if spec.short.contains(ch) {
                let rest = &body[pos + ch.len_utf8()..];
                if rest.is_empty() {
                    out.opts.push((format!("-{ch}"), args.get(i + 1).cloned()));
                    step = 2;
                } else {
                    out.opts.push((
                        format!("-{ch}"),
                        Some(Word {
                            value: rest.to_owned(),
                            literal: w.literal,
                        }),
                    ));
                }
                break;
            }
            out.opts.push((format!("-{ch}"), None));
        }
        i += step;
    }
    out
}

/// Could code (in any language) write, delete, move or copy a file, or run a command
/// that could? Spelled-out names only; anything that looks like it counts.
pub(crate) fn code_may_write(code: &str) -> bool {
    const WRITES: &[&str] = &[
        "'w",
        "\"w",
        "'a'",
        "\"a\"",
        "'a+",
        "\"a+",
        "'r+",
        "\"r+",
        "'x'",
        "\"x\"",
        "write",
        "append",
        "unlink",
        "rename",
        "replace(",
        "copy",
        "move",
        "symlink",
        "link(",
        "chmod",
        "chown",
        "mkdir",
        "makedirs",
        "remove",
        "rmdir",
        "rmtree",
        "rmsync",
        "rm_r",
        "rm(",
        "truncate",
        "dump",
        "save",
        "put",
        "touch",
        ">",
        "tee",
        "system",
        "exec",
        "spawn",
        "popen",
        "subprocess",
        "shell",
        "insert",
        "update",
        "delete",
        "create",
        "attach",
        "vacuum",
        "backup",
        "output",
        "once",
    ];
    let lower = code.to_ascii_lowercase();
    WRITES.iter().any(|w| lower.contains(w))
}

/// Could this text name a file? A string that starts with `/`, `~`, `./` or `../`,
/// contains a `/`, or names a dotfile (`.env`, `.bashrc`); never a URL, and never
/// text with line breaks. Used only for mentions, which the policy checks against its
/// guards alone, so a false positive costs nothing.
pub(crate) fn looks_like_path(s: &str) -> bool {
    if s.is_empty() || s.len() > 4096 || s.contains(['\n', '\0']) || s.contains("://") {
        return false;
    }
    // A command line (`sh -c /tmp/x`) is not a path; a path with a space in it
    // (`~/.config/chromium/Default/Login Data`) starts like one.
    if s.contains(char::is_whitespace) && !s.starts_with(['/', '~']) && !s.starts_with("./") {
        return false;
    }
    s.starts_with('/')
        || s.starts_with('~')
        || s.contains('/')
        || s.strip_prefix('.')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// The contents of the quoted string literals in a piece of code (`'…'`, `"…"`, and
/// backquoted template strings), with backslash escapes of the quote itself undone.
/// Language-neutral on purpose: it looks for text that would name a file, not for
/// the calls that would open it.
pub(crate) fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut lit = String::new();
        let mut closed = false;
        while let Some(d) = chars.next() {
            if d == '\\' {
                match chars.next() {
                    Some(e) if e == c || e == '\\' => lit.push(e),
                    Some(e) => {
                        lit.push('\\');
                        lit.push(e);
                    }
                    None => break,
                }
                continue;
            }
            if d == c {
                closed = true;
                break;
            }
            lit.push(d);
        }
        if closed && !lit.is_empty() {
            out.push(lit);
        }
    }
    out
}

/// Join words into a display string.
pub(crate) fn join(ws: &[Word]) -> String {
    let mut s = String::new();
    for (i, w) in ws.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&w.value);
    }
    s
}

/// A read-only program whose operands are all paths it reads.
pub(crate) fn read_operands(inv: &Invocation<'_>, spec: &Opts) -> Outcome {
    let p = parse_args(inv.args, spec);
    let mut o = Outcome::read_only();
    o.reads(&p.operands);
    o
}

/// A read-only program whose operands are not paths.
pub(crate) fn plain_read_only(_inv: &Invocation<'_>) -> Outcome {
    Outcome::read_only()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for family in FAMILIES {
            for e in *family {
                for n in e.names {
                    assert!(seen.insert(*n), "duplicate knowledge entry {n}");
                }
            }
        }
    }

    #[test]
    fn option_parsing() {
        let ws: Vec<Word> = ["-rn", "-e", "pat", "--include=*.rs", "src", "-oFILE"]
            .iter()
            .map(|s| Word::literal(*s))
            .collect();
        let p = parse_args(&ws, &Opts::gnu("eo", &[]));
        assert_eq!(p.operands.len(), 1);
        assert_eq!(
            p.values(&["-e"]).next().map(|w| w.value.as_str()),
            Some("pat")
        );
        assert_eq!(
            p.values(&["-o"]).next().map(|w| w.value.as_str()),
            Some("FILE")
        );
    }
}
