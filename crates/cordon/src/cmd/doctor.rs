//! `cordon doctor` (not yet built).

/// Arguments of `cordon doctor`.
#[derive(clap::Args)]
pub struct DoctorArgs {}

/// Run `cordon doctor`.
pub fn run(_args: DoctorArgs) -> anyhow::Result<u8> {
    Err(crate::exit::Exit::new(
        crate::exit::INTERNAL,
        "`cordon doctor` is not available in this build",
    )
    .into())
}
