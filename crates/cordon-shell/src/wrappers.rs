//! Peeling of wrapper programs: `env`, `timeout`, `nice`, `sudo`, `xargs`, … run
//! another program given in their arguments. The policy must judge that program, so
//! each wrapper's own options are skipped and what the wrapper adds (privilege,
//! assignments, a lock file it creates, a string it runs as shell code) is recorded.

use crate::model::Word;

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

/// Peel wrappers from decoded words (`args[0]` is the command name).
pub(crate) fn peel(args: &[Word]) -> Peeled {
    let mut p = Peeled::default();
    let mut i = 0;
    // Each iteration consumes at least one word, so this terminates.
    while i < args.len() {
        let name_word = &args[i];
        if !name_word.literal {
            break;
        }
        let Some(name) = standard_name(&name_word.value) else {
            break;
        };
        let next = match name {
            "env" => {
                let mut chdir = None;
                let mut split = None;
                let spec = Spec {
                    short_val: "uCSa",
                    long_val: &["unset", "chdir", "split-string", "argv0"],
                };
                let mut j = skip_options(args, i + 1, &spec, |o, v| match o {
                    "-C" | "--chdir" => chdir = v.cloned(),
                    "-S" | "--split-string" => split = v.cloned(),
                    _ => {}
                });
                // `env -` is the old spelling of `env -i`.
                if args.get(j).is_some_and(|w| w.value == "-") {
                    j += 1;
                }
                while let Some(w) = args.get(j) {
                    match is_assignment(&w.value) {
                        Some((n, v)) => {
                            p.assignments.push((
                                n.to_owned(),
                                Word {
                                    value: v.to_owned(),
                                    literal: w.literal,
                                },
                            ));
                            j += 1;
                        }
                        None => break,
                    }
                }
                if chdir.is_some() {
                    p.chdir = chdir;
                }
                p.wrappers.push("env".into());
                if let Some(s) = split {
                    // `env -S 'prog args'`: the string is split into words and run.
                    let mut code = s.clone();
                    for rest in &args[j..] {
                        code.value.push(' ');
                        code.value.push_str(&shell_quote(&rest.value));
                        code.literal &= rest.literal;
                    }
                    p.shell_strings.push(("env -S".into(), code));
                    p.program = None;
                    return p;
                }
                j
            }
            "timeout" => {
                let spec = Spec {
                    short_val: "sk",
                    long_val: &["signal", "kill-after"],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push("timeout".into());
                j + 1 // the duration
            }
            "time" => {
                let spec = Spec {
                    short_val: "fo",
                    long_val: &["format", "output"],
                };
                let mut out = None;
                let j = skip_options(args, i + 1, &spec, |o, v| {
                    if o == "-o" || o == "--output" {
                        out = v.cloned();
                    }
                });
                p.writes.extend(out);
                p.wrappers.push("time".into());
                j
            }
            "nice" => {
                let spec = Spec {
                    short_val: "n",
                    long_val: &["adjustment"],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push("nice".into());
                j
            }
            "ionice" => {
                let spec = Spec {
                    short_val: "cnpPu",
                    long_val: &["class", "classdata", "pid", "pgid", "uid"],
                };
                let mut pid = false;
                let j = skip_options(args, i + 1, &spec, |o, _| {
                    pid |= matches!(o, "-p" | "-P" | "-u" | "--pid" | "--pgid" | "--uid");
                });
                p.wrappers.push("ionice".into());
                if pid {
                    p.program = None;
                    return p;
                }
                j
            }
            "nohup" | "setsid" | "chronic" | "catchsegv" => {
                let spec = Spec {
                    short_val: "",
                    long_val: &[],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push(name.into());
                j
            }
            "stdbuf" => {
                let spec = Spec {
                    short_val: "ioe",
                    long_val: &["input", "output", "error"],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push("stdbuf".into());
                j
            }
            "command" => {
                let spec = Spec {
                    short_val: "",
                    long_val: &[],
                };
                let mut lookup = false;
                let j = skip_options(args, i + 1, &spec, |o, _| {
                    lookup |= o == "-v" || o == "-V";
                });
                p.wrappers.push("command".into());
                p.bypass_functions = true;
                if lookup {
                    p.lookup = true;
                    p.program = None;
                    return p;
                }
                j
            }
            "builtin" => {
                p.wrappers.push("builtin".into());
                p.bypass_functions = true;
                i + 1
            }
            // A multi-call binary: `busybox wget …` runs its `wget`.
            "busybox" | "toybox" => {
                p.wrappers.push(name.into());
                match args.get(i + 1) {
                    Some(a) if !a.value.starts_with('-') => i + 1,
                    _ => {
                        p.program = None;
                        return p;
                    }
                }
            }
            "exec" => {
                let spec = Spec {
                    short_val: "a",
                    long_val: &[],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push("exec".into());
                p.bypass_functions = true;
                j
            }
            "xargs" => {
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
                let mut files = Vec::new();
                let j = skip_options(args, i + 1, &spec, |o, v| {
                    if o == "-a" || o == "--arg-file" {
                        files.extend(v.cloned());
                    }
                });
                p.reads.extend(files);
                p.wrappers.push("xargs".into());
                p.runtime_args = Some("xargs".into());
                if j >= args.len() {
                    // xargs runs `echo` by default.
                    p.program = None;
                    return p;
                }
                j
            }
            "flock" => {
                let spec = Spec {
                    short_val: "wEc",
                    long_val: &["timeout", "wait", "conflict-exit-code", "command"],
                };
                let mut code = None;
                let j = skip_options(args, i + 1, &spec, |o, v| {
                    if o == "-c" || o == "--command" {
                        code = v.cloned();
                    }
                });
                p.wrappers.push("flock".into());
                let Some(file) = args.get(j) else {
                    p.program = None;
                    return p;
                };
                if !file.value.bytes().all(|c| c.is_ascii_digit()) {
                    p.writes.push(file.clone());
                }
                // `flock FILE -c CMD` puts the option after the file.
                let k = skip_options(args, j + 1, &spec, |o, v| {
                    if o == "-c" || o == "--command" {
                        code = v.cloned();
                    }
                });
                if let Some(c) = code {
                    p.shell_strings.push(("flock -c".into(), c));
                    p.program = None;
                    return p;
                }
                k
            }
            "watch" => {
                let spec = Spec {
                    short_val: "nqd",
                    long_val: &["interval", "equexit", "chgexit"],
                };
                let mut exec = false;
                let j = skip_options(args, i + 1, &spec, |o, _| {
                    exec |= o == "-x" || o == "--exec";
                });
                p.wrappers.push("watch".into());
                if !exec {
                    let mut code = Word::literal("");
                    for (n, w) in args[j.min(args.len())..].iter().enumerate() {
                        if n > 0 {
                            code.value.push(' ');
                        }
                        code.value.push_str(&w.value);
                        code.literal &= w.literal;
                    }
                    p.shell_strings.push(("watch".into(), code));
                    p.program = None;
                    return p;
                }
                j
            }
            "sudo" | "doas" | "pkexec" => {
                let spec = match name {
                    "sudo" => Spec {
                        short_val: "uUgCDhprtT",
                        long_val: &[
                            "user",
                            "other-user",
                            "group",
                            "close-from",
                            "chdir",
                            "host",
                            "prompt",
                            "role",
                            "type",
                            "command-timeout",
                        ],
                    },
                    "doas" => Spec {
                        short_val: "uC",
                        long_val: &[],
                    },
                    _ => Spec {
                        short_val: "",
                        long_val: &["user"],
                    },
                };
                let mut edit = false;
                let mut list = false;
                let j = skip_options(args, i + 1, &spec, |o, _| {
                    edit |= o == "-e" || o == "--edit";
                    list |= matches!(o, "-l" | "--list" | "-v" | "--validate" | "-k" | "-K");
                });
                p.wrappers.push(name.into());
                p.privilege.get_or_insert_with(|| name.to_owned());
                let mut j = j;
                while let Some((n, v)) = args.get(j).and_then(|w| is_assignment(&w.value)) {
                    p.assignments.push((n.to_owned(), Word::literal(v)));
                    j += 1;
                }
                if edit {
                    p.writes.extend(args[j.min(args.len())..].iter().cloned());
                    p.program = None;
                    return p;
                }
                if list || j >= args.len() {
                    p.program = None;
                    return p;
                }
                j
            }
            "su" | "runuser" => {
                let spec = Spec {
                    short_val: "cgGsuw",
                    long_val: &[
                        "command",
                        "group",
                        "supp-group",
                        "shell",
                        "user",
                        "whitelist-environment",
                        "session-command",
                    ],
                };
                let mut code = None;
                let mut user_opt = false;
                let j = skip_options(args, i + 1, &spec, |o, v| match o {
                    "-c" | "--command" | "--session-command" => code = v.cloned(),
                    "-u" | "--user" => user_opt = true,
                    _ => {}
                });
                p.wrappers.push(name.into());
                p.privilege.get_or_insert_with(|| name.to_owned());
                if let Some(c) = code {
                    p.shell_strings.push((format!("{name} -c"), c));
                    p.program = None;
                    return p;
                }
                if name == "runuser" && user_opt && j < args.len() {
                    j
                } else {
                    // `su [user]`: an interactive shell as another user.
                    p.program = None;
                    return p;
                }
            }
            "chroot" => {
                let spec = Spec {
                    short_val: "",
                    long_val: &["userspec", "groups"],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push("chroot".into());
                p.privilege.get_or_insert_with(|| "chroot".to_owned());
                if j + 1 >= args.len() {
                    p.program = None;
                    return p;
                }
                j + 1
            }
            "unshare" | "nsenter" => {
                let spec = Spec {
                    short_val: "tSGwr",
                    long_val: &[
                        "target",
                        "setuid",
                        "setgid",
                        "wd",
                        "root",
                        "propagation",
                        "setgroups",
                        "map-user",
                        "map-group",
                    ],
                };
                let j = skip_options(args, i + 1, &spec, |_, _| {});
                p.wrappers.push(name.into());
                p.privilege.get_or_insert_with(|| name.to_owned());
                if j >= args.len() {
                    p.program = None;
                    return p;
                }
                j
            }
            _ => break,
        };
        if next >= args.len() {
            p.program = None;
            return p;
        }
        i = next;
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
