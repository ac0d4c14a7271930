//! Whether a post-tool event reports a contained run this hook made: the whole command
//! is one `cordon exec` line of this hook's shape (parsed, every word literal, nothing
//! before or after it), for the call's own session. Such a run recorded what it landed
//! in the session itself (`cordon exec --session`); read as a shell call, the line
//! would be an unknown program whose writes cannot be read.

use crate::rewrite::ExecLine;
use std::path::Path;

/// Does `command` run exactly `cordon exec` of `line`, in `workspace`, for `session`?
pub(crate) fn recorded_by_exec(
    line: &ExecLine,
    workspace: &Path,
    session: &str,
    command: &str,
) -> bool {
    let a = cordon_shell::analyze(command);
    let [c] = a.commands.as_slice() else {
        return false;
    };
    let plain = a.parse_error.is_none()
        && a.hazards.is_empty()
        && c.context == cordon_shell::Context::TopLevel
        && c.wrappers.is_empty()
        && c.assignments.is_empty()
        && c.redirects.is_empty()
        && c.dynamic.is_empty()
        && !c.function_call
        && c.args.iter().all(|w| w.literal);
    let Some(program) = c.program.as_ref().filter(|p| p.literal) else {
        return false;
    };
    if !plain || Path::new(&program.value) != line.program {
        return false;
    }
    let args: Vec<&str> = c.args.iter().map(|w| w.value.as_str()).collect();
    let Some(rest) = args.strip_prefix(&["exec"]) else {
        return false;
    };
    let flags: Vec<&str> = line.flags.iter().map(String::as_str).collect();
    let Some(rest) = rest.strip_prefix(flags.as_slice()) else {
        return false;
    };
    let ws = workspace.to_string_lossy();
    let Some(rest) = rest.strip_prefix(&["--workspace", ws.as_ref()]) else {
        return false;
    };
    let Some(mut rest) = rest.strip_prefix(&["--session", session]) else {
        return false;
    };
    if let ["--operation-id", _, more @ ..] = rest {
        rest = more;
    }
    match rest {
        ["--bash", "--shell" | "--shell-file", _] => true,
        ["--bash", last] => last.starts_with("--shell=") || last.starts_with("--shell-file="),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn line() -> ExecLine {
        ExecLine {
            program: PathBuf::from("/usr/bin/cordon"),
            flags: vec!["--no-audit".into()],
            shell_dir: PathBuf::from("/tmp/x"),
        }
    }

    #[test]
    fn only_a_whole_exec_line_of_the_session_counts() {
        let ws = Path::new("/w");
        let made = "'/usr/bin/cordon' exec '--no-audit' --workspace '/w' --session 's1' --operation-id 'op' --bash --shell 'python3 gen.py'";
        assert!(recorded_by_exec(&line(), ws, "s1", made));
        assert!(recorded_by_exec(
            &line(),
            ws,
            "s1",
            "'/usr/bin/cordon' exec '--no-audit' --workspace '/w' --session 's1' --bash '--shell=make'"
        ));
        // Another session, workspace, program or flags: the agent's own command.
        assert!(!recorded_by_exec(&line(), ws, "s2", made));
        assert!(!recorded_by_exec(&line(), Path::new("/v"), "s1", made));
        assert!(!recorded_by_exec(
            &line(),
            ws,
            "s1",
            &made.replace("/usr/bin/cordon", "/tmp/cordon")
        ));
        assert!(!recorded_by_exec(
            &line(),
            ws,
            "s1",
            &made.replace("'--no-audit' ", "")
        ));
        // A line that only starts like one.
        for extra in [
            "; python3 evil.py",
            " && python3 evil.py",
            " > Makefile",
            " | sh",
            " extra",
            "\npython3 evil.py",
        ] {
            let cmd = format!("{made}{extra}");
            assert!(!recorded_by_exec(&line(), ws, "s1", &cmd), "{cmd}");
        }
        for before in ["X=1 ", "env ", "python3 evil.py; ", "$(python3 evil.py) "] {
            let cmd = format!("{before}{made}");
            assert!(!recorded_by_exec(&line(), ws, "s1", &cmd), "{cmd}");
        }
        // No session on the line: exec recorded nothing.
        assert!(!recorded_by_exec(
            &line(),
            ws,
            "s1",
            "'/usr/bin/cordon' exec '--no-audit' --workspace '/w' --bash --shell 'make'"
        ));
    }
}
