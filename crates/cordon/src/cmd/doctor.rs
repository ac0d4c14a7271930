//! `cordon doctor`: what containment this host can give, and why; and for each harness
//! on PATH, whether it runs cordon's hook (`cordon_hook::doctor`).

use crate::setup::PolicyArgs;
use cordon_hook::Harness;
use cordon_hook::doctor::{self, FileState, HarnessCheck};
use cordon_policy::RequiredTier;

/// Report what containment this machine can give, and whether each harness on PATH
/// runs cordon's hook.
#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// The config whose `[sandbox] require` decides whether the fallback tier may run.
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Whether `cordon exec` accepts the fallback tier under the config, and who said so.
struct Acceptance {
    tier: RequiredTier,
    /// The file that set `[sandbox] require`; `None`: the default.
    source: Option<String>,
    /// Why the config could not be read (the default is assumed then).
    error: Option<String>,
}

fn acceptance(policy: &PolicyArgs) -> Acceptance {
    let loaded = policy.options().and_then(|o| {
        cordon_policy::Policy::load(&o, &cordon_policy::RealFs).map_err(anyhow::Error::from)
    });
    match loaded {
        Ok(p) => Acceptance {
            tier: p.sandbox().required_tier(),
            source: p.sandbox().require_source.clone(),
            error: None,
        },
        Err(e) => Acceptance {
            tier: RequiredTier::Full,
            source: None,
            error: Some(format!("{e:#}")),
        },
    }
}

/// Run `cordon doctor`.
pub fn run(args: DoctorArgs) -> anyhow::Result<u8> {
    let host = cordon_sandbox::probe_host();
    let limits = cordon_sandbox::probe_limits();
    let accepted = acceptance(&args.policy);
    let gaps = cordon_sandbox::fallback_gaps(host.landlock_abi, None);
    let harnesses = harness_checks(&args.policy);
    if args.json {
        let mut json = serde_json::to_value(&host)?;
        if let Some(obj) = json.as_object_mut() {
            obj.insert("limits".into(), serde_json::to_value(&limits)?);
            obj.insert("required_tier".into(), accepted.tier.as_str().into());
            obj.insert(
                "required_tier_source".into(),
                serde_json::to_value(&accepted.source)?,
            );
            obj.insert(
                "fallback_refused".into(),
                (accepted.tier != RequiredTier::Any).into(),
            );
            obj.insert("fallback_unprotected".into(), serde_json::to_value(&gaps)?);
            if let Some(e) = &accepted.error {
                obj.insert("config_error".into(), e.as_str().into());
            }
            obj.insert("harnesses".into(), harnesses_json(&harnesses));
            obj.insert(
                "apparmor".into(),
                serde_json::to_value(cordon_sandbox::apparmor::report())?,
            );
        }
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        println!("user namespaces: {}", yes_no(host.user_namespaces));
        if let Some(e) = &host.user_namespaces_error {
            println!("  why not: {e}");
        }
        print_userns_restrictions(&host);
        print_apparmor(&cordon_sandbox::apparmor::report());
        if host.landlock_abi > 0 {
            println!("landlock: ABI {}", host.landlock_abi);
        } else {
            println!("landlock: unavailable");
        }
        println!("seccomp: {}", yes_no(host.seccomp));
        println!(
            "cgroups: {}",
            if host.cgroups.is_empty() {
                "none mounted".to_string()
            } else {
                host.cgroups.join(", ")
            }
        );
        println!("tier: {}", host.tier.as_str());
        println!("  {}", host.why);
        print_fallback(&host, &accepted, &gaps);
        println!("running as root: {}", yes_no(host.running_as_root));
        if host.running_as_root {
            for c in cordon_sandbox::ROOT_CAVEATS {
                println!("  {c}");
            }
        }
        print_limits(&limits);
        let (base, ok) = cordon_sandbox::changes_home();
        println!(
            "copy-on-write workspace: {} (changes wait in {} until cordon merges them)",
            if ok {
                "yes"
            } else {
                "no: that file system keeps no user extended attributes, which overlayfs needs; the full tier refuses to run"
            },
            cordon_policy::terminal::path_for_terminal(&base)
        );
        print_harnesses(&harnesses);
    }
    Ok(0)
}

/// One harness's check, with whether each socket its hook names answers.
struct Checked {
    check: HarnessCheck,
    sockets: Vec<(std::path::PathBuf, Result<(), String>)>,
}

/// Check each harness whose CLI is on PATH (the project is the workspace).
fn harness_checks(policy: &PolicyArgs) -> Vec<Checked> {
    // Without HOME or a current directory there are no settings files to read.
    let (Ok(homes), Ok(project)) = (crate::cmd::setup::homes(), policy.workspace()) else {
        return Vec::new();
    };
    let path_var = std::env::var("PATH").unwrap_or_default();
    let var = |v: &str| std::env::var(v).ok();
    Harness::ALL
        .into_iter()
        .filter_map(|h| {
            let bin = doctor::on_path(doctor::program(h), &path_var)?;
            let check = doctor::check(h, bin, &homes, &project, &var);
            let sockets = check
                .sockets
                .iter()
                .map(|s| {
                    let answered = cordon_serve::hook::answers(s).map_err(|e| e.to_string());
                    (s.clone(), answered)
                })
                .collect();
            Some(Checked { check, sockets })
        })
        .collect()
}

