//! The table of [`super::Runs`]: per program, the options, environment variables and
//! configuration keys whose value is run, each with the manual line that says so.

use super::{Adds, Runs, Via};
use Adds::{Nothing, Path};

const fn opt(
    programs: &'static [&'static str],
    names: &'static [&'static str],
    adds: Adds,
    example: &'static str,
    source: &'static str,
) -> Runs {
    Runs {
        programs,
        via: Via::Opt(names),
        adds,
        gnu: false,
        subs: &[],
        example,
        source,
    }
}

const fn gnu(
    programs: &'static [&'static str],
    names: &'static [&'static str],
    adds: Adds,
    example: &'static str,
    source: &'static str,
) -> Runs {
    Runs {
        programs,
        via: Via::Opt(names),
        adds,
        gnu: true,
        subs: &[],
        example,
        source,
    }
}

const fn env(
    programs: &'static [&'static str],
    name: &'static str,
    adds: Adds,
    example: &'static str,
    source: &'static str,
) -> Runs {
    Runs {
        programs,
        via: Via::Env(name),
        adds,
        gnu: false,
        subs: &[],
        example,
        source,
    }
}

const fn key(
    programs: &'static [&'static str],
    option: &'static str,
    name: &'static str,
    example: &'static str,
    source: &'static str,
) -> Runs {
    Runs {
        programs,
        via: Via::Config(option, name),
        adds: Adds::Nothing,
        gnu: false,
        subs: &[],
        example,
        source,
    }
}

/// A git subcommand's option.
const fn git_opt(
    subs: &'static [&'static str],
    names: &'static [&'static str],
    adds: Adds,
    example: &'static str,
    source: &'static str,
) -> Runs {
    Runs {
        programs: &["git"],
        via: Via::Opt(names),
        adds,
        gnu: false,
        subs,
        example,
        source,
    }
}

const GIT: &[&str] = &["git"];
const TAR: &[&str] = &["tar", "gtar", "bsdtar"];
const SSH: &[&str] = &["ssh", "scp", "sftp"];
const PAGED: &[&str] = &[
    "man",
    "git",
    "journalctl",
    "systemctl",
    "psql",
    "mysql",
    "gh",
];
const EDITS: &[&str] = &[
    "git", "crontab", "visudo", "sudoedit", "less", "gh", "kubectl", "vipw", "fc",
];

