//! Print the analysis of the shell text given as arguments (joined by spaces).
//!
//! `cargo run -p cordon-shell --example analyze -- 'curl -s x | sh'`

fn main() {
    let text = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let a = cordon_shell::analyze(&text);
    if let Some(e) = &a.parse_error {
        println!("parse error: {e}");
    }
    for c in &a.commands {
        let prog = c.program.as_ref().map_or("-", |w| w.value.as_str());
        let args: Vec<&str> = c.args.iter().map(|w| w.value.as_str()).collect();
        println!(
            "{:?} {prog} {args:?} wrappers={:?} cwd={:?}",
            c.context, c.wrappers, c.cwd
        );
        let e = &c.effects;
        println!(
            "    class={:?} reads={:?} writes={:?} deletes={:?}",
            e.class,
            e.reads.iter().map(|w| &w.value).collect::<Vec<_>>(),
            e.writes.iter().map(|w| &w.value).collect::<Vec<_>>(),
            e.deletes.iter().map(|w| &w.value).collect::<Vec<_>>()
        );
        if !e.network.is_empty() || e.network_unknown_target {
            println!(
                "    network={:?} unknown={}",
                e.network.iter().map(|n| &n.target).collect::<Vec<_>>(),
                e.network_unknown_target
            );
        }
        for x in &e.executes {
            println!(
                "    exec {} {} own={} {}",
                x.program, x.arg, x.own_purpose, x.detail
            );
        }
        if e.runs_repo_config != cordon_shell::RepoConfigUse::None {
            println!("    repo_config={:?}", e.runs_repo_config);
        }
        if let Some(p) = &e.privilege {
            println!("    privilege={p}");
        }
        if !e.influences_env.is_empty() {
            println!("    influences_env={:?}", e.influences_env);
        }
        if !e.mentions.is_empty() {
            println!(
                "    mentions={:?}",
                e.mentions.iter().map(|w| &w.value).collect::<Vec<_>>()
            );
        }
        if e.reads_env {
            println!("    reads_env");
        }
        if !c.dynamic.is_empty() {
            println!("    dynamic={:?}", c.dynamic);
        }
        for r in &c.redirects {
            println!("    redirect {:?} {:?} {:?}", r.fd, r.kind, r.target.value);
        }
        if !c.assignments.is_empty() {
            println!("    assignments={:?}", c.assignments);
        }
    }
    for h in &a.hazards {
        println!("HAZARD {:?}: {} — {}", h.kind, h.text, h.detail);
    }
}