fn state_text(s: &FileState) -> String {
    match s {
        FileState::Absent => "no such file".into(),
        FileState::Unreadable(e) => format!("cannot be read ({e})"),
        FileState::Without => "no cordon hook".into(),
        FileState::With(found) => {
            let events: Vec<&str> = found.iter().map(|(e, _)| e.as_str()).collect();
            format!("cordon's hook on {}", events.join(", "))
        }
    }
}

fn print_harnesses(checked: &[Checked]) {
    use cordon_policy::terminal::{path_for_terminal as p, sanitize_for_terminal as clean};
    if checked.is_empty() {
        println!("harnesses: none of claude, codex, gemini is on PATH");
        return;
    }
    for c in checked {
        let h = &c.check;
        println!(
            "{} ({}):",
            cordon_hook::setup::title(h.harness),
            p(&h.binary)
        );
        for f in &h.files {
            println!(
                "  {} {}: {}",
                f.scope,
                p(&f.path),
                clean(&state_text(&f.state))
            );
        }
        for v in &h.verdicts {
            println!("  ! {}", clean(v));
        }
        for (s, r) in &c.sockets {
            match r {
                Ok(()) => println!("  --server {}: answers", p(s)),
                Err(e) => println!(
                    "  ! --server {}: does not answer ({}); every call is blocked until `cordon serve --socket {}` runs",
                    p(s),
                    clean(e),
                    p(s)
                ),
            }
        }
        let installed = h
            .files
            .iter()
            .any(|f| matches!(f.state, FileState::With(_)));
        if installed && h.verdicts.is_empty() && c.sockets.iter().all(|(_, r)| r.is_ok()) {
            println!("  runs cordon's hook");
        }
    }
}

fn harnesses_json(checked: &[Checked]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = checked
        .iter()
        .map(|c| {
            let h = &c.check;
            serde_json::json!({
                "harness": h.harness.name(),
                "binary": h.binary,
                "files": h.files.iter().map(|f| serde_json::json!({
                    "path": f.path,
                    "scope": f.scope,
                    "installed": matches!(f.state, FileState::With(_)),
                    "state": state_text(&f.state),
                })).collect::<Vec<_>>(),
                "problems": h.verdicts,
                "sockets": c.sockets.iter().map(|(s, r)| serde_json::json!({
                    "path": s,
                    "answers": r.is_ok(),
                    "error": r.as_ref().err(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(list)
}

/// Whether `cordon exec` runs the fallback tier, and what that tier does not protect.
fn print_fallback(host: &cordon_sandbox::HostReport, a: &Acceptance, gaps: &[String]) {
    use cordon_policy::terminal::sanitize_for_terminal as clean;
    let said = match &a.source {
        Some(s) => format!("`require = \"{}\"` from {}", a.tier.as_str(), clean(s)),
        None => "the default".to_string(),
    };
    let runs = match a.tier {
        RequiredTier::Any => format!(
            "accepted ({said}): where user namespaces are unavailable `cordon exec` runs there and prints what it does not protect at every run"
        ),
        _ => format!(
            "refused ({said}): where user namespaces are unavailable `cordon exec` exits 125; `--require any` or `[sandbox] require = \"any\"` in the user config accepts it"
        ),
    };
    println!("fallback tier: {runs}");
    if host.tier == cordon_sandbox::Tier::Fallback && a.tier != RequiredTier::Any {
        println!(
            "  this host gets only the fallback tier, so `cordon exec` refuses every run here"
        );
    }
    if let Some(e) = &a.error {
        println!(
            "  (the config could not be read, the default is assumed: {})",
            clean(e)
        );
    }
    println!("what the fallback tier does not protect:");
    for g in gaps {
        println!("  - {g}");
    }
}

/// AppArmor's restriction of user namespaces, and whether a profile lifts it for this
/// binary.
fn print_apparmor(r: &cordon_sandbox::apparmor::Report) {
    let Some(setting) = r.restrict_unprivileged_userns else {
        return;
    };
    println!(
        "apparmor: kernel.apparmor_restrict_unprivileged_userns = {setting}{}",
        if setting == 1 {
            " (unconfined programs get no user namespaces)"
        } else {
            ""
        }
    );
    if let Some(label) = &r.label {
        println!("  this process's label: {label}");
    }
    match &r.profile {
        Some(p) => println!("  profile for this binary: {}", p.display()),
        None => println!("  profile for this binary: none installed"),
    }
    if let Some(fix) = &r.fix {
        println!("  to get the full tier: {fix} (then `apparmor_parser -r` the file it names)");
    }
}

/// The kernel settings that restrict user namespaces, and what each means here.
fn print_userns_restrictions(host: &cordon_sandbox::HostReport) {
    for r in &host.userns_restrictions {
        if host.user_namespaces {
            println!(
                "  {} is set, but cordon can create user namespaces here (an AppArmor profile or a capability lets it)",
                r.setting()
            );
        } else {
            println!("  restricted by {}: {}", r.setting(), r.explanation());
        }
    }
}

/// The resource limits this host can enforce for the current user.
fn print_limits(l: &cordon_sandbox::LimitsReport) {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    println!("resource limits:");
    println!(
        "  processes: {} (default limit {}, --process-limit N)",
        match l.processes.as_str() {
            "cgroup-v1" | "cgroup-v2" => "a pids cgroup per run",
            "rlimit" => "RLIMIT_NPROC",
            _ => "not enforceable here (--process-limit refuses to run)",
        },
        l.default_process_limit
    );
    println!(
        "  pids cgroup: {} ({})",
        yes_no(l.pids_cgroup),
        l.pids_cgroup_detail
    );
    println!("  RLIMIT_NPROC: {}", l.rlimit_nproc_detail);
    println!("  memory: {}", l.memory);
}
