//! Arguments that execute code or write and delete paths; repository-controlled execution.

use super::*;

// ---------------------------------------------------------------------------------
// Arguments that execute other code.
// ---------------------------------------------------------------------------------
t!(
    x_find_exec,
    "find . -name '*.tmp' -exec rm {} +",
    [
        X("find", "-exec"),
        Ctx("rm", Context::ExecArgument),
        Dy("ParameterExpansion")
    ]
);
t!(
    x_find_execdir,
    "find . -execdir sh -c 'echo hi' \\;",
    [X("find", "-execdir")]
);
t!(x_find_ok, "find . -ok rm {} \\;", [X("find", "-ok")]);
t!(
    x_find_okdir,
    "find . -okdir rm {} \\;",
    [X("find", "-okdir")]
);
t!(
    x_find_delete,
    "find /tmp/cache -delete",
    [D(&["/tmp/cache/*"])]
);
t!(x_find_fprint, "find . -fprint list.txt", [W(&["list.txt"])]);
t!(x_find_fls, "find . -fls out.txt", [W(&["out.txt"])]);
t!(x_fd_x, "fd -e rs -x rustfmt", [X("fd", "-x"), P("rustfmt")]);
t!(
    x_fd_exec_batch,
    "fd . --exec-batch rm",
    [X("fd", "--exec-batch")]
);
t!(
    x_rg_pre,
    "rg --pre ./decode.sh pattern",
    [Sh("./decode.sh")]
);
t!(x_rg_pre_eq, "rg --pre=cat x", [Sh("cat")]);
t!(x_rg_hostname_bin, "rg --hostname-bin ./h x", [Sh("./h")]);
t!(
    x_rg_z_ok,
    "rg -z pattern logs",
    [C("rg", Class::ReadOnly), NoX]
);
t!(
    x_git_c,
    "git -c core.fsmonitor=./evil status",
    [Sh("./evil")]
);
t!(
    x_git_config_env,
    "git --config-env=core.pager=EVIL log",
    [X("git", "--config-env")]
);
t!(
    x_git_paginate,
    "git --paginate log",
    [X("git", "--paginate")]
);
t!(x_git_p, "git -p status", [X("git", "-p")]);
t!(
    x_git_upload_pack,
    "git clone --upload-pack='touch /tmp/p' repo",
    [Sh("touch"), W(&["/tmp/p"])]
);
t!(
    x_git_u,
    "git clone -u 'sh -c id' https://h.example/r",
    [Sh("id")]
);
t!(
    x_git_receive_pack,
    "git push --receive-pack=evil origin",
    [Sh("evil")]
);
t!(x_git_exec, "git push --exec=evil origin", [Sh("evil")]);
t!(
    x_git_ext_diff,
    "git diff --ext-diff",
    [X("git", "--ext-diff")]
);
t!(
    x_git_textconv,
    "git log -p --textconv",
    [X("git", "--textconv")]
);
t!(
    x_git_exec_path,
    "git --exec-path=/tmp/x status",
    [X("git", "--exec-path")]
);
t!(x_sed_e_cmd, "sed '1e id' f", [Sh("id")]);
t!(x_sed_s_e, "sed 's/.*/id/e' f", [X("sed", "s///e")]);
t!(x_sed_w, "sed -n '/secret/w leak.txt' f", [W(&["leak.txt"])]);
t!(x_sed_s_w, "sed 's/a/b/w out.txt' f", [W(&["out.txt"])]);
t!(x_sed_r, "sed '1r /etc/shadow' f", [R(&["/etc/shadow"])]);
t!(
    x_sed_i,
    "sed -i 's/a/b/' src/lib.rs",
    [W(&["src/lib.rs"]), C("sed", Class::Mutating)]
);
t!(x_sed_i_suffix, "sed -i.bak 's/a/b/' f.txt", [W(&["f.txt"])]);
t!(
    x_sed_expression,
    "sed -e 's/a/b/' -e '$e whoami' f",
    [Sh("whoami")]
);
t!(x_awk_system, "awk 'BEGIN{system(\"id\")}'", [Sh("id")]);
t!(x_awk_pipe, "awk '{print | \"sh\"}' f", [Sh("sh")]);
t!(
    x_awk_getline,
    "awk 'BEGIN{\"id\" | getline x; print x}'",
    [Sh("id")]
);
t!(
    x_awk_print_file,
    "awk '{print > \"out.txt\"}' f",
    [W(&["out.txt"])]
);
t!(
    x_gawk_system,
    "gawk 'BEGIN{system(\"rm x\")}'",
    [Sh("rm"), D(&["x"])]
);
t!(x_perl_e, "perl -e 'unlink \"x\"'", [X("perl", "-e")]);
t!(
    x_perl_script,
    "perl tool.pl",
    [X("perl", "script"), R(&["tool.pl"])]
);
t!(
    x_python_c,
    "python3 -c 'import os; os.system(\"id\")'",
    [X("python3", "-c")]
);
t!(
    x_python_script,
    "python scripts/gen.py --out x",
    [X("python", "script"), R(&["scripts/gen.py"])]
);
t!(x_python_m, "python3 -m http.server", [X("python3", "-m")]);
t!(
    x_python_versioned,
    "python3.12 -c 'print(1)'",
    [X("python3.12", "-c")]
);
t!(
    x_node_e,
    "node -e 'require(\"child_process\").execSync(\"id\")'",
    [X("node", "-e")]
);
t!(x_node_script, "node build.js", [X("node", "script")]);
t!(x_ruby_e, "ruby -e 'system(\"id\")'", [X("ruby", "-e")]);
t!(x_php_r, "php -r 'system(\"id\");'", [X("php", "-r")]);
t!(x_lua_e, "lua -e 'os.execute(\"id\")'", [X("lua", "-e")]);
t!(
    x_path_program,
    "./configure --prefix=/usr",
    [X("./configure", "./configure"), R(&["./configure"])]
);
t!(
    x_relative_path_program,
    "scripts/release.sh",
    [X("scripts/release.sh", "scripts/release.sh")]
);
t!(
    x_make,
    "make -j4 all",
    [Own("make"), C("make", Class::Mutating)]
);
t!(
    x_make_eval,
    "make --eval='$(shell id)'",
    [X("make", "--eval")]
);
t!(
    x_make_eval_prefix,
    "make --ev='$(shell id)'",
    [X("make", "--eval")]
);
t!(
    x_make_eval_prefix_next_word,
    "make -k --eva '$(shell id)'",
    [X("make", "--eval")]
);
t!(
    x_make_eval_cluster,
    "make -kE '$(shell id)'",
    [X("make", "--eval")]
);
t!(x_cmake_build, "cmake --build build", [Own("cmake")]);
t!(x_ninja, "ninja -C build", [Own("ninja")]);
t!(x_npm_run, "npm run test", [Own("npm")]);
t!(x_npm_install, "npm install", [Own("npm"), NetUnknown]);
t!(x_yarn, "yarn build", [Own("yarn")]);
t!(
    x_pnpm,
    "pnpm install --frozen-lockfile",
    [Own("pnpm"), NetUnknown]
);
t!(x_npx, "npx prettier --write .", [Own("npx"), NetUnknown]);
t!(x_bun, "bun test", [Own("bun")]);
t!(x_cargo_test, "cargo test -p cordon-shell", [Own("cargo")]);
t!(
    x_cargo_build,
    "cargo +nightly build --release",
    [Own("cargo")]
);
t!(
    x_cargo_config,
    "cargo --config 'build.rustc-wrapper=\"/tmp/x\"' build",
    [X("cargo", "--config")]
);
t!(x_go_run, "go run ./cmd/tool", [Own("go")]);
t!(
    x_go_test_exec,
    "go test -exec ./wrapper ./...",
    [Sh("./wrapper"), Own("go")]
);
t!(
    x_go_build_toolexec,
    "go build -toolexec=/tmp/t .",
    [Sh("/tmp/t")]
);
t!(x_go_generate, "go generate ./...", [Own("go")]);
t!(
    x_pip_install,
    "pip install requests",
    [Own("pip"), NetUnknown]
);
t!(
    x_pip_install_r,
    "pip3 install -r requirements.txt",
    [R(&["requirements.txt"]), Own("pip3")]
);
t!(x_man_html, "man --html=firefox ls", [Sh("firefox")]);
t!(x_man_h, "man -H ls", [X("man", "-H")]);
t!(x_man_pager, "man -P 'sh -c id' ls", [Sh("id")]);
t!(x_man_plain, "man ls", [C("man", Class::ReadOnly)]);
t!(x_lessopen, "LESSOPEN='|id %s' less f", [Sh("id")]);
t!(
    x_sort_compress,
    "sort --compress-program=./x big.txt",
    [Sh("./x")]
);
t!(
    x_parallel,
    "parallel rm ::: a b",
    [X("parallel", "command"), Ctx("rm", Context::ExecArgument)]
);
t!(
    x_parallel_stdin,
    "cat jobs.txt | parallel",
    [X("parallel", "stdin")]
);
t!(wr_env_dash, "env - rm x", [Wr("rm", &["env"]), D(&["x"])]);
t!(
    x_tar_to_command,
    "tar -xf a.tar --to-command='sh -c id'",
    [Sh("id")]
);
t!(x_tar_i, "tar -I 'sh -c id' -xf a.tar", [Sh("id")]);
t!(
    x_tar_compress_prog,
    "tar --use-compress-program=./z -cf a.tar src",
    [Sh("./z")]
);
t!(
    x_tar_checkpoint,
    "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id src",
    [Sh("id")]
);
t!(x_zip_tt, "zip -T -TT 'sh -c id' a.zip f", [Sh("id")]);
t!(x_rsync_e, "rsync -e 'sh -c id' a host:b", [Sh("id")]);
t!(
    x_rsync_path,
    "rsync --rsync-path='sudo rsync' a host:/b",
    [X("rsync", "--rsync-path")]
);
t!(
    x_ssh_proxycommand,
    "ssh -o ProxyCommand='sh -c id' host",
    [Sh("id")]
);
t!(
    x_ssh_localcommand,
    "ssh -o PermitLocalCommand=yes -o LocalCommand=id host",
    [X("ssh", "-o")]
);
t!(x_vim_c, "vim -c ':!id' f", [X("vim", "-c")]);
t!(x_vim_plus, "vim '+!id' f", [X("vim", "+cmd")]);
t!(
    x_nvim_cmd,
    "nvim --cmd 'lua os.execute(\"id\")'",
    [X("nvim", "--cmd")]
);
t!(
    x_emacs_eval,
    "emacs --batch --eval '(shell-command \"id\")'",
    [X("emacs", "--eval")]
);

