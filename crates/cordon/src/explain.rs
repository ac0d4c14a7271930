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
            // Line by line: the terminal cleaner escapes newlines inside one string.
            Ok(s) => {
                for line in s.lines() {
                    eprintln!("  {}", clean(line));
                }
            }
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

/// Say on stderr where the changes a run did not merge wait: a set held whole
/// (`--hold`), changes held for review, conflicts with host changes.
pub fn print_changes(changes: &cordon_sandbox::ChangesReport, blocked: &[cordon_sandbox::Blocked]) {
    use cordon_sandbox::BlockedKind;
    let count = |k: BlockedKind| blocked.iter().filter(|b| b.kind == k).count();
    if changes.caches > 0 {
        eprintln!(
            "cordon: {} compiled cache file{} (__pycache__, *.pyc) not merged: the host's tools rebuild {} from the source",
            changes.caches,
            if changes.caches == 1 { "" } else { "s" },
            if changes.caches == 1 { "it" } else { "them" }
        );
    }
    let spared = count(BlockedKind::HostKept);
    if spared > 0 {
        eprintln!(
            "cordon: kept {spared} host entr{} that the run deleted: the host changed {} during the run",
            if spared == 1 { "y" } else { "ies" },
            if spared == 1 { "it" } else { "them" }
        );
    }
    let Some(id) = &changes.change_set else {
        return;
    };
    let id = clean(id);
    if changes.held {
        eprintln!(
            "cordon: the run's changes are held for review: `cordon changes show {id}`, then `cordon changes apply {id}` or `cordon changes discard {id}`"
        );
        return;
    }
    let (held, conflicts) = (count(BlockedKind::Held), count(BlockedKind::Conflict));
    if held > 0 {
        eprintln!(
            "cordon: {held} change{} held for review: `cordon changes show {id}`, then `cordon changes apply {id}` or `cordon changes discard {id}`",
            if held == 1 { "" } else { "s" },
        );
    }
    if conflicts > 0 {
        eprintln!(
            "cordon: {conflicts} change{} not merged because the host changed the same entries during the run (the host's versions were kept): `cordon changes show {id}`",
            if conflicts == 1 { "" } else { "s" }
        );
    }
}

/// Each name the command looked up where none resolves, with the way to allow it (the
/// first few; the report lists them all).
pub fn print_lookups(lookups: &[cordon_store::ContainmentBlock], reported: bool) {
    const SHOWN: usize = 5;
    for b in lookups.iter().take(SHOWN) {
        eprintln!("cordon: network: {} {}", clean(&b.target), clean(&b.detail));
    }
    if lookups.len() > SHOWN {
        eprintln!(
            "cordon: network: {} more names were looked up{}",
            lookups.len() - SHOWN,
            if reported {
                ""
            } else {
                "; --report FILE lists them"
            }
        );
    }
}
