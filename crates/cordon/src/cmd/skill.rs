//! `cordon skill inspect|install`: vet a skill package, and install it atomically.
//!
//! Printing only: the checks, staging and the final rename live in `cordon-skill`.

use crate::exit::{Code, Exit};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_skill::{
    InspectOptions, InstallOptions, Limits, Severity, SkillError, SourceInfo, inspect, install,
};
use std::path::PathBuf;

/// Exit codes of `cordon skill`, for `--help`.
const SKILL_CODES: &str = "Exit status: 0 acceptable (installed, for install); 3 needs a \
human's review (install: pass --yes after reviewing); 4 refused; 2 invalid input (not a \
directory, zip, tar or tar.gz, or unreadable); 1 internal error.";

/// Subcommands of `cordon skill`.
#[derive(clap::Subcommand)]
pub enum SkillCommand {
    /// Check a package (a directory, .zip, .tar, .tar.gz/.tgz) and report every finding.
    #[command(after_help = SKILL_CODES)]
    Inspect {
        #[command(flatten)]
        common: Common,
    },
    /// Check a package and install it as DIR/NAME, staged beside it and renamed into place.
    #[command(after_help = SKILL_CODES)]
    Install {
        #[command(flatten)]
        common: Common,
        /// The directory that holds installed skills.
        #[arg(long, value_name = "DIR")]
        into: PathBuf,
        /// Replace an installation of the same name (shows what changes first).
        #[arg(long)]
        upgrade: bool,
        /// I have reviewed the findings and the changed scripts: install anyway
        /// (never overrides a refusal).
        #[arg(long)]
        yes: bool,
        /// Record this URL as the source in the manifest (default: the path given).
        #[arg(long, value_name = "URL")]
        source_url: Option<String>,
        /// Record this revision (commit, tag, version) in the manifest.
        #[arg(long)]
        revision: Option<String>,
    },
}

/// Options shared by both subcommands.
#[derive(clap::Args)]
pub struct Common {
    /// The package.
    src: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Permit symbolic links whose target stays inside the package.
    #[arg(long)]
    allow_internal_symlinks: bool,
    /// Most entries (files, directories, links) a package may hold.
    #[arg(long, value_name = "N")]
    max_files: Option<u64>,
    /// Most bytes one file may unpack to.
    #[arg(long, value_name = "BYTES")]
    max_file_bytes: Option<u64>,
    /// Most bytes the whole package may unpack to.
    #[arg(long, value_name = "BYTES")]
    max_total_bytes: Option<u64>,
}

impl Common {
    fn options(&self) -> InspectOptions {
        let d = Limits::default();
        InspectOptions {
            limits: Limits {
                max_entries: self.max_files.unwrap_or(d.max_entries),
                max_file_bytes: self.max_file_bytes.unwrap_or(d.max_file_bytes),
                max_total_bytes: self.max_total_bytes.unwrap_or(d.max_total_bytes),
                ..d
            },
            allow_internal_symlinks: self.allow_internal_symlinks,
        }
    }
}

/// Run `cordon skill`.
pub fn run(cmd: SkillCommand) -> anyhow::Result<u8> {
    match cmd {
        SkillCommand::Inspect { common } => {
            let r = inspect(&common.src, &common.options()).map_err(to_exit)?;
            if common.json {
                let mut v = serde_json::to_value(&r)?;
                v["verdict"] = serde_json::to_value(r.verdict())?;
                println!("{v}");
            } else {
                print_table(&r.findings);
                println!(
                    "{}: {} ({} entries, {} bytes unpacked)",
                    clean(r.name().unwrap_or("package")),
                    r.verdict(),
                    r.entries,
                    r.unpacked_bytes
                );
            }
            Ok(code(r.verdict()))
        }
        SkillCommand::Install {
            common,
            into,
            upgrade,
            yes,
            source_url,
            revision,
        } => {
            let location = source_url.unwrap_or_else(|| common.src.display().to_string());
            let opts = InstallOptions {
                inspect: common.options(),
                into,
                source: SourceInfo { location, revision },
                upgrade,
                yes,
            };
            let done = install(&common.src, &opts).map_err(to_exit)?;
            let verdict = done.verdict();
            if common.json {
                let mut v = serde_json::to_value(&done)?;
                v["verdict"] = serde_json::to_value(verdict)?;
                println!("{v}");
            } else {
                print_table(&done.inspection.findings);
                match (&done.target, done.installed) {
                    (Some(t), true) => println!("installed at {}", clean(&t.display().to_string())),
                    _ => println!("not installed: {verdict}"),
                }
            }
            Ok(match (done.installed, verdict) {
                (true, _) => Code::Allow.get(),
                // Installation refused for a reason that is not a finding's (should not
                // happen): never report success.
                (false, Severity::Pass) => Code::Deny.get(),
                (false, v) => code(v),
            })
        }
    }
}

fn code(v: Severity) -> u8 {
    match v {
        Severity::Pass => Code::Allow,
        Severity::Review => Code::Ask,
        _ => Code::Deny,
    }
    .get()
}

fn to_exit(e: SkillError) -> anyhow::Error {
    let code = match e {
        SkillError::NotAPackage { .. } => Code::Invalid,
        _ => Code::Internal,
    };
    Exit::new(code, e.to_string()).into()
}

fn print_table(findings: &[cordon_skill::Finding]) {
    let mut rows: Vec<_> = findings.iter().collect();
    rows.sort_by_key(|f| std::cmp::Reverse(f.verdict));
    println!("{:<7} {:<19} {:<28} MESSAGE", "VERDICT", "CHECK", "ENTRY");
    for f in rows {
        let entry = clean(f.entry.as_deref().unwrap_or("-"));
        println!(
            "{:<7} {:<19} {:<28} {}",
            f.verdict.to_string(),
            f.check.as_str(),
            entry,
            clean(&f.message)
        );
    }
}
