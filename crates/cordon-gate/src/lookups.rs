//! Name lookups the command made inside a sandbox whose network namespace is its own
//! (the sandbox's stub answered "no such name" and reported them): each gets the
//! network policy's sentence about the host, so the user reads why it failed and the
//! exact flag or config line that would let it through.

use cordon_policy::net::{Authority, NetCheck, NetworkPolicy};
use cordon_sandbox::{BlockedKind, DenialReport};

/// Replace the detail of every `lookup` record of `report` with what `policy` says of
/// the host on HTTPS's port.
pub(crate) fn explain(report: &mut DenialReport, policy: &NetworkPolicy) {
    for b in &mut report.blocked {
        if b.kind != BlockedKind::Lookup {
            continue;
        }
        let Ok(host) = Authority::parse(&b.target, 443) else {
            continue;
        };
        // A lookup names no port: a host the allowlist names on any port is allowed
        // through the proxy.
        let listed = policy.allow().iter().any(|p| p.matches_host(&host.host));
        b.detail = match policy.check_tunnel(&host) {
            refused @ NetCheck::Deny { .. } => format!("was looked up, and {}", refused.reason()),
            NetCheck::Allow | NetCheck::NotListed { .. } if listed => format!(
                "was looked up inside the sandbox, where no name resolves; {} is allowed only through cordon's proxy, which this program did not use (it reads HTTPS_PROXY and HTTP_PROXY)",
                b.target
            ),
            refused => format!("was looked up, and {}", refused.reason()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::NetworkSettings;
    use cordon_sandbox::Blocked;

    fn lookup(name: &str) -> Blocked {
        Blocked {
            kind: BlockedKind::Lookup,
            target: name.into(),
            detail: String::new(),
        }
    }

    fn explained(allow: &[&str], name: &str) -> String {
        let mut settings = NetworkSettings::default();
        settings.allow = allow.iter().map(|a| (*a).to_string()).collect();
        let policy = NetworkPolicy::from_settings(&settings).unwrap_or_default();
        let mut report = DenialReport {
            blocked: vec![lookup(name)],
            ..DenialReport::default()
        };
        explain(&mut report, &policy);
        report.blocked[0].detail.clone()
    }

    #[test]
    fn a_lookup_names_the_way_in() {
        assert_eq!(
            explained(&[], "registry.npmjs.org"),
            "was looked up, and registry.npmjs.org:443 cannot be reached: no network destination is allowed; to allow it, add `allow = [\"registry.npmjs.org\"]` under `[network]` in the policy file (or pass `--allow-net registry.npmjs.org` to `cordon exec`)"
        );
        assert!(
            explained(&["github.com"], "evil.example")
                .contains("evil.example is not on the network allowlist; to allow it, add `allow = [\"evil.example\"]`")
        );
        assert!(explained(&["github.com"], "github.com").contains("did not use"));
        // Allowed on another port: still the proxy's to reach, not "port 443 refused".
        assert!(explained(&["localhost:8443"], "localhost").contains("did not use"));
    }
}
