//! Peeling of wrapper programs: `env`, `timeout`, `nice`, `sudo`, `xargs`, … run
//! another program given in their arguments. The policy must judge that program, so
//! each wrapper's own options are skipped and what the wrapper adds (privilege,
//! assignments, a lock file it creates, a string it runs as shell code) is recorded.

use crate::model::Word;

mod peelers;

/// What peeling found.
#[derive(Debug, Default)]
pub(crate) struct Peeled {
    /// Wrapper names, outermost first.
    pub wrappers: Vec<String>,
    /// Index of the real program in the argument list; `None` when a wrapper runs no
    /// program (`env` alone, `exec` with only redirections, `command -v x`).
    pub program: Option<usize>,
    /// Assignments given through `env NAME=val` or `sudo NAME=val`.
    pub assignments: Vec<(String, Word)>,
    /// Why privilege is gained.
    pub privilege: Option<String>,
    /// Which wrapper feeds arguments at run time.
    pub runtime_args: Option<String>,
    /// Strings run as shell code by a wrapper (`watch`, `su -c`, `env -S`, `flock -c`).
    pub shell_strings: Vec<(String, Word)>,
    /// Files a wrapper writes (`flock FILE`, `time -o FILE`, `sudo -e FILE`).
    pub writes: Vec<Word>,
    /// Files a wrapper reads (`xargs -a FILE`).
    pub reads: Vec<Word>,
    /// Directory the program runs in (`env -C DIR`).
    pub chdir: Option<Word>,
    /// The wrapper only looks a name up (`command -v`, `type`).
    pub lookup: bool,
    /// A wrapper bypasses shell functions and aliases (`command`, `builtin`, `exec`).
    pub bypass_functions: bool,
}

/// How a wrapper's options are shaped.
struct Spec {
    /// Short options that take a value.
    short_val: &'static str,
    /// Long options that take a value (without `=`).
    long_val: &'static [&'static str],
}

fn is_assignment(s: &str) -> Option<(&str, &str)> {
    let (name, value) = s.split_once('=')?;
    let valid = !name.is_empty()
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    valid.then_some((name, value))
}

/// Skip options of a wrapper starting at `i`; returns the index of the first operand.
/// `on_opt` sees each option with its value.
fn skip_options(
    args: &[Word],
    mut i: usize,
    spec: &Spec,
    mut on_opt: impl FnMut(&str, Option<&Word>),
) -> usize {
    while i < args.len() {
        let a = &args[i].value;
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            return i;
        }
        if let Some(long) = a.strip_prefix("--") {
            if let Some((name, value)) = long.split_once('=') {
                let w = Word {
                    value: value.to_owned(),
                    literal: args[i].literal,
                };
                on_opt(&format!("--{name}"), Some(&w));
                i += 1;
            } else if spec.long_val.contains(&long) {
                on_opt(a, args.get(i + 1));
                i += 2;
            } else {
                on_opt(a, None);
                i += 1;
            }
            continue;
        }
        // Short option cluster.
        let body = &a[1..];
        let mut consumed_next = false;
        for (pos, ch) in body.char_indices() {
            if spec.short_val.contains(ch) {
                let rest = &body[pos + ch.len_utf8()..];
                if rest.is_empty() {
                    on_opt(&format!("-{ch}"), args.get(i + 1));
                    consumed_next = true;
                } else {
                    let w = Word {
                        value: rest.to_owned(),
                        literal: args[i].literal,
                    };
                    on_opt(&format!("-{ch}"), Some(&w));
                }
                break;
            }
            on_opt(&format!("-{ch}"), None);
        }
        i += if consumed_next { 2 } else { 1 };
    }
    i
}

/// What peeling one wrapper leaves: the index of the word to look at next, or no
/// program of the words runs (the wrapper runs a shell string, only looks a name up,
/// lists, edits or starts an interactive shell).
enum Step {
    Next(usize),
    NoProgram,
}

/// Peels one wrapper named `name` at `args[i]`: records what it adds in the
/// [`Peeled`] and says where its program starts.
type Peeler = fn(&[Word], usize, &str, &mut Peeled) -> Step;

/// The wrappers peeled, each with its peeler. A program not here ends the peeling.
fn peeler(name: &str) -> Option<Peeler> {
    Some(match name {
        "env" => peelers::env,
        "timeout" => peelers::timeout,
        "time" => peelers::time,
        "nice" => peelers::nice,
        "ionice" => peelers::ionice,
        "nohup" | "setsid" | "chronic" | "catchsegv" => peelers::plain,
        "stdbuf" => peelers::stdbuf,
        "command" => peelers::command,
        "builtin" => peelers::builtin,
        "busybox" | "toybox" => peelers::multi_call,
        "exec" => peelers::exec,
        "xargs" => peelers::xargs,
        "flock" => peelers::flock,
        "watch" => peelers::watch,
        "sudo" | "doas" | "pkexec" => peelers::sudo,
        "su" | "runuser" => peelers::su,
        "chroot" => peelers::chroot,
        "unshare" | "nsenter" => peelers::unshare,
        _ => return None,
    })
}