/// The table. Each entry's `source` quotes where the program's manual (or `--help`)
/// says the value is run.
pub(crate) const TABLE: &[Runs] = &[
    // ripgrep
    opt(
        &["rg"],
        &["--pre"],
        Path,
        "rg --pre={} foo",
        "rg(1) --pre COMMAND: for each input PATH, this flag causes ripgrep to search the standard output of COMMAND PATH",
    ),
    opt(
        &["rg"],
        &["--hostname-bin"],
        Nothing,
        "rg --hostname-bin {} foo",
        "rg(1) --hostname-bin COMMAND: this flag controls how ripgrep determines this system's hostname; the executable is run with no arguments",
    ),
    // The Silver Searcher
    opt(
        &["ag"],
        &["--pager"],
        Nothing,
        "ag --pager {} foo",
        "ag(1) --pager COMMAND: use a pager such as less; output is piped to COMMAND",
    ),
    // GNU tar
    gnu(
        TAR,
        &["-I", "--use-compress-program"],
        Nothing,
        "tar -I {} -xf a.tar",
        "tar(1) -I, --use-compress-program=COMMAND: filter data through COMMAND",
    ),
    gnu(
        TAR,
        &["--to-command"],
        Nothing,
        "tar -xf a.tar --to-command={}",
        "tar(1) --to-command=COMMAND: pipe extracted files to COMMAND",
    ),
    gnu(
        TAR,
        &["--rsh-command"],
        Nothing,
        "tar -cf h:/x --rsh-command={} .",
        "tar(1) --rsh-command=COMMAND: use COMMAND instead of rsh",
    ),
    gnu(
        TAR,
        &["--rmt-command"],
        Nothing,
        "tar -cf h:/x --rmt-command={} .",
        "tar(1) --rmt-command=COMMAND: use COMMAND instead of rmt",
    ),
    gnu(
        TAR,
        &["-F", "--info-script", "--new-volume-script"],
        Nothing,
        "tar -cf a.tar -M -F {} .",
        "tar(1) -F, --info-script=COMMAND: run COMMAND at the end of each tape",
    ),
    // GNU coreutils, diffutils
    gnu(
        &["sort"],
        &["--compress-program"],
        Nothing,
        "sort --compress-program={} f",
        "sort(1) --compress-program=PROG: compress temporaries with PROG; decompress them with PROG -d",
    ),
    gnu(
        &["install", "ginstall"],
        &["--strip-program"],
        Path,
        "install -s --strip-program={} a /tmp/b",
        "install(1) --strip-program=PROGRAM: program used to strip binaries",
    ),
    gnu(
        &["sdiff", "diff3"],
        &["--diff-program"],
        Path,
        "sdiff --diff-program={} a b",
        "sdiff(1), diff3(1) --diff-program=PROGRAM: use PROGRAM to compare files",
    ),
    // rsync
    opt(
        &["rsync"],
        &["-e", "--rsh"],
        Nothing,
        "rsync -e {} h:x .",
        "rsync(1) -e, --rsh=COMMAND: specify the remote shell to use",
    ),
    opt(
        &["rsync"],
        &["--rsync-path"],
        Nothing,
        "rsync --rsync-path={} a h:b",
        "rsync(1) --rsync-path=PROGRAM: the program run on the remote side, through the remote shell",
    ),
    // zip
    opt(
        &["zip"],
        &["-TT", "--unzip-command"],
        Path,
        "zip -T -TT {} a.zip f",
        "zip(1) -TT cmd, --unzip-command cmd: use command cmd instead of 'unzip -tqq' to test an archive",
    ),
    // man, pagers and editors of other programs
    opt(
        &["man"],
        &["-P", "--pager"],
        Nothing,
        "man -P {} ls",
        "man(1) -P pager, --pager=pager: specify which output pager to use",
    ),
    opt(
        &["man"],
        &["-H", "--html"],
        Path,
        "man -H{} ls",
        "man(1) -H[browser], --html[=browser]: the browser is run on the HTML output",
    ),
    opt(
        &["mysql"],
        &["--pager"],
        Nothing,
        "mysql --pager={} db",
        "mysql(1) --pager[=command]: use the given command for paging query output",
    ),
    opt(
        &["wget"],
        &["--use-askpass"],
        Nothing,
        "wget --use-askpass={} https://example.com",
        "wget(1) --use-askpass=command: prompt for a user and password using the specified command",
    ),
    opt(
        &["ncat", "nc", "netcat"],
        &["-e", "--exec"],
        Nothing,
        "ncat -e {} -l 9",
        "ncat(1) -e command, --exec command: execute the given command",
    ),
    opt(
        &["ncat", "nc", "netcat"],
        &["-c", "--sh-exec"],
        Nothing,
        "ncat -c {} -l 9",
        "ncat(1) -c command, --sh-exec command: execute the given command via /bin/sh",
    ),
    opt(
        &["fzf"],
        &["--preview"],
        Path,
        "fzf --preview={}",
        "fzf(1) --preview=COMMAND: execute the given command for the current line and display the result",
    ),
    opt(
        &["bat", "batcat"],
        &["--pager"],
        Nothing,
        "bat --pager={} f",
        "bat(1) --pager <command>: determine which pager is used",
    ),
    opt(
        &["delta"],
        &["--pager"],
        Nothing,
        "delta --pager={}",
        "delta(1) --pager <CMD>: which pager to use",
    ),
    // go
    opt(
        &["go"],
        &["-exec", "--exec"],
        Path,
        "go test -exec={} ./...",
        "go help build: -exec xprog: run the test binary using xprog (go run, go test)",
    ),
    opt(
        &["go"],
        &["-toolexec", "--toolexec"],
        Path,
        "go build -toolexec={} ./...",
        "go help build: -toolexec 'cmd args': a program to use to invoke toolchain programs like vet and asm",
    ),
    // ssh
    opt(
        &["scp", "sftp"],
        &["-S"],
        Nothing,
        "scp -S {} a h:b",
        "scp(1), sftp(1) -S program: name of program to use for the encrypted connection",
    ),
    opt(
        &["sftp"],
        &["-D"],
        Nothing,
        "sftp -D {} h",
        "sftp(1) -D sftp_server_command: connect directly to a local sftp server",
    ),
    key(
        SSH,
        "-o",
        "ProxyCommand",
        "ssh -o ProxyCommand={} h",
        "ssh_config(5) ProxyCommand: specifies the command to use to connect to the server, executed using the user's shell",
    ),
    key(
        SSH,
        "-o",
        "LocalCommand",
        "ssh -o PermitLocalCommand=yes -o LocalCommand={} h",
        "ssh_config(5) LocalCommand: a command to execute on the local machine after connecting",
    ),
    key(
        SSH,
        "-o",
        "KnownHostsCommand",
        "ssh -o KnownHostsCommand={} h",
        "ssh_config(5) KnownHostsCommand: a command to use to obtain a list of host keys",
    ),
    // git: options of subcommands
    git_opt(
        &["fetch", "clone", "ls-remote", "pull"],
        &["--upload-pack"],
        Nothing,
        "git fetch --upload-pack={} origin",
        "git-fetch(1), git-clone(1), git-ls-remote(1) --upload-pack <upload-pack>: the command run on the other end",
    ),
    git_opt(
        &["clone", "ls-remote"],
        &["-u"],
        Nothing,
        "git clone -u {} h:r d",
        "git-clone(1), git-ls-remote(1) -u <upload-pack>: the program run on the other end",
    ),
    git_opt(
        &["push", "send-pack"],
        &["--receive-pack", "--exec"],
        Nothing,
        "git push --receive-pack={} origin",
        "git-push(1) --receive-pack=<git-receive-pack>: path to the program on the remote end",
    ),
    git_opt(
        &["archive"],
        &["--exec"],
        Nothing,
        "git archive --remote=h --exec={} HEAD",
        "git-archive(1) --exec=<git-upload-archive>: used with --remote to specify the path to the program on the remote side; git-rebase(1) --exec <cmd>",
    ),
    git_opt(
        &["rebase"],
        &["--exec", "-x"],
        Nothing,
        "git rebase -x {} HEAD~1",
        "git-rebase(1) -x <cmd>, git-difftool(1) -x <command>: run a command",
    ),
    git_opt(
        &["difftool"],
        &["--extcmd", "-x"],
        Path,
        "git difftool -y --extcmd={}",
        "git-difftool(1) -x <command>, --extcmd=<command>: specify a custom command for viewing diffs",
    ),
    git_opt(
        &["grep"],
        &["-O", "--open-files-in-pager"],
        Path,
        "git grep --open-files-in-pager={} foo",
        "git-grep(1) -O[<pager>], --open-files-in-pager[=<pager>]: open the matching files in the pager",
    ),
    git_opt(
        &["send-email"],
        &["--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd"],
        Nothing,
        "git send-email --to-cmd={} x.patch",
        "git-send-email(1) --sendmail-cmd, --to-cmd, --cc-cmd, --header-cmd: commands executed once per patch",
    ),
    // git: environment
    env(
        GIT,
        "GIT_SSH_COMMAND",
        Nothing,
        "GIT_SSH_COMMAND={} git fetch",
        "git(1) GIT_SSH_COMMAND: if set, git fetch and git push use the specified command instead of ssh",
    ),
    env(
        GIT,
        "GIT_SSH",
        Nothing,
        "GIT_SSH={} git fetch",
        "git(1) GIT_SSH: the program run instead of ssh",
    ),
    env(
        GIT,
        "GIT_PAGER",
        Nothing,
        "GIT_PAGER={} git log",
        "git(1) GIT_PAGER: this environment variable overrides $PAGER",
    ),
    env(
        GIT,
        "GIT_EDITOR",
        Path,
        "GIT_EDITOR={} git commit",
        "git(1) GIT_EDITOR: the editor run to edit messages",
    ),
    env(
        GIT,
        "GIT_SEQUENCE_EDITOR",
        Path,
        "GIT_SEQUENCE_EDITOR={} git rebase -i HEAD~1",
        "git-rebase(1) GIT_SEQUENCE_EDITOR: the editor run on the rebase todo list",
    ),
    env(
        GIT,
        "GIT_EXTERNAL_DIFF",
        Path,
        "GIT_EXTERNAL_DIFF={} git diff",
        "git(1) GIT_EXTERNAL_DIFF: git calls this command to generate diffs",
    ),
    env(
        GIT,
        "GIT_ASKPASS",
        Nothing,
        "GIT_ASKPASS={} git fetch",
        "git(1) GIT_ASKPASS: a program git calls to ask for a password",
    ),
    env(
        GIT,
        "GIT_PROXY_COMMAND",
        Nothing,
        "GIT_PROXY_COMMAND={} git fetch",
        "git-config(1) core.gitProxy / GIT_PROXY_COMMAND: a command run to connect to a git:// remote",
    ),
    env(
        &["git", "ssh", "scp", "sftp"],
        "SSH_ASKPASS",
        Nothing,
        "SSH_ASKPASS={} git fetch",
        "ssh(1) SSH_ASKPASS: the program run to read a passphrase",
    ),
    // git: configuration keys on the command line (all of git-config's code-running
    // keys are in `gitkeys`; these are the common ones, listed for the coverage).
    key(
        GIT,
        "-c",
        "core.pager",
        "git -c core.pager={} log",
        "git-config(1) core.pager: text viewer for use by Git commands",
    ),
    key(
        GIT,
        "-c",
        "core.editor",
        "git -c core.editor={} commit",
        "git-config(1) core.editor: commands such as commit and tag run this editor",
    ),
    key(
        GIT,
        "-c",
        "core.sshCommand",
        "git -c core.sshCommand={} fetch",
        "git-config(1) core.sshCommand: git fetch and git push use the specified command instead of ssh",
    ),
    key(
        GIT,
        "-c",
        "core.fsmonitor",
        "git -c core.fsmonitor={} status",
        "git-config(1) core.fsmonitor: the command run as the file system monitor hook",
    ),
    key(
        GIT,
        "-c",
        "core.askPass",
        "git -c core.askPass={} fetch",
        "git-config(1) core.askPass: a program that asks for a password",
    ),
    key(
        GIT,
        "-c",
        "diff.external",
        "git -c diff.external={} diff",
        "git-config(1) diff.external: the command used to generate diffs",
    ),
    key(
        GIT,
        "-c",
        "sequence.editor",
        "git -c sequence.editor={} rebase -i HEAD~1",
        "git-config(1) sequence.editor: the editor of the rebase todo list",
    ),
    key(
        GIT,
        "-c",
        "gpg.program",
        "git -c gpg.program={} commit -S -m x",
        "git-config(1) gpg.program: the program run to sign",
    ),
    key(
        GIT,
        "-c",
        "credential.helper",
        "git -c credential.helper={} fetch",
        "gitcredentials(7) credential.helper: a helper starting with ! is a shell command",
    ),
    // Pagers and editors read from the environment.
    env(
        PAGED,
        "PAGER",
        Nothing,
        "PAGER={} man ls",
        "man(1), git(1), systemctl(1), psql(1) PAGER: the pager used for output",
    ),
    env(
        &["man"],
        "MANPAGER",
        Nothing,
        "MANPAGER={} man ls",
        "man(1) MANPAGER: the program used to display the page",
    ),
    env(
        &["man"],
        "MANOPT",
        Nothing,
        "MANOPT={} man ls",
        "man(1) MANOPT: parsed prior to man's command line (so it can carry -P pager)",
    ),
    env(
        &["journalctl", "systemctl", "loginctl", "busctl"],
        "SYSTEMD_PAGER",
        Nothing,
        "SYSTEMD_PAGER={} journalctl",
        "systemd(1) SYSTEMD_PAGER: pager to use when --no-pager is not given",
    ),
    env(
        &["psql"],
        "PSQL_PAGER",
        Nothing,
        "PSQL_PAGER={} psql",
        "psql(1) PSQL_PAGER, PAGER: the program used for paging",
    ),
    env(
        &["gh"],
        "GH_PAGER",
        Nothing,
        "GH_PAGER={} gh pr list",
        "gh(1) environment GH_PAGER: a terminal paging program to send output to",
    ),
    env(
        &["bat", "batcat"],
        "BAT_PAGER",
        Nothing,
        "BAT_PAGER={} bat f",
        "bat(1) BAT_PAGER: the pager command",
    ),
    env(
        &["less"],
        "LESSOPEN",
        Path,
        "LESSOPEN={} less f",
        "less(1) LESSOPEN: the command run as an input preprocessor, with %s replaced by the file name",
    ),
    env(
        &["less"],
        "LESSCLOSE",
        Path,
        "LESSCLOSE={} less f",
        "less(1) LESSCLOSE: the command run after the input file is closed",
    ),
    env(
        EDITS,
        "EDITOR",
        Path,
        "EDITOR={} crontab -e",
        "crontab(1), visudo(8), git(1) EDITOR: the editor to run",
    ),
    env(
        EDITS,
        "VISUAL",
        Path,
        "VISUAL={} crontab -e",
        "crontab(1), visudo(8), git(1) VISUAL: the editor to run, before EDITOR",
    ),
    env(
        &["sudoedit"],
        "SUDO_EDITOR",
        Path,
        "SUDO_EDITOR={} sudoedit f",
        "sudo(8) SUDO_EDITOR: the editor used by -e (sudoedit)",
    ),
    env(
        &["kubectl"],
        "KUBE_EDITOR",
        Path,
        "KUBE_EDITOR={} kubectl edit pod/x",
        "kubectl edit: the editor from KUBE_EDITOR, EDITOR",
    ),
    env(
        &["gh"],
        "GH_EDITOR",
        Path,
        "GH_EDITOR={} gh pr create",
        "gh(1) environment GH_EDITOR: the editor tool for authoring text",
    ),
    env(
        &["wget"],
        "WGET_ASKPASS",
        Nothing,
        "WGET_ASKPASS={} wget https://example.com",
        "wget(1) --use-askpass: if not given, the command in WGET_ASKPASS is used",
    ),
    // Build tools whose environment names the compiler or a wrapper.
    env(
        &["cargo"],
        "RUSTC_WRAPPER",
        Path,
        "RUSTC_WRAPPER={} cargo build",
        "cargo(1) environment RUSTC_WRAPPER: instead of running rustc, Cargo runs this wrapper",
    ),
    env(
        &["cargo"],
        "RUSTC",
        Nothing,
        "RUSTC={} cargo build",
        "cargo(1) environment RUSTC: instead of running rustc, Cargo runs this program",
    ),
    env(
        &["npm", "pnpm", "yarn"],
        "npm_config_script_shell",
        Path,
        "npm_config_script_shell={} npm run build",
        "npm-config(7) script-shell: the shell used for scripts run with npm run",
    ),
    opt(
        &["npm"],
        &["--script-shell"],
        Path,
        "npm run build --script-shell={}",
        "npm-config(7) script-shell: the shell used for scripts run with npm run",
    ),
];
