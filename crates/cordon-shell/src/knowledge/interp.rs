//! Programs whose purpose is to run code: shells (`bash -c`, scripts, stdin),
//! `eval`/`source`/`trap`, language interpreters (`python -c`, `perl -e`, `node -e`,
//! script files, stdin), editors that run commands (`vim -c`), and `man` with a
//! pager or browser.

use super::{Entry, Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &[
            "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash",
        ],
        classify: shell,
    },
    Entry {
        names: &["fish", "csh", "tcsh", "nu", "pwsh", "xonsh", "elvish"],
        classify: other_shell,
    },
    Entry {
        names: &["eval"],
        classify: eval,
    },
    Entry {
        names: &["source", "."],
        classify: source,
    },
    Entry {
        names: &["trap"],
        classify: trap,
    },
    Entry {
        names: &["python", "python2", "python3", "pypy", "pypy3"],
        classify: python,
    },
    Entry {
        names: &["perl"],
        classify: |i| interpreter(i, &LANG_PERL),
    },
    Entry {
        names: &["ruby", "irb"],
        classify: |i| interpreter(i, &LANG_RUBY),
    },
    Entry {
        names: &["node", "nodejs"],
        classify: |i| interpreter(i, &LANG_NODE),
    },
    Entry {
        names: &["php"],
        classify: |i| interpreter(i, &LANG_PHP),
    },
    Entry {
        names: &["lua", "luajit"],
        classify: |i| interpreter(i, &LANG_LUA),
    },
    Entry {
        names: &[
            "Rscript",
            "julia",
            "tclsh",
            "wish",
            "guile",
            "racket",
            "scala",
            "groovy",
            "kotlin",
            "elixir",
            "erl",
            "escript",
            "swift",
            "osascript",
            "awk-script",
        ],
        classify: generic_interpreter,
    },
    Entry {
        names: &["vim", "vi", "nvim", "view", "ex", "gvim"],
        classify: vim,
    },
    Entry {
        names: &["emacs", "emacsclient"],
        classify: emacs,
    },
    Entry {
        names: &["nano", "pico", "micro", "ed", "joe", "code", "subl"],
        classify: editor,
    },
    Entry {
        names: &["man"],
        classify: man,
    },
    Entry {
        names: &["parallel"],
        classify: parallel,
    },
    Entry {
        names: &["script"],
        classify: script,
    },
];

/// How an interpreter's command line is shaped.
struct Lang {
    /// Options whose value is code to run.
    code: &'static [&'static str],
    /// Options whose value is a module or file that is loaded and run.
    load: &'static [&'static str],
    /// Other options that take a value.
    value: &'static [&'static str],
    /// Options that only print information.
    info: &'static [&'static str],
}

const LANG_PERL: Lang = Lang {
    code: &["-e", "-E"],
    load: &["-M", "-m", "-I"],
    // `-i[EXT]`, `-0[OCTAL]`, `-l[OCTAL]`, `-x[DIR]`, `-C[N]`, `-d[:MOD]` and `-D[FLAGS]`
    // take their value attached, never as the next argument.
    value: &[],
    info: &["-v", "-V", "--version", "-h", "--help", "-c"],
};
const LANG_RUBY: Lang = Lang {
    code: &["-e"],
    load: &["-r", "--require", "-I"],
    value: &["-E", "--encoding", "-C", "-F", "-0", "-x", "-W"],
    info: &["-v", "--version", "-h", "--help", "-c", "-y"],
};
const LANG_NODE: Lang = Lang {
    code: &["-e", "--eval", "-p", "--print"],
    load: &[
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
    ],
    value: &[
        "--input-type",
        "--conditions",
        "-C",
        "--stack-size",
        "--title",
        "--env-file",
    ],
    info: &["-v", "--version", "-h", "--help", "-c", "--check"],
};
const LANG_PHP: Lang = Lang {
    code: &["-r", "-B", "-R", "-E", "-F"],
    load: &["-f", "-z", "-d", "-c"],
    value: &["-t", "-S"],
    info: &["-v", "--version", "-h", "--help", "-i", "-m", "-l", "--ini"],
};
const LANG_LUA: Lang = Lang {
    code: &["-e"],
    load: &["-l"],
    value: &[],
    info: &["-v"],
};
const LANG_PYTHON: Lang = Lang {
    code: &["-c"],
    load: &["-m"],
    value: &["-W", "-X", "-Q", "--check-hash-based-pycs"],
    info: &["-V", "--version", "-h", "--help", "-VV"],
};

