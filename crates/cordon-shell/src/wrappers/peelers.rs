//! One peeler per wrapper program: its options (those that take a value), what it
//! adds to the command (privilege, assignments, files, shell strings) and where the
//! program it runs starts.

use super::{Peeled, Spec, Step, is_assignment, shell_quote, skip_options};
use crate::model::Word;

/// A wrapper without options of its own that take a value.
const NO_VALUES: Spec = Spec {
    short_val: "",
    long_val: &[],
};

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… PROG`: assignments, a
/// directory to run in, and a string split into the command line.
pub(super) fn env(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "uCSa",
        long_val: &["unset", "chdir", "split-string", "argv0"],
    };
    let mut chdir = None;
    let mut split = None;
    let mut j = skip_options(args, i + 1, &SPEC, |o, v| match o {
        "-C" | "--chdir" => chdir = v.cloned(),
        "-S" | "--split-string" => split = v.cloned(),
        _ => {}
    });
    // `env -` is the old spelling of `env -i`.
    if args.get(j).is_some_and(|w| w.value == "-") {
        j += 1;
    }
    while let Some(w) = args.get(j) {
        let Some((n, v)) = is_assignment(&w.value) else {
            break;
        };
        p.assignments.push((
            n.to_owned(),
            Word {
                value: v.to_owned(),
                literal: w.literal,
            },
        ));
        j += 1;
    }
    if chdir.is_some() {
        p.chdir = chdir;
    }
    p.wrappers.push("env".into());
    let Some(mut code) = split else {
        return Step::Next(j);
    };
    // `env -S 'prog args'`: the string is split into words and run.
    // A value-taking option last (`env -S CMD --chdir`) leaves `j` past the end.
    for rest in args.get(j..).unwrap_or_default() {
        code.value.push(' ');
        code.value.push_str(&shell_quote(&rest.value));
        code.literal &= rest.literal;
    }
    p.shell_strings.push(("env -S".into(), code));
    Step::NoProgram
}

/// `timeout [OPTION]… DURATION PROG`.
pub(super) fn timeout(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "sk",
        long_val: &["signal", "kill-after"],
    };
    let j = skip_options(args, i + 1, &SPEC, |_, _| {});
    p.wrappers.push("timeout".into());
    Step::Next(j + 1) // the duration
}

/// `time [-o FILE] PROG`: writes its report to FILE.
pub(super) fn time(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "fo",
        long_val: &["format", "output"],
    };
    let mut out = None;
    let j = skip_options(args, i + 1, &SPEC, |o, v| {
        if o == "-o" || o == "--output" {
            out = v.cloned();
        }
    });
    p.writes.extend(out);
    p.wrappers.push("time".into());
    Step::Next(j)
}

/// `nice [-n N] PROG`.
pub(super) fn nice(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "n",
        long_val: &["adjustment"],
    };
    let j = skip_options(args, i + 1, &SPEC, |_, _| {});
    p.wrappers.push("nice".into());
    Step::Next(j)
}

/// `ionice [-c CLASS] PROG`; with `-p`/`-P`/`-u` it changes running processes and
/// runs no program.
pub(super) fn ionice(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "cnpPu",
        long_val: &["class", "classdata", "pid", "pgid", "uid"],
    };
    let mut pid = false;
    let j = skip_options(args, i + 1, &SPEC, |o, _| {
        pid |= matches!(o, "-p" | "-P" | "-u" | "--pid" | "--pgid" | "--uid");
    });
    p.wrappers.push("ionice".into());
    if pid {
        return Step::NoProgram;
    }
    Step::Next(j)
}

/// `nohup`, `setsid`, `chronic`, `catchsegv`: options without values, then the program.
pub(super) fn plain(args: &[Word], i: usize, name: &str, p: &mut Peeled) -> Step {
    let j = skip_options(args, i + 1, &NO_VALUES, |_, _| {});
    p.wrappers.push(name.into());
    Step::Next(j)
}

/// `stdbuf -oL PROG`.
pub(super) fn stdbuf(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "ioe",
        long_val: &["input", "output", "error"],
    };
    let j = skip_options(args, i + 1, &SPEC, |_, _| {});
    p.wrappers.push("stdbuf".into());
    Step::Next(j)
}

/// `command PROG` bypasses functions; `command -v NAME` only looks the name up.
pub(super) fn command(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    let mut lookup = false;
    let j = skip_options(args, i + 1, &NO_VALUES, |o, _| {
        lookup |= o == "-v" || o == "-V";
    });
    p.wrappers.push("command".into());
    p.bypass_functions = true;
    if lookup {
        p.lookup = true;
        return Step::NoProgram;
    }
    Step::Next(j)
}

/// `builtin NAME`: the builtin, never a function of that name.
pub(super) fn builtin(_: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    p.wrappers.push("builtin".into());
    p.bypass_functions = true;
    Step::Next(i + 1)
}

/// A multi-call binary: `busybox wget …` runs its `wget`; `busybox --list` runs none.
pub(super) fn multi_call(args: &[Word], i: usize, name: &str, p: &mut Peeled) -> Step {
    p.wrappers.push(name.into());
    match args.get(i + 1) {
        Some(a) if !a.value.starts_with('-') => Step::Next(i + 1),
        _ => Step::NoProgram,
    }
}

/// `exec [-a NAME] PROG`: replaces the shell, bypassing functions.
pub(super) fn exec(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "a",
        long_val: &[],
    };
    let j = skip_options(args, i + 1, &SPEC, |_, _| {});
    p.wrappers.push("exec".into());
    p.bypass_functions = true;
    Step::Next(j)
}

/// `xargs [-a FILE] PROG ARGS`: the program's further arguments come at run time;
/// with no program it runs `echo`.
pub(super) fn xargs(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
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
    let j = skip_options(args, i + 1, &SPEC, |o, v| {
        if o == "-a" || o == "--arg-file" {
            files.extend(v.cloned());
        }
    });
    p.reads.extend(files);
    p.wrappers.push("xargs".into());
    p.runtime_args = Some("xargs".into());
    if j >= args.len() {
        // xargs runs `echo` by default.
        return Step::NoProgram;
    }
    Step::Next(j)
}

/// `flock FILE PROG` creates FILE (a number is a file descriptor); `flock FILE -c
/// CMD` runs CMD as shell code.
pub(super) fn flock(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "wEc",
        long_val: &["timeout", "wait", "conflict-exit-code", "command"],
    };
    let mut code = None;
    let j = skip_options(args, i + 1, &SPEC, |o, v| {
        if o == "-c" || o == "--command" {
            code = v.cloned();
        }
    });
    p.wrappers.push("flock".into());
    let Some(file) = args.get(j) else {
        return Step::NoProgram;
    };
    if !file.value.bytes().all(|c| c.is_ascii_digit()) {
        p.writes.push(file.clone());
    }
    // `flock FILE -c CMD` puts the option after the file.
    let k = skip_options(args, j + 1, &SPEC, |o, v| {
        if o == "-c" || o == "--command" {
            code = v.cloned();
        }
    });
    if let Some(c) = code {
        p.shell_strings.push(("flock -c".into(), c));
        return Step::NoProgram;
    }
    Step::Next(k)
}

