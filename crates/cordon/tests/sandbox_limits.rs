//! Resource limits, tested with real processes and checked from the host: a fork bomb
//! stops at `--process-limit` for root (pids cgroup) and for an ordinary user
//! (`RLIMIT_NPROC`, counted per user namespace), a default limit applies without the
//! flag, the command cannot leave its cgroup, the cgroup is gone after the run, and the
//! scratch space (`/tmp`, `/var/tmp`, `/dev/shm`) has the configured size and refuses
//! to grow past it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

mod common;

use common::{World, as_nobody, is_root, text};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `cordon doctor --json`'s `limits` section.
fn host_limits() -> serde_json::Value {
    let out = Command::new(common::bin())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["limits"].clone()
}

/// Processes on the host whose command line is exactly `argv`.
fn count_host_processes(argv: &[&str]) -> usize {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
        .count()
}

/// Kills a child on drop, so a failed assertion leaves nothing running.
struct Running(Option<Child>);

impl Running {
    fn wait(mut self) -> Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A fork bomb of 300 sleeps under `--process-limit 50`, watched from the host while it
/// runs: far fewer than 300 exist, the shell reports the failed forks, and the report
/// says what held the limit. `sleep_arg` tells this run's sleeps apart on the host.
fn fork_bomb(
    w: &World,
    as_nobody_user: bool,
    sleep_arg: &str,
) -> (usize, String, serde_json::Value) {
    let report_path = w.ws.join("report.json");
    w.script(&format!(
        "sh -c 'for i in $(seq 300); do sleep {sleep_arg} & done; wait' 2>fork.err; echo \"inner=$?\"\n\
         exec sleep 3.5"
    ));
    let extra = [
        "--process-limit",
        "50",
        "--report",
        report_path.to_str().unwrap(),
    ];
    let mut cmd = if as_nobody_user {
        w.command_as_nobody(&extra)
    } else {
        w.command(&extra)
    };
    let child = Running(Some(
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    // The loop forks in well under a second; the sleeps last three.
    std::thread::sleep(Duration::from_millis(1500));
    let seen = count_host_processes(&["sleep", sleep_arg]);
    let o = child.wait();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let fork_err = std::fs::read_to_string(w.ws.join("fork.err")).unwrap_or_default();
    (seen, fork_err, report(&report_path))
}

#[test]
fn a_process_limit_stops_a_fork_bomb_run_by_root() {
    need_sandbox!("a_process_limit_stops_a_fork_bomb_run_by_root");
    if !is_root() {
        eprintln!("skipping a_process_limit_stops_a_fork_bomb_run_by_root: runs as root only");
        return;
    }
    let w = World::new();
    if host_limits()["pids_cgroup"] != true {
        // Root without a pids cgroup: nothing can hold the limit, so cordon refuses.
        let o = w.run("echo RAN", &["--process-limit", "50"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
        assert!(
            !out.contains("RAN") && err.contains("process limit"),
            "{err}"
        );
        return;
    }
    let (seen, fork_err, r) = fork_bomb(&w, false, "3.0713");
    assert!((10..=50).contains(&seen), "{seen} sleeps on the host");
    assert!(fork_err.to_lowercase().contains("fork"), "{fork_err}");
    let p = &r["enforced"]["processes"];
    assert_eq!(p["max"], 50, "{r}");
    assert!(p["by"].as_str().unwrap().starts_with("cgroup-"), "{p}");
    // The run's cgroup is gone with it.
    let cg = p["cgroup"].as_str().unwrap();
    assert!(!Path::new(cg).exists(), "{cg} was left behind");
}

#[test]
fn a_process_limit_stops_a_fork_bomb_run_by_an_ordinary_user() {
    need_sandbox!("a_process_limit_stops_a_fork_bomb_run_by_an_ordinary_user");
    if !is_root() {
        eprintln!("skipping: running cordon as nobody needs root");
        return;
    }
    let w = World::new();
    let (seen, fork_err, r) = fork_bomb(&w, true, "3.0717");
    assert!((10..=50).contains(&seen), "{seen} sleeps on the host");
    assert!(fork_err.to_lowercase().contains("fork"), "{fork_err}");
    let p = &r["enforced"]["processes"];
    assert_eq!(p["max"], 50, "{r}");
    assert_ne!(p["by"], "none", "{p}");
}

/// RLIMIT_NPROC is counted per user namespace (Linux 5.14): the user's processes on
/// the host do not use up the sandbox's limit.
#[test]
fn rlimit_nproc_counts_only_the_sandboxs_processes() {
    need_sandbox!("rlimit_nproc_counts_only_the_sandboxs_processes");
    if !is_root() {
        eprintln!("skipping: running cordon as nobody needs root");
        return;
    }
    let w = World::new();
    // 60 processes of nobody's on the host, more than the limit below.
    let mut host: Vec<Running> = (0..60)
        .map(|_| {
            let mut c = Command::new("sleep");
            c.arg("30");
            Running(Some(as_nobody(&c).spawn().unwrap()))
        })
        .collect();
    let report_path = w.ws.join("report.json");
    let o = w.run_as_nobody(
        "sh -c 'for i in $(seq 20); do sleep 0.3 & done; wait' 2>fork.err; echo \"inner=$?\"",
        &[
            "--process-limit",
            "50",
            "--report",
            report_path.to_str().unwrap(),
        ],
    );
    host.clear();
    let (out, err) = text(&o);
    assert!(out.contains("inner=0"), "{out}\n{err}");
    let fork_err = std::fs::read_to_string(w.ws.join("fork.err")).unwrap_or_default();
    assert!(fork_err.is_empty(), "{fork_err}");
    let p = &report(&report_path)["enforced"]["processes"];
    assert_eq!(p["max"], 50, "{p}");
}

/// Without the flag the default limit holds, as the kernel sees it from inside.
#[test]
fn the_default_process_limit_is_applied() {
    need_sandbox!("the_default_process_limit_is_applied");
    let body = r#"pids=$(sed -n 's/^[0-9]*:pids:\(.*\)/\1/p' /proc/self/cgroup)
cat "/sys/fs/cgroup/pids$pids/pids.max" 2>/dev/null || echo no-cgroup
sed -n 's/^Max processes *\([0-9a-z]*\).*/\1/p' /proc/self/limits"#;
    let mut runs = vec![false];
    if is_root() {
        runs.push(true);
    }
    for nobody in runs {
        let w = World::new();
        let report_path = w.ws.join("report.json");
        let extra = ["--report", report_path.to_str().unwrap()];
        let o = if nobody {
            w.run_as_nobody(body, &extra)
        } else {
            w.run(body, &extra)
        };
        let (out, err) = text(&o);
        assert!(o.status.success(), "{out}\n{err}");
        let p = &report(&report_path)["enforced"]["processes"];
        let lines: Vec<&str> = out.lines().collect();
        // cordon's own three processes (helper, PID 1, forwarder) come on top.
        match p["by"].as_str().unwrap() {
            "cgroup-v1" | "cgroup-v2" => assert_eq!(lines[0], "4099", "{out}"),
            "rlimit" => assert_eq!(lines[1], "4099", "{out}"),
            other => panic!("nobody={nobody}: no default limit held ({other}): {p}"),
        }
        assert_eq!(p["max"], 4096, "{p}");
    }
}

/// The command cannot move itself out of its cgroup, not even under `full-access` and
/// run by root.
#[test]
fn the_command_cannot_leave_its_cgroup() {
    need_sandbox!("the_command_cannot_leave_its_cgroup");
    let w = World::new();
    let body = r#"before=$(grep pids /proc/self/cgroup)
for f in /sys/fs/cgroup/pids/cgroup.procs /sys/fs/cgroup/pids/tasks /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs; do
  [ -e "$f" ] && (echo $$ > "$f") 2>/dev/null && echo "MOVED $f"
done
mkdir /sys/fs/cgroup/pids/escape 2>/dev/null && echo MADE-CGROUP
[ "$before" = "$(grep pids /proc/self/cgroup)" ] && echo SAME-CGROUP
echo end"#;
    if is_root() && host_limits()["pids_cgroup"] != true {
        eprintln!("skipping the_command_cannot_leave_its_cgroup: root, and no pids cgroup");
        return;
    }
    for mode in ["workspace-write", "full-access"] {
        let o = w.run(body, &["--sandbox", mode, "--process-limit", "100"]);
        let (out, err) = text(&o);
        assert!(out.contains("end"), "{mode}: {out}\n{err}");
        assert!(!out.contains("MOVED"), "{mode}: {out}");
        assert!(!out.contains("MADE-CGROUP"), "{mode}: {out}");
        assert!(out.contains("SAME-CGROUP"), "{mode}: {out}");
    }
    assert!(!Path::new("/sys/fs/cgroup/pids/escape").exists());
}

/// Megabytes `df` gives as the size of PATH, from inside.
fn df_line(out: &str, mount: &str) -> u64 {
    out.lines()
        .find(|l| l.split_whitespace().last() == Some(mount))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no df line for {mount}: {out}"))
}

#[test]
fn the_scratch_space_has_its_size_and_no_more() {
    need_sandbox!("the_scratch_space_has_its_size_and_no_more");
    let w = World::new();
    let report_path = w.ws.join("report.json");
    let o = w.run(
        r#"df -k /tmp /var/tmp /dev/shm
dd if=/dev/zero of=/tmp/big bs=1M count=16 2>&1 | grep -o 'No space left on device' | head -1
echo x > /dev/shm/more 2>/dev/null && echo SHM-WROTE || echo SHM-FULL
rm -f /tmp/big; echo x > /var/tmp/after && echo WROTE-AFTER"#,
        &[
            "--tmp-size",
            "8M",
            "--report",
            report_path.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // One tmpfs of 8 MiB behind all three.
    for m in ["/tmp", "/var/tmp", "/dev/shm"] {
        assert_eq!(df_line(&out, m), 8 * 1024, "{m}: {out}");
    }
    assert!(out.contains("No space left on device"), "{out}\n{err}");
    assert!(
        out.contains("SHM-FULL"),
        "/dev/shm shares the budget: {out}"
    );
    assert!(out.contains("WROTE-AFTER"), "{out}");
    assert_eq!(
        report(&report_path)["enforced"]["scratch_bytes"],
        8 << 20,
        "{out}"
    );

    // The default: as `cordon doctor` says, and capped by --memory-limit.
    let default_kib = host_limits()["default_tmp_size"].as_u64().unwrap() / 1024;
    let o = w.run("df -k /tmp", &[]);
    assert_eq!(df_line(&text(&o).0, "/tmp"), default_kib, "{}", text(&o).1);
    let o = w.run("df -k /tmp", &["--memory-limit", "256M"]);
    assert_eq!(
        df_line(&text(&o).0, "/tmp"),
        default_kib.min(256 * 1024),
        "{}",
        text(&o).1
    );
    // A size that would mean "unbounded" to tmpfs is refused.
    let o = w.run("echo RAN", &["--tmp-size", "0"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o).1);
}

/// The `cordon-*` cgroups beside the run's.
fn helper_cgroups(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cordon-"))
        .collect()
}

/// A finished run leaves no cgroup behind, and neither does a denied one (its helper,
/// started before the verdict, is stopped and cleans up).
#[test]
fn no_cgroup_outlives_a_run() {
    need_sandbox!("no_cgroup_outlives_a_run");
    if host_limits()["pids_cgroup"] != true {
        eprintln!("skipping no_cgroup_outlives_a_run: no pids cgroup on this host");
        return;
    }
    let w = World::new();
    let report_path = w.ws.join("report.json");
    let o = w.run("true", &["--report", report_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let cg = report(&report_path)["enforced"]["processes"]["cgroup"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!Path::new(&cg).exists(), "{cg} was left behind");
    let parent = Path::new(&cg).parent().unwrap().to_path_buf();
    let before = helper_cgroups(&parent);
    let started = Instant::now();
    let o = Command::new(common::bin())
        .args(["exec", "--isolated", "--config"])
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws)
        .args(["--", "cat", "/etc/shadow"])
        .env("HOME", &w.home)
        .current_dir(&w.ws)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", text(&o).1);
    assert!(started.elapsed() < Duration::from_secs(2));
    // Other tests' sandboxes come and go meanwhile, each with a cgroup that is empty for
    // a moment (made while its helper starts); one that stays empty is a leftover.
    for n in helper_cgroups(&parent) {
        if before.contains(&n) {
            continue;
        }
        let dir = parent.join(&n);
        let mut empty_checks = 0;
        for _ in 0..5 {
            match std::fs::read_to_string(dir.join("cgroup.procs")) {
                Ok(p) if p.trim().is_empty() => empty_checks += 1,
                _ => break,
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        assert!(
            empty_checks < 5 || !dir.exists(),
            "{n} is an empty cgroup left behind"
        );
    }
}
