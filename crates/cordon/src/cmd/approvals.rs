//! `cordon approvals` (not yet built).

/// Subcommands of `cordon approvals`.
#[derive(clap::Subcommand)]
pub enum ApprovalsCommand {}

/// Run `cordon approvals`.
pub fn run(_c: ApprovalsCommand) -> anyhow::Result<u8> {
    Err(crate::exit::Exit::new(
        crate::exit::INTERNAL,
        "`cordon approvals` is not available in this build",
    )
    .into())
}