/// Names with a version suffix (`python3.12`, `perl5.36`, `node20`).
pub(super) fn versioned(inv: &Invocation<'_>) -> Option<Outcome> {
    let name = inv.name;
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if base == name {
        return None;
    }
    let lang = match base {
        "python" | "pypy" => &LANG_PYTHON,
        "perl" => &LANG_PERL,
        "ruby" => &LANG_RUBY,
        "node" => &LANG_NODE,
        "php" => &LANG_PHP,
        "lua" => &LANG_LUA,
        _ => return None,
    };
    Some(interpreter(inv, lang))
}

fn python(inv: &Invocation<'_>) -> Outcome {
    interpreter(inv, &LANG_PYTHON)
}

/// Whether `a` is a perl or ruby cluster of switches holding one of `letters` before any
/// switch that takes the rest of the word as its value.
fn line_switch(name: &str, a: &str, letters: &[char]) -> bool {
    matches!(name, "perl" | "ruby")
        && a.starts_with('-')
        && !a.starts_with("--")
        && a[1..]
            .chars()
            .take_while(|c| !matches!(c, 'e' | 'E' | 'M' | 'm' | 'I' | 'r'))
            .any(|c| letters.contains(&c))
}

/// Shared interpreter logic: code options, loaded modules, a script operand, or code
/// from standard input.
fn interpreter(inv: &Invocation<'_>, lang: &Lang) -> Outcome {
    let args = inv.args;
    let mut o = Outcome::read_only();
    let mut i = 0;
    let mut ran = false;
    let mut info = false;
    let mut loops = false;
    let mut edits = false;
    while i < args.len() {
        let a = args[i].value.as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if a == "-" {
            break;
        }
        if !a.starts_with('-') {
            break;
        }
        // perl and ruby `-n`/`-p` loop over the files named after the code; `-i` edits
        // them in place.
        loops |= line_switch(inv.name, a, &['n', 'p']);
        edits |= line_switch(inv.name, a, &['i']);
        let (flag, attached) = split_opt(a, lang);
        let flag = flag.as_str();
        if lang.code.contains(&flag) {
            let literal = args[i].literal;
            let code = attached.map(str::to_owned).or_else(|| {
                i += 1;
                args.get(i).map(|w| w.value.clone())
            });
            let code = Word {
                value: code.unwrap_or_default(),
                literal: literal && args.get(i).is_none_or(|w| w.literal),
            };
            o.exec(inv.name, flag, &code.value);
            super::inline_code(&mut o, inv.name, &code);
            ran = true;
            // Python stops parsing at the code; other languages keep reading options
            // but everything left is arguments to the code.
            let rest = args.get(i + 1..).unwrap_or(&[]);
            let (_, operands): (Vec<&Word>, Vec<&Word>) = rest
                .iter()
                .partition(|w| w.value.starts_with('-') && w.value != "-");
            if loops {
                loops_over(&mut o, rest, edits);
            } else {
                o.mentions(operands);
            }
            break;
        }
        if lang.load.contains(&flag) {
            let target = attached.map(str::to_owned).or_else(|| {
                i += 1;
                args.get(i).map(|w| w.value.clone())
            });
            let target = target.unwrap_or_default();
            if flag == "-I" {
                // An include path only: nothing runs by itself.
            } else if flag == "-m" && std::ptr::eq(lang, &LANG_PYTHON) {
                o.exec(inv.name, "-m", &target);
                // What the module is given: often the files it opens.
                o.mentions(args.get(i + 1..).unwrap_or(&[]));
                if target == "dotenv" && !args.iter().any(|w| w.value == "-f") {
                    // python-dotenv's command line reads `.env` from the working directory.
                    o.reads([&Word::literal(".env")]);
                }
                ran = true;
                break;
            } else {
                o.exec(inv.name, flag, &target);
            }
            i += 1;
            continue;
        }
        if lang.info.contains(&a) {
            info = true;
        }
        if lang.value.contains(&flag) && attached.is_none() {
            i += 1;
        }
        i += 1;
    }
    if ran {
        return o;
    }
    match args.get(i) {
        Some(script) if script.value != "-" => {
            o.run_script(inv.name, script);
            // What the script is given: often the files it opens.
            o.mentions(args.get(i + 1..).unwrap_or(&[]));
        }
        _ if info => {}
        _ => {
            o.run_stdin_code();
        }
    }
    o
}