/// `watch CMD…` runs its words joined as shell code; `watch -x PROG` runs PROG.
pub(super) fn watch(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "nqd",
        long_val: &["interval", "equexit", "chgexit"],
    };
    let mut exec = false;
    let j = skip_options(args, i + 1, &SPEC, |o, _| {
        exec |= o == "-x" || o == "--exec";
    });
    p.wrappers.push("watch".into());
    if exec {
        return Step::Next(j);
    }
    let mut code = Word::literal("");
    for (n, w) in args[j.min(args.len())..].iter().enumerate() {
        if n > 0 {
            code.value.push(' ');
        }
        code.value.push_str(&w.value);
        code.literal &= w.literal;
    }
    p.shell_strings.push(("watch".into(), code));
    Step::NoProgram
}

/// `sudo`, `doas`, `pkexec`: privilege, assignments after the options; `sudo -e FILE…`
/// writes the files, `sudo -l`/`-v`/`-k` run nothing.
pub(super) fn sudo(args: &[Word], i: usize, name: &str, p: &mut Peeled) -> Step {
    const SUDO: Spec = Spec {
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
    };
    const DOAS: Spec = Spec {
        short_val: "uC",
        long_val: &[],
    };
    const PKEXEC: Spec = Spec {
        short_val: "",
        long_val: &["user"],
    };
    let spec = match name {
        "sudo" => &SUDO,
        "doas" => &DOAS,
        _ => &PKEXEC,
    };
    let mut edit = false;
    let mut list = false;
    let mut j = skip_options(args, i + 1, spec, |o, _| {
        edit |= o == "-e" || o == "--edit";
        list |= matches!(o, "-l" | "--list" | "-v" | "--validate" | "-k" | "-K");
    });
    p.wrappers.push(name.into());
    p.privilege.get_or_insert_with(|| name.to_owned());
    while let Some((n, v)) = args.get(j).and_then(|w| is_assignment(&w.value)) {
        p.assignments.push((n.to_owned(), Word::literal(v)));
        j += 1;
    }
    if edit {
        p.writes.extend(args[j.min(args.len())..].iter().cloned());
        return Step::NoProgram;
    }
    if list || j >= args.len() {
        return Step::NoProgram;
    }
    Step::Next(j)
}

/// `su -c CMD` runs CMD as shell code; `runuser -u USER PROG` runs PROG; otherwise an
/// interactive shell as another user.
pub(super) fn su(args: &[Word], i: usize, name: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
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
    let j = skip_options(args, i + 1, &SPEC, |o, v| match o {
        "-c" | "--command" | "--session-command" => code = v.cloned(),
        "-u" | "--user" => user_opt = true,
        _ => {}
    });
    p.wrappers.push(name.into());
    p.privilege.get_or_insert_with(|| name.to_owned());
    if let Some(c) = code {
        p.shell_strings.push((format!("{name} -c"), c));
        return Step::NoProgram;
    }
    if name == "runuser" && user_opt && j < args.len() {
        Step::Next(j)
    } else {
        // `su [user]`: an interactive shell as another user.
        Step::NoProgram
    }
}

/// `chroot DIR PROG`: privilege; with no program, an interactive shell.
pub(super) fn chroot(args: &[Word], i: usize, _: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
        short_val: "",
        long_val: &["userspec", "groups"],
    };
    let j = skip_options(args, i + 1, &SPEC, |_, _| {});
    p.wrappers.push("chroot".into());
    p.privilege.get_or_insert_with(|| "chroot".to_owned());
    if j + 1 >= args.len() {
        return Step::NoProgram;
    }
    Step::Next(j + 1)
}

/// `unshare`, `nsenter`: privilege; with no program, an interactive shell.
pub(super) fn unshare(args: &[Word], i: usize, name: &str, p: &mut Peeled) -> Step {
    const SPEC: Spec = Spec {
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
    let j = skip_options(args, i + 1, &SPEC, |_, _| {});
    p.wrappers.push(name.into());
    p.privilege.get_or_insert_with(|| name.to_owned());
    if j >= args.len() {
        return Step::NoProgram;
    }
    Step::Next(j)
}
