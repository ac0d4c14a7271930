//! `cordon doctor`: what containment this host can give, and why.

use crate::setup::PolicyArgs;
use cordon_policy::RequiredTier;

/// Report what containment this machine can give.
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
        }
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        println!("user namespaces: {}", yes_no(host.user_namespaces));
        if let Some(e) = &host.user_namespaces_error {
            println!("  why not: {e}");
        }
        print_userns_restrictions(&host);
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
    }
    Ok(0)
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