/// `perl -n`/`-p` (and ruby's): the operands after the code are files read line by
/// line, and edited in place with `-i`.
fn loops_over(o: &mut Outcome, rest: &[Word], edits: bool) {
    let files: Vec<&Word> = rest
        .iter()
        .skip_while(|w| w.value.starts_with('-') && w.value != "-" && w.value != "--")
        .filter(|w| w.value != "--")
        .collect();
    o.reads(files.iter().copied());
    if edits {
        o.writes(files.iter().copied());
    }
}

/// Split `-cCODE`/`--eval=CODE` into the option and its attached value. In a short
/// cluster (`perl -ne`, `python -uc`) the first letter that takes a value decides:
/// the rest of the cluster is its value, or the next argument when nothing is left.
fn split_opt<'a>(a: &'a str, lang: &Lang) -> (String, Option<&'a str>) {
    if let Some((name, value)) = a.split_once('=')
        && name.starts_with("--")
    {
        return (name.to_owned(), Some(value));
    }
    if a.starts_with("--") || a.chars().count() <= 2 {
        return (a.to_owned(), None);
    }
    for (pos, ch) in a.char_indices().skip(1) {
        let flag = format!("-{ch}");
        let f = flag.as_str();
        if lang.code.contains(&f) || lang.load.contains(&f) || lang.value.contains(&f) {
            let rest = a.get(pos + ch.len_utf8()..).unwrap_or("");
            return (flag, (!rest.is_empty()).then_some(rest));
        }
    }
    (a.to_owned(), None)
}

fn generic_interpreter(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    match inv.args.first() {
        Some(a) if a.value.starts_with('-') => {
            // `-e CODE` / `--eval CODE` and the like: the code is opaque, but the paths
            // its strings name are not.
            let code = inv
                .args
                .iter()
                .position(|w| matches!(w.value.as_str(), "-e" | "--eval" | "-c" | "-E"))
                .and_then(|k| inv.args.get(k + 1));
            match code {
                Some(c) => {
                    o.exec(inv.name, &a.value, &c.value);
                    super::inline_code(&mut o, inv.name, c);
                }
                None => o.exec(inv.name, &a.value, &super::join(inv.args)),
            }
            o.mentions(inv.args);
        }
        Some(script) => {
            o.run_script(inv.name, script);
            o.mentions(inv.args.get(1..).unwrap_or(&[]));
        }
        None => {
            o.run_stdin_code();
        }
    }
    o
}

/// POSIX-family shells: `-c STRING`, a script file, or commands from stdin.
fn shell(inv: &Invocation<'_>) -> Outcome {
    let args = inv.args;
    let mut o = Outcome::read_only();
    let mut command_mode = false;
    let mut stdin_mode = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].value.as_str();
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "rcfile" | "init-file" => {
                    let f = args.get(i + 1).map(|w| w.value.as_str()).unwrap_or("");
                    o.exec(inv.name, a, f);
                    i += 2;
                }
                "version" | "help" => return Outcome::read_only(),
                _ => i += 1,
            }
            continue;
        }
        if !(a.starts_with('-') || a.starts_with('+')) || a.len() < 2 {
            break;
        }
        let mut takes = 0;
        for ch in a[1..].chars() {
            match ch {
                'c' => command_mode = true,
                's' => stdin_mode = true,
                'o' | 'O' => takes += 1,
                _ => {}
            }
        }
        i += 1 + takes;
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if command_mode {
        match rest.first() {
            Some(code) => {
                o.shell_code
                    .push((format!("{} -c", inv.name), code.clone()));
            }
            None => o.effects.class = Class::Unknown,
        }
        return o;
    }
    match rest.first() {
        Some(script) if !stdin_mode => {
            if script.value == "/dev/stdin" {
                o.run_stdin_code();
            } else {
                o.run_script(inv.name, script);
            }
        }
        _ => {
            o.run_stdin_code();
        }
    }
    o
}

