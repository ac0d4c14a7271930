//! Resource limits that must hold whoever runs cordon. For now: the size of the
//! sandbox's scratch space.
//!
//! # The scratch space
//!
//! `/tmp`, `/var/tmp` and `/dev/shm` share one tmpfs (see `plan.rs`), whose pages are
//! the host's memory and are not counted by `RLIMIT_AS`. Its default size is a quarter
//! of the host's RAM, at most [`DEFAULT_TMP_SIZE_MAX`], and no more than the address
//! space limit when one is set.

/// The largest default size of the scratch space (`/tmp`, `/var/tmp`, `/dev/shm`).
pub const DEFAULT_TMP_SIZE_MAX: u64 = 4 << 30;

/// The smallest scratch space accepted (a tmpfs of size 0 would be unbounded).
pub const MIN_TMP_SIZE: u64 = 1 << 20;

/// The host's RAM in bytes.
pub fn host_memory() -> Option<u64> {
    nix::sys::sysinfo::sysinfo().ok().map(|i| i.ram_total())
}

/// The default size of the scratch space: a quarter of the host's RAM, at most
/// [`DEFAULT_TMP_SIZE_MAX`], at most `memory_limit` (the address-space limit) when
/// given, and at least [`MIN_TMP_SIZE`].
pub fn default_tmp_size(memory_limit: Option<u64>) -> u64 {
    let quarter = host_memory().map_or(DEFAULT_TMP_SIZE_MAX, |m| m / 4);
    quarter
        .min(DEFAULT_TMP_SIZE_MAX)
        .min(memory_limit.unwrap_or(u64::MAX))
        .max(MIN_TMP_SIZE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_space_is_bounded() {
        let d = default_tmp_size(None);
        assert!((MIN_TMP_SIZE..=DEFAULT_TMP_SIZE_MAX).contains(&d));
        assert_eq!(default_tmp_size(Some(64 << 20)), (64 << 20).min(d));
        assert_eq!(default_tmp_size(Some(1)), MIN_TMP_SIZE);
    }
}
