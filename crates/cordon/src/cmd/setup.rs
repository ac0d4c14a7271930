//! `cordon setup claude-code|codex|gemini`: merge cordon's hook entries into the
//! harness's settings file (`cordon_hook::setup` decides and writes; this parses and
//! prints).

use crate::cmd::hook::HarnessArg;
use crate::exit::{Code, Exit};
use cordon_hook::Harness;
use cordon_hook::setup::{self, Homes, Scope};
use std::path::PathBuf;

/// Arguments of `cordon setup`.
#[derive(clap::Args)]
#[command(
    after_help = "Other entries of the file are kept; earlier cordon entries are replaced; \
running it again changes nothing. A file that is not valid JSON settings is left untouched \
(exit 2). Exit status: 0 done (or nothing to do), 2 the file cannot be merged, 125 it cannot be written."
)]
pub struct SetupArgs {
    /// The harness to set up.
    #[arg(value_enum)]
    harness: HarnessArg,
    /// Write the user's settings (every project; the default).
    #[arg(long, conflicts_with = "project")]
    user: bool,
    /// Write the settings of the project at DIR instead.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Run the harness's shell calls that cordon allows under containment sandboxed
    /// (`--contain` on the pre-tool entry; Claude Code and Gemini CLI).
    #[arg(long)]
    contain: bool,
    /// Print the file as it would be written, and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Where the harnesses keep their files, from the environment.
pub(crate) fn homes() -> anyhow::Result<Homes> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .ok_or_else(|| Exit::new(Code::Invalid, "HOME must be set to an absolute path"))?;
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    Ok(Homes { home, codex_home })
}

/// Run `cordon setup`.
pub fn run(args: SetupArgs) -> anyhow::Result<u8> {
    use cordon_policy::terminal::path_for_terminal as shown;
    let harness = Harness::from(args.harness);
    let homes = homes()?;
    let here = std::env::current_dir().map_err(|e| {
        Exit::new(
            Code::Invalid,
            format!("cannot read the current directory: {e}"),
        )
    })?;
    let scope = match &args.project {
        Some(d) => Scope::Project(std::fs::canonicalize(here.join(d)).map_err(|e| {
            Exit::new(
                Code::Invalid,
                format!("the project directory {} cannot be used: {e}", d.display()),
            )
        })?),
        None => Scope::User,
    };
    let program = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Exit::new(Code::Failed, format!("cannot find the cordon binary: {e}")))?;
    let plan = setup::plan(harness, &scope, &homes, &program, args.contain)
        .map_err(|e| Exit::new(Code::Invalid, e.to_string()))?;
    let file = shown(&plan.file);
    for n in &plan.notes {
        eprintln!("cordon: {n}");
    }
    if args.dry_run {
        print!("{}", plan.text);
        eprintln!("cordon: dry run: {file} was not written");
    } else if plan.unchanged {
        println!("{file}: cordon's hook is already set up; nothing changed");
    } else {
        setup::write(&plan).map_err(|e| Exit::new(Code::Failed, e.to_string()))?;
        println!(
            "{file}: {} {} cordon entr{}{}",
            if plan.existed { "updated," } else { "created," },
            plan.added.len(),
            if plan.added.len() == 1 { "y" } else { "ies" },
            if plan.replaced > 0 {
                format!(" (replacing {} earlier)", plan.replaced)
            } else {
                String::new()
            }
        );
        for (event, command) in &plan.added {
            println!("  {event}: {command}");
        }
    }
    if let Some(m) = &plan.manual {
        println!("one step cordon cannot take: {m}");
    }
    Ok(0)
}