fn other_shell(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let code_flag = inv
        .args
        .iter()
        .position(|w| matches!(w.value.as_str(), "-c" | "--command" | "-Command"));
    match (code_flag, inv.args.first()) {
        (Some(k), _) => {
            let code = inv.args.get(k + 1).cloned().unwrap_or(Word::literal(""));
            o.exec(inv.name, "-c", &code.value);
            super::inline::shell_like_code(&mut o, &code);
        }
        (None, Some(script)) if !script.value.starts_with('-') => {
            o.run_script(inv.name, script);
        }
        _ => {
            o.run_stdin_code();
        }
    }
    o
}

fn eval(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    if inv.args.is_empty() {
        return o;
    }
    let mut code = Word::literal("");
    for (i, w) in inv.args.iter().enumerate() {
        if i > 0 {
            code.value.push(' ');
        }
        code.value.push_str(&w.value);
        code.literal &= w.literal;
    }
    o.shell_code.push(("eval".into(), code));
    o
}

fn source(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let Some(file) = inv.args.first() else {
        o.effects.class = Class::Unknown;
        return o;
    };
    if file.value == "/dev/stdin" || file.value == "-" {
        o.run_stdin_code();
        return o;
    }
    o.run_script(inv.name, file);
    o
}

fn trap(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let p = parse_args(inv.args, &Opts::gnu("", &[]));
    if p.has(&["-l", "-p"]) || p.operands.len() < 2 {
        return o;
    }
    if let Some(code) = p.operands.first()
        && code.value != "-"
        && !code.value.is_empty()
    {
        o.shell_code.push(("trap".into(), code.clone()));
    }
    o
}

fn vim(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("cSuTiwWsrq", &["cmd"]));
    let mut o = Outcome::mutating();
    for (name, value) in &p.opts {
        let v = value.as_ref().map(|w| w.value.as_str()).unwrap_or("");
        match name.as_str() {
            "-c" | "--cmd" | "-S" | "-u" | "-s" | "-w" | "-W" => o.exec(inv.name, name, v),
            _ => {}
        }
    }
    for w in &p.operands {
        if let Some(cmd) = w.value.strip_prefix('+')
            && !cmd.is_empty()
            && !cmd.bytes().all(|c| c.is_ascii_digit())
        {
            o.exec(inv.name, "+cmd", cmd);
        }
    }
    let files: Vec<Word> = p
        .operands
        .iter()
        .filter(|w| !w.value.starts_with('+'))
        .cloned()
        .collect();
    if inv.name == "view" || p.has(&["-R"]) {
        o.reads(&files);
    } else {
        o.reads(&files);
        o.writes(&files);
    }
    o
}

fn emacs(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::mutating();
    let mut files = Vec::new();
    let mut it = inv.args.iter();
    while let Some(w) = it.next() {
        let v = w.value.as_str();
        match v {
            "--eval" | "-l" | "--load" | "-f" | "--funcall" | "--script" | "-x" => {
                let code = it.next().map(|w| w.value.as_str()).unwrap_or("");
                o.exec(inv.name, v, code);
            }
            _ if v.starts_with("--eval=")
                || v.starts_with("--load=")
                || v.starts_with("--funcall=") =>
            {
                o.exec(inv.name, v, v);
            }
            _ if v.starts_with('-') || v.starts_with('+') => {}
            _ => files.push(w.clone()),
        }
    }
    o.reads(&files);
    o.writes(&files);
    o
}

fn editor(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &[]));
    let mut o = Outcome::mutating();
    let files: Vec<Word> = p
        .operands
        .iter()
        .filter(|w| !w.value.starts_with('+'))
        .cloned()
        .collect();
    o.reads(&files);
    o.writes(&files);
    if matches!(inv.name, "ed") {
        // `ed` reads commands (including `!cmd`) from standard input.
        o.stdin_code = true;
    }
    o
}

