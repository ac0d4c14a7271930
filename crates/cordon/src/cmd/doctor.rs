//! `cordon doctor`: what containment this host can give, and why.

/// Arguments of `cordon doctor`.
#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Run `cordon doctor`.
pub fn run(args: DoctorArgs) -> anyhow::Result<u8> {
    let host = cordon_sandbox::probe_host();
    let limits = cordon_sandbox::probe_limits();
    if args.json {
        let mut json = serde_json::to_value(&host)?;
        if let Some(obj) = json.as_object_mut() {
            obj.insert("limits".into(), serde_json::to_value(&limits)?);
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
