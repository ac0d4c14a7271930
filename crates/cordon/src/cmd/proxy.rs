//! `cordon proxy` (not yet built).

/// Arguments of `cordon proxy`.
#[derive(clap::Args)]
pub struct ProxyArgs {}

/// Run `cordon proxy`.
pub fn run(_args: ProxyArgs) -> anyhow::Result<u8> {
    Err(crate::exit::Exit::new(
        crate::exit::INTERNAL,
        "`cordon proxy` is not available in this build",
    )
    .into())
}
