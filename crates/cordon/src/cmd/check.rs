//! `cordon check`: judge one tool call.

/// Arguments of `cordon check`.
#[derive(clap::Args)]
pub struct CheckArgs {}

/// Run `cordon check`.
pub fn run(_args: CheckArgs) -> anyhow::Result<u8> {
    Ok(1)
}