// ---------------------------------------------------------------------------------
// Arguments that write or delete.
// ---------------------------------------------------------------------------------
t!(
    w_sort_o,
    "sort -o sorted.txt in.txt",
    [W(&["sorted.txt"]), R(&["in.txt"])]
);
t!(
    w_uniq_out,
    "uniq in.txt out.txt",
    [W(&["out.txt"]), R(&["in.txt"])]
);
t!(w_tee, "echo x | tee a.txt b.txt", [W(&["a.txt", "b.txt"])]);
t!(
    w_tee_append,
    "echo x | tee -a ~/.bashrc",
    [W(&["~/.bashrc"])]
);
t!(
    w_dd,
    "dd if=/dev/zero of=disk.img bs=1M count=1",
    [W(&["disk.img"]), R(&["/dev/zero"])]
);
t!(w_cp, "cp a.txt b.txt", [W(&["b.txt"]), R(&["a.txt"])]);
t!(
    w_cp_r,
    "cp -r src/ /tmp/backup",
    [W(&["/tmp/backup"]), R(&["src/"])]
);
t!(w_cp_t, "cp -t dest a b", [W(&["dest"]), R(&["a", "b"])]);
t!(
    w_mv,
    "mv old.txt new.txt",
    [W(&["new.txt"]), D(&["old.txt"]), R(&["old.txt"])]
);
t!(w_ln, "ln -s /etc/passwd link", [W(&["link"])]);
t!(
    w_install,
    "install -m 755 bin/tool ~/.local/bin/tool",
    [W(&["~/.local/bin/tool"])]
);
t!(
    w_rsync,
    "rsync -av src/ dest/",
    [W(&["dest/"]), R(&["src/"])]
);
t!(
    w_rsync_delete,
    "rsync -a --delete src/ dest/",
    [D(&["dest/"])]
);
t!(w_tar_x, "tar -xzf a.tgz", [W(&["."]), R(&["a.tgz"])]);
t!(w_tar_x_c, "tar xzf a.tgz -C /opt", [W(&["/opt"])]);
t!(
    w_tar_c,
    "tar -czf out.tgz src",
    [W(&["out.tgz"]), R(&["src"])]
);
t!(w_unzip_d, "unzip a.zip -d out", [W(&["out"])]);
t!(w_unzip_cwd, "unzip a.zip", [W(&["."])]);
t!(
    w_base64_o,
    "base64 -d -i in.b64 -o out.bin",
    [W(&["out.bin"]), R(&["in.b64"])]
);
t!(
    w_git_output,
    "git diff --output=patch.diff",
    [W(&["patch.diff"])]
);
t!(
    w_git_format_patch,
    "git format-patch -o patches HEAD~3",
    [W(&["patches"])]
);
t!(
    w_curl_o,
    "curl -o out.html https://example.com",
    [W(&["out.html"]), Net("https://example.com")]
);
t!(
    w_curl_big_o,
    "curl -O https://example.com/file.tar.gz",
    [W(&["file.tar.gz"])]
);
t!(
    w_curl_output,
    "curl --output x.bin https://e.example/x",
    [W(&["x.bin"])]
);
t!(
    w_wget_o,
    "wget -O page.html https://example.com",
    [W(&["page.html"])]
);
t!(
    w_wget_p,
    "wget -P downloads https://example.com/a.zip",
    [W(&["downloads"])]
);
t!(w_touch, "touch a b", [W(&["a", "b"])]);
t!(w_mkdir, "mkdir -p build/out", [W(&["build/out"])]);
t!(w_truncate, "truncate -s 0 log.txt", [W(&["log.txt"])]);
t!(w_chmod, "chmod +x run.sh", [W(&["run.sh"])]);
t!(w_chown, "chown user:group f", [W(&["f"])]);
t!(
    w_patch,
    "patch -p1 -i fix.diff",
    [R(&["fix.diff"]), C("patch", Class::Mutating)]
);
t!(w_patch_file, "patch src/a.c fix.diff", [W(&["src/a.c"])]);
t!(w_history_a, "history -a ~/.bashrc", [W(&["~/.bashrc"])]);
t!(d_rm, "rm -rf ~", [D(&["~"])]);
t!(d_rm_home, "rm -rf $HOME", [D(&["~"]), NoDy]);
t!(d_rmdir, "rmdir empty", [D(&["empty"])]);
t!(d_unlink, "unlink f", [D(&["f"])]);
t!(d_shred, "shred -u secret.txt", [D(&["secret.txt"])]);
t!(
    d_git_clean,
    "git clean -fdx",
    [
        C("git", Class::Mutating),
        Repo("git", RepoConfigUse::Always)
    ]
);
t!(d_git_rm, "git rm old.rs", [D(&["old.rs"])]);
t!(d_rm_dotdot, "rm -rf ../../x", [D(&["../../x"])]);

