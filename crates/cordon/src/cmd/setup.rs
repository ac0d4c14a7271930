//! `cordon setup claude-code|codex|gemini`: merge cordon's hook entries into the
//! harness's settings file (`cordon_hook::setup` decides and writes; this parses and
//! prints).

use crate::cmd::hook::HarnessArg;
use crate::exit::{Code, Exit};
use cordon_hook::Harness;
use cordon_hook::setup::{self, Homes, Scope};
use std::path::PathBuf;

/// Set cordon up for a harness (merge its hook entries into the harness's settings), or
/// install the AppArmor profile that gives this binary the full tier on Ubuntu.
#[derive(clap::Args)]
#[command(
    after_help = "Other entries of the file are kept; earlier cordon entries are replaced; \
running it again changes nothing. A file that is not valid JSON settings is left untouched \
(exit 2). Exit status: 0 done (or nothing to do), 2 the file cannot be merged, 125 it cannot be written."
)]
pub struct SetupArgs {
    /// What to set up: a harness, or `apparmor`.
    #[arg(value_enum)]
    target: Target,
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
    /// With `apparmor`: the binary the profile is for (default: this one). The package
    /// builds its profile with `--path /usr/bin/cordon --dry-run`.
    #[arg(long, value_name = "FILE")]
    path: Option<PathBuf>,
}

/// What `cordon setup` sets up.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
enum Target {
    /// Claude Code's settings.
    ClaudeCode,
    /// Codex's `hooks.json`.
    Codex,
    /// Gemini CLI's settings.
    Gemini,
    /// The AppArmor profile that lets this binary create user namespaces (Ubuntu 24.04
    /// and later restrict them); needs root once.
    Apparmor,
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
    let harness = match args.target {
        Target::ClaudeCode => Harness::from(HarnessArg::ClaudeCode),
        Target::Codex => Harness::from(HarnessArg::Codex),
        Target::Gemini => Harness::from(HarnessArg::Gemini),
        Target::Apparmor => return apparmor(args.path, args.dry_run),
    };
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

/// `cordon setup apparmor`: write the profile for this binary (or `--path`) and say how
/// to load it; `--dry-run` prints it.
fn apparmor(path: Option<PathBuf>, dry_run: bool) -> anyhow::Result<u8> {
    use cordon_sandbox::apparmor;
    let exe = match path {
        Some(p) => p,
        None => std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(|e| Exit::new(Code::Failed, format!("cannot find the cordon binary: {e}")))?,
    };
    let profile =
        apparmor::profile_for(&exe).map_err(|e| Exit::new(Code::Invalid, e.to_string()))?;
    let file = profile.file.display();
    if dry_run {
        print!("{}", profile.text);
        eprintln!("cordon: dry run: {file} was not written");
        return Ok(0);
    }
    apparmor::install(&profile, &exe).map_err(|e| Exit::new(Code::Failed, e.to_string()))?;
    println!(
        "{file}: written; it lets {} create user namespaces and grants nothing else",
        exe.display()
    );
    println!("load it now with: apparmor_parser -r {file}");
    Ok(0)
}