fn man(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "PMCLmSsRETpe",
            &[
                "pager",
                "html",
                "manpath",
                "config-file",
                "locale",
                "systems",
                "sections",
                "recode",
                "encoding",
                "troff-device",
                "preprocessor",
                "extension",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    for (name, value) in &p.opts {
        let v = value.as_ref().map(|w| w.value.as_str()).unwrap_or("");
        match (name.as_str(), value) {
            // The pager and the browser are command lines run through the shell.
            ("-P" | "--pager" | "--html", Some(cmd)) => o.code("man", name, cmd),
            (
                "-P" | "--pager" | "-H" | "--html" | "-p" | "--preprocessor" | "-T"
                | "--troff-device",
                _,
            ) => {
                o.exec("man", name, v);
            }
            _ => {}
        }
    }
    // `-H[BROWSER]` and `--html[=BROWSER]` take their value attached only; without
    // one, they start the default browser.
    for w in inv.args {
        if w.value == "--html" || w.value == "-H" {
            o.exec("man", &w.value, "starts a browser");
        } else if let Some(b) = w.value.strip_prefix("-H") {
            o.code(
                "man",
                "-H",
                &Word {
                    value: b.to_owned(),
                    literal: w.literal,
                },
            );
        }
    }
    for (name, value) in inv.assignments {
        match name.as_str() {
            "MANPAGER" | "PAGER" | "BROWSER" | "LESSOPEN" => {
                let cmd = value.value.trim_start_matches(['|', '-']);
                o.code(
                    "man",
                    name,
                    &Word {
                        value: cmd.to_owned(),
                        literal: value.literal,
                    },
                );
            }
            "MANROFFOPT" => o.exec("man", name, &value.value),
            _ => {}
        }
    }
    if p.has(&["-l", "--local-file"]) {
        o.reads(&p.operands);
    }
    o
}

/// util-linux `script [options] [FILE]`: records a shell session to FILE
/// (`typescript` by default); `-c CMD` runs CMD through the shell instead of an
/// interactive shell.
fn script(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "cEIOBTmo",
            &[
                "command",
                "echo",
                "log-in",
                "log-out",
                "log-io",
                "log-timing",
                "logging-format",
                "output-limit",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    let file = p
        .operands
        .first()
        .cloned()
        .unwrap_or_else(|| Word::literal("typescript"));
    o.writes([&file]);
    o.writes(p.values(&[
        "-I",
        "-O",
        "-B",
        "-T",
        "--log-in",
        "--log-out",
        "--log-io",
        "--log-timing",
    ]));
    match p.values(&["-c", "--command"]).next() {
        Some(cmd) => o.code("script", "-c", cmd),
        None => o.exec("script", "session", "starts an interactive shell"),
    }
    o
}

/// GNU `parallel [options] COMMAND ::: ARGS`: runs COMMAND once per argument; the
/// command is a shell command line (`{}` is replaced by each argument).
fn parallel(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts {
            short: "jSa",
            long: &[
                "jobs", "sshlogin", "arg-file", "joblog", "results", "tmpdir", "delay", "timeout",
                "retries", "colsep",
            ],
            posix: true,
        },
    );
    let mut o = Outcome::read_only();
    o.reads(p.values(&["-a", "--arg-file"]));
    o.writes(p.values(&["--joblog", "--results"]));
    if p.has(&["-S", "--sshlogin"]) {
        o.net_unknown();
    }
    let command: Vec<Word> = p
        .operands
        .iter()
        .take_while(|w| !w.value.starts_with(":::") && !w.value.starts_with("::::"))
        .cloned()
        .collect();
    if command.is_empty() {
        // The commands themselves come from standard input.
        o.exec(
            "parallel",
            "stdin",
            "runs command lines read from standard input",
        );
        return o;
    }
    o.exec("parallel", "command", &super::join(&command));
    o.exec_argv.push(("parallel".into(), command));
    o
}