// ---------------------------------------------------------------------------------
// Repository-controlled execution.
// ---------------------------------------------------------------------------------
t!(
    repo_commit,
    "git commit -m 'msg'",
    [
        Repo("git", RepoConfigUse::Always),
        C("git", Class::Mutating)
    ]
);
t!(
    repo_checkout,
    "git checkout main",
    [Repo("git", RepoConfigUse::Always)]
);
t!(
    repo_pull,
    "git pull",
    [Repo("git", RepoConfigUse::Always), NetUnknown]
);
t!(
    repo_fetch_url,
    "git fetch https://github.com/x/y",
    [Net("https://github.com/x/y")]
);
t!(
    repo_clone,
    "git clone git@github.com:x/y.git",
    [Net("git@github.com:x/y.git"), W(&["y"])]
);
t!(
    repo_push,
    "git push origin main",
    [Repo("git", RepoConfigUse::Always), NetUnknown]
);
t!(
    repo_merge_rebase,
    "git merge dev && git rebase main",
    [Repo("git", RepoConfigUse::Always)]
);
t!(
    repo_rebase_exec,
    "git rebase -x 'make test' main",
    [Sh("make")]
);
t!(repo_unknown_sub, "git co main", [C("git", Class::Unknown)]);
t!(repo_npm_script, "npm test", [Own("npm")]);
t!(
    repo_script_written_then_run,
    "echo 'rm -rf ~' > x.sh && bash x.sh",
    [X("bash", "script")]
);
