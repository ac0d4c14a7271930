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
    if args.json {
        println!("{}", serde_json::to_string_pretty(&host)?);
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
        println!("resource limits: rlimits (cgroups are not used)");
        println!("tier: {}", host.tier.as_str());
        println!("  {}", host.why);
        println!("running as root: {}", yes_no(host.running_as_root));
        if host.running_as_root {
            for c in cordon_sandbox::ROOT_CAVEATS {
                println!("  {c}");
            }
        }
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
