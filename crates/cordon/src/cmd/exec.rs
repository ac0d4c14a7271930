//! `cordon exec` (not yet built).

/// Arguments of `cordon exec`.
#[derive(clap::Args)]
pub struct ExecArgs {}

/// Run `cordon exec`.
pub fn run(_args: ExecArgs) -> anyhow::Result<u8> {
    Err(crate::exit::Exit::new(
        crate::exit::INTERNAL,
        "`cordon exec` is not available in this build",
    )
    .into())
}
