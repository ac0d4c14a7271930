//! Ordinary read-only commands: they must stay read-only with the right reads.

use super::*;

// ---------------------------------------------------------------------------------
// Ordinary read-only commands: must stay ReadOnly with the right reads.
// ---------------------------------------------------------------------------------
t!(
    ro_ls_grep,
    "ls src && grep -rn TODO src",
    [AllRO, R(&["src"]), N(2)]
);
t!(
    ro_git_log,
    "git log --oneline -5",
    [AllRO, Repo("git", RepoConfigUse::None)]
);
t!(
    ro_cat_head,
    "cat README.md | head",
    [AllRO, R(&["README.md"]), N(2)]
);
t!(
    ro_head_n,
    "head -n 5 f.txt",
    [AllRO, R(&["f.txt"]), Args("head", &["-n", "5", "f.txt"])]
);
t!(
    ro_tail,
    "tail -n 20 log/app.log",
    [AllRO, R(&["log/app.log"])]
);
t!(ro_wc, "wc -l src/main.rs", [AllRO, R(&["src/main.rs"])]);
t!(
    ro_grep_e,
    "grep -e pattern file1 file2",
    [AllRO, R(&["file1", "file2"])]
);
t!(
    ro_grep_pattern_not_read,
    "grep -n needle haystack.txt",
    [AllRO, R(&["haystack.txt"])]
);
t!(
    ro_grep_f,
    "grep -f patterns.txt data.txt",
    [AllRO, R(&["patterns.txt", "data.txt"])]
);
t!(ro_rg, "rg -n 'fn main' crates", [AllRO, R(&["crates"])]);
t!(ro_rg_default_dir, "rg TODO", [AllRO, R(&["."])]);
t!(
    ro_find_name,
    "find . -name '*.rs' -type f",
    [AllRO, R(&["."])]
);
t!(
    ro_find_print,
    "find src -maxdepth 2 -newer Cargo.toml -print",
    [AllRO, R(&["src"])]
);
t!(ro_fd, "fd -e rs main src", [AllRO, R(&["src"])]);
t!(ro_echo, "echo hello world", [AllRO, N(1)]);
t!(ro_printf, "printf '%s\\n' a b c", [AllRO]);
t!(
    ro_pwd_which,
    "pwd; which cargo; type ls; command -v git",
    [AllRO, N(4)]
);
t!(
    ro_stat_file,
    "stat Cargo.toml && file target/debug/cordon",
    [AllRO, R(&["Cargo.toml", "target/debug/cordon"])]
);
t!(
    ro_du_df,
    "du -sh target; df -h .",
    [AllRO, R(&["target", "."])]
);
t!(ro_tree, "tree -L 2 crates", [AllRO, R(&["crates"])]);
t!(
    ro_sort_uniq,
    "sort names.txt | uniq -c",
    [AllRO, R(&["names.txt"])]
);
t!(
    ro_cut_tr,
    "cut -d: -f1 data.csv | tr a-z A-Z",
    [AllRO, R(&["data.csv"])]
);
t!(
    ro_diff,
    "diff -u a.txt b.txt",
    [AllRO, R(&["a.txt", "b.txt"])]
);
t!(
    ro_cmp_comm,
    "cmp a b; comm -12 x y",
    [AllRO, R(&["a", "b", "x", "y"])]
);
t!(
    ro_jq,
    "jq '.name' package.json",
    [AllRO, R(&["package.json"])]
);
t!(
    ro_jq_args,
    "jq --arg v 1 '.a' in.json",
    [AllRO, R(&["in.json"])]
);
t!(
    ro_yq,
    "yq '.services' docker-compose.yml",
    [AllRO, R(&["docker-compose.yml"])]
);
t!(ro_basename, "basename /a/b.txt .txt; dirname /a/b", [AllRO]);
t!(
    ro_realpath,
    "realpath ../x && readlink -f link",
    [AllRO, R(&["../x", "link"])]
);
t!(
    ro_date_id,
    "date +%s; id; whoami; uname -a; hostname; nproc",
    [AllRO, N(6)]
);
t!(
    ro_sha,
    "sha256sum dist/app.tar.gz",
    [AllRO, R(&["dist/app.tar.gz"])]
);
t!(
    ro_xxd_od,
    "xxd bin.dat | head; od -c f",
    [AllRO, R(&["bin.dat", "f"])]
);
t!(ro_less, "less README.md", [AllRO, R(&["README.md"])]);
t!(
    ro_column_nl,
    "column -t table.txt; nl -ba f; tac f; rev f",
    [AllRO]
);
t!(ro_seq_sleep, "seq 1 10; sleep 1", [AllRO]);
t!(ro_ps, "ps aux | grep cargo", [AllRO]);
t!(
    ro_true_false_test,
    "true && false || test -f x && [ -d y ]",
    [AllRO, N(4)]
);
t!(
    ro_git_status,
    "git status --short",
    [
        C("git", Class::ReadOnly),
        Repo("git", RepoConfigUse::IfConfigured),
        NoX
    ]
);
t!(
    ro_git_diff_path,
    "git diff -- src/lib.rs",
    [
        C("git", Class::ReadOnly),
        R(&["src/lib.rs"]),
        Repo("git", RepoConfigUse::IfConfigured)
    ]
);
t!(
    ro_git_show,
    "git show HEAD~1 --stat",
    [
        C("git", Class::ReadOnly),
        Repo("git", RepoConfigUse::IfConfigured)
    ]
);
t!(
    ro_git_log_p,
    "git log -p -3",
    [
        C("git", Class::ReadOnly),
        Repo("git", RepoConfigUse::IfConfigured)
    ]
);
t!(ro_git_branch_list, "git branch -a", [AllRO]);
t!(
    ro_git_rev_parse,
    "git rev-parse --show-toplevel && git ls-files",
    [AllRO, N(2)]
);
t!(ro_git_remote_v, "git remote -v", [AllRO]);
t!(ro_git_tag_list, "git tag -l 'v*'", [AllRO]);
t!(ro_git_config_get, "git config --get user.email", [AllRO]);
t!(
    ro_git_describe,
    "git describe --tags && git shortlog -sn",
    [AllRO]
);
t!(
    ro_git_blame,
    "git blame src/main.rs",
    [C("git", Class::ReadOnly), R(&["src/main.rs"])]
);
t!(ro_env_print, "env", [C("env", Class::ReadOnly), N(1)]);
t!(
    ro_printenv,
    "printenv PATH",
    [C("printenv", Class::ReadOnly)]
);
t!(
    ro_cd_then_cat,
    "cd sub && cat x",
    [AllRO, Cwd("cat", "sub"), Cwd("cd", "")]
);
t!(
    ro_cd_twice,
    "cd a; cd b/c && ls",
    [AllRO, Cwd("ls", "a/b/c")]
);
t!(
    ro_cd_abs,
    "cd /etc && cat hosts",
    [AllRO, Cwd("cat", "/etc")]
);
t!(ro_cd_home, "cd && ls", [AllRO, Cwd("ls", "~")]);
t!(
    ro_cd_subshell_scoped,
    "(cd sub && ls) && pwd",
    [AllRO, Cwd("ls", "sub"), Cwd("pwd", "")]
);
t!(
    ro_builtins,
    "export FOO=1; local x; set -e; unset FOO; shift; read -r line; :",
    [C("export", Class::ReadOnly), C(":", Class::ReadOnly)]
);
t!(
    ro_for_loop,
    "for f in *.rs; do wc -l \"$f\"; done",
    [
        C("wc", Class::ReadOnly),
        Dy("ParameterExpansion(\"$f\")"),
        NoH
    ]
);
t!(
    ro_while_read,
    "while read -r l; do echo \"$l\"; done < list.txt",
    [
        Rd(RedirectKind::Read, "list.txt"),
        C("echo", Class::ReadOnly)
    ]
);
t!(
    ro_if,
    "if [ -f Cargo.toml ]; then cat Cargo.toml; else ls; fi",
    [AllRO, N(3)]
);
t!(
    ro_case,
    "case \"$1\" in a) echo a;; *) ls;; esac",
    [C("echo", Class::ReadOnly), C("ls", Class::ReadOnly)]
);
t!(
    ro_double_bracket,
    "[[ -n \"$x\" ]] && echo set",
    [AllRO, C("echo", Class::ReadOnly), N(2)]
);
t!(
    ro_arith,
    "(( i = 1 + 2 )) && echo ok",
    [AllRO, P("(("), N(2)]
);
t!(
    ro_awk_print,
    "awk '{print $1}' access.log",
    [AllRO, R(&["access.log"])]
);
t!(
    ro_sed_print,
    "sed -n '1,10p' file.txt",
    [AllRO, R(&["file.txt"])]
);
t!(
    ro_sed_subst_stdout,
    "sed 's/foo/bar/g' in.txt",
    [AllRO, R(&["in.txt"])]
);
t!(
    ro_cargo_metadata,
    "cargo metadata --format-version 1",
    [AllRO]
);
t!(
    ro_usr_bin_path,
    "/usr/bin/ls -la",
    [AllRO, P("/usr/bin/ls")]
);
t!(ro_python_version, "python3 --version", [AllRO]);
t!(ro_tar_list, "tar -tzf a.tgz", [AllRO, R(&["a.tgz"])]);
t!(ro_unzip_list, "unzip -l a.zip", [AllRO, R(&["a.zip"])]);
t!(ro_crontab_l, "crontab -l", [AllRO]);
t!(ro_systemctl_status, "systemctl --user status foo", [AllRO]);
t!(ro_docker_ps, "docker ps", [C("docker", Class::ReadOnly)]);
t!(ro_npm_ls, "npm ls --depth=0", [AllRO]);
t!(
    ro_gzip_c,
    "gzip -c data > data.gz",
    [
        C("gzip", Class::ReadOnly),
        R(&["data"]),
        Rd(RedirectKind::Write, "data.gz")
    ]
);
t!(ro_comment, "ls # rm -rf /", [AllRO, N(1)]);
t!(ro_newline_list, "ls\npwd\necho done", [AllRO, N(3)]);
