//! Printing what `--explain` shows and the fixes of a refusal (shared by `check` and
//! `exec`). Untrusted text (paths, commands) is stripped of control characters.

use cordon_gate::{Decided, Fix};
use cordon_policy::Policy;
use cordon_policy::terminal::sanitize_for_terminal as clean;

/// The config files, ignored settings, which defaults table decided, the parsed shell
/// structure and the step-by-step trail, on stderr.
pub fn print(policy: &Policy, d: &Decided) {
    eprintln!(
        "workspace: {}",
        clean(&policy.workspace().display().to_string())
    );
    for (layer, file) in policy.files() {
        eprintln!(
            "config ({}): {}",
            layer.name(),
            clean(&file.display().to_string())
        );
    }
    for n in policy.notes() {
        eprintln!("note: {}", clean(n));
    }
    eprintln!("mode: {}", policy.mode().as_str());
    eprintln!("approval: {}", policy.approval().as_str());
    eprintln!(
        "containment: {} (step 8 reads {})",
        d.containment,
        if d.verdict.contained {
            "[contained] for what containment enforces, [defaults] for the rest"
        } else {
            "[defaults]"
        }
    );
    if let Some(a) = &d.ops.analysis {
        eprintln!("parsed shell structure:");
        match serde_json::to_string_pretty(a) {
            Ok(s) => eprintln!("{}", clean(&s)),
            Err(e) => eprintln!("(cannot render: {e})"),
        }
    }
    eprintln!("trail:");
    for t in &d.verdict.trail {
        eprintln!("  {}", clean(t));
    }
}

/// Each fix of a refusal on its own line of stderr.
pub fn print_fixes(fixes: &[Fix]) {
    for f in fixes {
        eprintln!("cordon: hint: {}", clean(&f.to_string()));
    }
}
