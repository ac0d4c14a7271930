//! `cordon completions SHELL` and `cordon man --dir DIR`: shell completions and man
//! pages generated from the command-line definition itself (clap's own generators), so
//! they say what `--help` says.

use clap::CommandFactory;
use cordon_fs::Dir;
use std::path::{Path, PathBuf};

/// Print the completion script of a shell.
#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Write man pages for cordon and every subcommand into a directory.
#[derive(clap::Args)]
pub struct ManArgs {
    /// Directory to write `cordon.1`, `cordon-exec.1`, `cordon-approvals-approve.1`, … into
    /// (created if missing; pages already there are replaced).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
}

/// The whole command line, every deferred subcommand built.
fn command() -> clap::Command {
    let mut cmd = crate::Cli::command();
    cmd.build();
    cmd
}

/// `cordon completions SHELL`.
pub fn run_completions(args: CompletionsArgs) -> anyhow::Result<u8> {
    let mut cmd = command();
    clap_complete::generate(
        args.shell,
        &mut cmd,
        "cordon",
        &mut std::io::stdout().lock(),
    );
    Ok(0)
}

/// `cordon man --dir DIR`: prints the path of each page written.
pub fn run_man(args: ManArgs) -> anyhow::Result<u8> {
    let dir = Dir::create_ambient(&args.dir, 0o755)
        .map_err(|e| anyhow::anyhow!("cannot use {} for the man pages: {e}", args.dir.display()))?;
    let mut written = Vec::new();
    write_pages(&dir, &command(), "cordon", &mut written)?;
    for name in written {
        println!("{}", args.dir.join(name).display());
    }
    Ok(0)
}

/// The page of `cmd` under `name`, then those of its subcommands (`name-sub`), but for
/// clap's own `help`.
fn write_pages(
    dir: &Dir,
    cmd: &clap::Command,
    name: &str,
    written: &mut Vec<String>,
) -> anyhow::Result<()> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name.to_string())
        .render(&mut roff)?;
    let file = format!("{name}.1");
    dir.write(Path::new(&file), &roff, 0o644)
        .map_err(|e| anyhow::anyhow!("cannot write {file}: {e}"))?;
    written.push(file);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(dir, sub, &format!("{name}-{}", sub.get_name()), written)?;
    }
    Ok(())
}