/// Peel wrappers from decoded words (`args[0]` is the command name).
pub(crate) fn peel(args: &[Word]) -> Peeled {
    let mut p = Peeled::default();
    let mut i = 0;
    // Each step consumes at least one word, so this terminates.
    while i < args.len() {
        let name_word = &args[i];
        if !name_word.literal {
            break;
        }
        let Some(name) = standard_name(&name_word.value) else {
            break;
        };
        let Some(peel_one) = peeler(name) else {
            break;
        };
        match peel_one(args, i, name, &mut p) {
            Step::Next(next) if next < args.len() => i = next,
            Step::Next(_) | Step::NoProgram => {
                p.program = None;
                return p;
            }
        }
    }
    p.program = (i < args.len()).then_some(i);
    p
}

/// `xargs` given input the text shows: the command line it would run, as words
/// (`echo /x | xargs rm -rf` runs `rm -rf /x`). `None` when the input cannot be
/// fixed here: an argument file, an end-of-file string, more items than a command line
/// worth analyzing, or a `-I` template filled from more than one line.
pub(crate) fn xargs_expand(words: &[Word], input: &str) -> Option<Vec<Word>> {
    const MAX_ITEMS: usize = 256;
    let x = words
        .iter()
        .position(|w| w.literal && standard_name(&w.value) == Some("xargs"))?;
    let spec = Spec {
        short_val: "adEeIiLlnPs",
        long_val: &[
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
    };
    let mut replace: Option<String> = None;
    let mut delim: Option<char> = None;
    let mut unsupported = false;
    let j = skip_options(words, x + 1, &spec, |o, v| match o {
        "-I" | "--replace" => replace = Some(v.map_or("{}".into(), |w| w.value.clone())),
        "-i" => replace = Some(v.map_or("{}".into(), |w| w.value.clone())),
        "-0" | "--null" => delim = Some('\0'),
        "-d" | "--delimiter" => match v.map(|w| w.value.as_str()) {
            Some("\\n") => delim = Some('\n'),
            Some(d) if d.chars().count() == 1 => delim = d.chars().next(),
            _ => unsupported = true,
        },
        "-a" | "--arg-file" | "-E" | "-e" | "--eof" => unsupported = true,
        _ => {}
    });
    if unsupported || words[x + 1..j.min(words.len())].iter().any(|w| !w.literal) {
        return None;
    }
    let mut out: Vec<Word> = words[..j.min(words.len())].to_vec();
    let mut cmd: Vec<Word> = words.get(j..).unwrap_or(&[]).to_vec();
    if cmd.is_empty() {
        cmd.push(Word::literal("echo"));
    }
    if let Some(r) = replace {
        let lines: Vec<&str> = input.lines().filter(|l| !l.trim().is_empty()).collect();
        let [line] = lines.as_slice() else {
            return None;
        };
        let line = line.trim_start();
        for w in &mut cmd {
            w.value = w.value.replace(&r, line);
        }
        out.extend(cmd);
        return Some(out);
    }
    let items: Vec<String> = match delim {
        Some(d) => input
            .split(d)
            .filter(|i| !i.is_empty())
            .map(str::to_owned)
            .collect(),
        None => input
            .split_whitespace()
            .map(|t| {
                t.strip_prefix(['\'', '"'])
                    .and_then(|r| r.strip_suffix(['\'', '"']))
                    .unwrap_or(t)
                    .to_owned()
            })
            .collect(),
    };
    if items.len() > MAX_ITEMS {
        return None;
    }
    out.extend(cmd);
    out.extend(items.into_iter().map(Word::literal));
    Some(out)
}

/// The name a program is known by: the word itself when it has no `/`, the last
/// component when it lives in a system program directory, `None` for any other path
/// (`./script`, `tools/run`), which names a program the knowledge base cannot know.
pub(crate) fn standard_name(s: &str) -> Option<&str> {
    if !s.contains('/') {
        return Some(s);
    }
    const DIRS: [&str; 6] = [
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
    ];
    let (dir, name) = s.rsplit_once('/')?;
    let dir = format!("{dir}/");
    (DIRS.contains(&dir.as_str()) && !name.is_empty()).then_some(name)
}

/// Quote a word so that the shell reads it back unchanged.
pub(crate) fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_./=:,@%+".contains(&c))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}
