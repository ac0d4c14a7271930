//! `cordon review-toolset TOOLSET.toml`: which combinations of an agent's tools reach
//! all three legs of the lethal trifecta, and a split that avoids them.

use std::path::PathBuf;

use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_policy::toolset;

use crate::exit::{Code, Exit};
use crate::setup::{PolicyArgs, load};

/// Exit codes of `cordon review-toolset`.
pub const REVIEW_CODES: &str = "Exit status: 0 no combination reaches all three legs, \
3 some do (a human should look), 2 invalid toolset or config, 1 internal error.";

/// Report which combinations of an agent's tools reach the lethal trifecta.
#[derive(clap::Args)]
#[command(after_help = REVIEW_CODES)]
pub struct ReviewToolsetArgs {
    /// The toolset file (`[[tool]]` tables with `name`, optional `server`, `legs`,
    /// `contained`).
    toolset: PathBuf,
    /// Print the review as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Run `cordon review-toolset`.
pub fn run(args: ReviewToolsetArgs) -> anyhow::Result<u8> {
    // A file the user names on the command line: read as given, which may be a pipe
    // (`<(…)`), the way `cat` reads it.
    #[allow(clippy::disallowed_methods)]
    let text = std::fs::read_to_string(&args.toolset).map_err(|e| {
        Exit::new(
            Code::Invalid,
            format!("cannot read {}: {e}", args.toolset.display()),
        )
    })?;
    let set = toolset::parse(&text)
        .map_err(|e| Exit::new(Code::Invalid, format!("{}: {e}", args.toolset.display())))?;
    let policy = load(&args.policy.options()?, Code::Invalid)?;
    let r = toolset::review(&set, policy.sessions(), policy.mcp());
    if args.json {
        println!("{}", toolset::to_json(&r));
    } else {
        for t in &r.tools {
            let legs: Vec<&str> = t.legs.iter().map(|l| l.as_str()).collect();
            let legs = if legs.is_empty() {
                "-".to_string()
            } else {
                legs.join("+")
            };
            println!("{}", clean(&format!("{:<32} {legs:<26} {}", t.name, t.why)));
        }
        if r.trifectas.is_empty() {
            println!("no combination of these tools reaches all three legs");
        } else {
            println!(
                "combinations that reach private data, untrusted input and external communication:"
            );
            for c in &r.trifectas {
                println!("  {}", clean(&c.join(" + ")));
            }
            if let Some(on) = &r.split_on {
                println!("suggested split ({on}):");
                for (i, half) in r.split.iter().enumerate() {
                    println!("  agent {}: {}", i + 1, clean(&half.join(", ")));
                }
                if !r.unplaced.is_empty() {
                    println!(
                        "  fits neither (contain it without network, or declare its legs): {}",
                        clean(&r.unplaced.join(", "))
                    );
                }
            }
        }
    }
    Ok(if r.trifectas.is_empty() {
        Code::Allow
    } else {
        Code::Ask
    }
    .get())
}
