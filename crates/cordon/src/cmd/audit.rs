//! `cordon audit` (not yet built).

/// Subcommands of `cordon audit`.
#[derive(clap::Subcommand)]
pub enum AuditCommand {}

/// Run `cordon audit`.
pub fn run(_c: AuditCommand) -> anyhow::Result<u8> {
    Err(crate::exit::Exit::new(
        crate::exit::INTERNAL,
        "`cordon audit` is not available in this build",
    )
    .into())
}
