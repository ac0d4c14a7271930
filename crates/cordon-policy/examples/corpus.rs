#![allow(clippy::disallowed_methods)] // a development tool: writes its own output files with std::fs
//! Print the shell-analysis miss rates: the attack and benign corpora of
//! `tests/corpus/` judged by the default policy, uncontained (`cordon check`) and at
//! `cordon exec`'s full tier.
//!
//! ```text
//! cargo run -q -p cordon-policy --example corpus              # the tables, from the current code
//! cargo run -q -p cordon-policy --example corpus -- --cases   # and every failing case, with the verdict's reason
//! cargo run -q -p cordon-policy --example corpus -- --all     # every case's verdicts, one line each
//! cargo run -q -p cordon-policy --example corpus -- --bless   # record the results as the new baseline and README section
//! ```
// A report tool: a broken corpus file or an unwritable baseline should stop it loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/corpus/harness.rs"]
mod harness;

use cordon_policy::Decision;
use harness::{ATTACK_CLASSES, BENIGN_CLASSES, CONTAINMENTS, Judged};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bless = args.iter().any(|a| a == "--bless");
    let cases = args.iter().any(|a| a == "--cases");
    let all = args.iter().any(|a| a == "--all");
    if let Some(a) = args
        .iter()
        .find(|a| !matches!(a.as_str(), "--bless" | "--cases" | "--all"))
    {
        eprintln!("unknown argument {a}: expected --cases, --all or --bless");
        std::process::exit(2);
    }

    let world = harness::World::new();
    let attacks = harness::attacks();
    let benign = harness::benign();
    let ja = harness::judge_all(&world, &attacks);
    let jb = harness::judge_all(&world, &benign);
    let failures = harness::failures(&ja, &jb);
    let current = harness::baseline(&attacks, &benign, &failures);

    println!("## cordon shell analysis: corpus results\n");
    println!(
        "Default policy, fake machine with HOME={} and workspace {}. `check` = judged uncontained \
         (`Containment::None`); `exec` = judged as a call `cordon exec` runs at the full tier \
         (`Containment::Full`, the `[contained]` defaults). *Allowed* attacks were neither denied \
         nor asked; *only asked* attacks were expected to be denied.\n",
        harness::HOME,
        harness::WORKSPACE
    );
    println!("{}", harness::render(&current));
    denied_benign(&jb);
    if cases {
        print_cases(&ja, &jb);
    }
    if all {
        print_all(&ja, &jb);
    }

    if bless {
        let mut text = serde_json::to_string_pretty(&current).expect("baseline serializes");
        text.push('\n');
        std::fs::write(harness::BASELINE_PATH, text).expect("write the baseline");
        eprintln!("wrote {}", harness::BASELINE_PATH);
        let readme = std::fs::read_to_string(harness::README_PATH)
            .expect("read the shell-analysis document");
        let (Some(b), Some(e)) = (
            readme.find(harness::README_BEGIN),
            readme.find(harness::README_END),
        ) else {
            panic!(
                "{} has no {} … {} section to rewrite",
                harness::README_PATH,
                harness::README_BEGIN,
                harness::README_END
            );
        };
        let new = format!(
            "{}\n{}{}",
            &readme[..b + harness::README_BEGIN.len()],
            harness::render(&current),
            &readme[e..]
        );
        std::fs::write(harness::README_PATH, new).expect("write the shell-analysis document");
        eprintln!("rewrote the corpus section of {}", harness::README_PATH);
    }
}

fn denied_benign(jb: &[Judged]) {
    for (i, (_, name)) in CONTAINMENTS.iter().enumerate() {
        let denied: Vec<&Judged> = jb
            .iter()
            .filter(|j| j.verdicts[i].decision == Decision::Deny)
            .collect();
        if !denied.is_empty() {
            println!(
                "Ordinary commands **denied** under `{name}`: {} of {}.\n",
                denied.len(),
                jb.len()
            );
        }
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', "⏎").replace('\r', "␍")
}

fn print_cases(ja: &[Judged], jb: &[Judged]) {
    for (i, (_, name)) in CONTAINMENTS.iter().enumerate() {
        println!("### Attacks not refused as expected, `{name}`\n");
        for (class, label) in ATTACK_CLASSES {
            let rows: Vec<&Judged> = ja
                .iter()
                .filter(|j| {
                    j.case.class == *class
                        && harness::attack_miss(&j.case, j.verdicts[i].decision).is_some()
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            println!("**{label}** ({})\n", rows.len());
            for j in rows {
                let v = &j.verdicts[i];
                println!(
                    "- `{}` `{}`: {} (expected {}) — {} [{}]",
                    j.case.id,
                    one_line(&j.case.cmd),
                    v.decision,
                    j.case.expected(),
                    one_line(&v.reason),
                    v.source
                );
            }
            println!();
        }
        println!("### Ordinary commands asked or denied, `{name}`\n");
        for (class, label) in BENIGN_CLASSES {
            let rows: Vec<&Judged> = jb
                .iter()
                .filter(|j| j.case.class == *class && j.verdicts[i].decision != Decision::Allow)
                .collect();
            if rows.is_empty() {
                continue;
            }
            println!("**{label}** ({})\n", rows.len());
            for j in rows {
                let v = &j.verdicts[i];
                println!(
                    "- `{}`: {} — {} [{}]",
                    one_line(&j.case.cmd),
                    v.decision,
                    one_line(&v.reason),
                    v.source
                );
            }
            println!();
        }
    }
}

fn print_all(ja: &[Judged], jb: &[Judged]) {
    println!("### Every case\n");
    println!(
        "| id | command | expected | {} |",
        CONTAINMENTS
            .iter()
            .map(|(_, n)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|---|---|{}", "---|".repeat(CONTAINMENTS.len()));
    for (j, benign) in ja
        .iter()
        .map(|j| (j, false))
        .chain(jb.iter().map(|j| (j, true)))
    {
        let want = if benign {
            "run".to_string()
        } else {
            j.case.expected().to_string()
        };
        let cols: Vec<String> = j
            .verdicts
            .iter()
            .map(|v| format!("{} [{}]", v.decision, v.source))
            .collect();
        println!(
            "| {} | `{}` | {want} | {} |",
            j.case.id,
            one_line(&j.case.cmd).replace('|', "\\|"),
            cols.join(" | ")
        );
    }
}
