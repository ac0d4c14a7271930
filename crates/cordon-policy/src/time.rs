//! Instants as cordon writes them in records and messages.

use std::time::SystemTime;

/// A time as RFC 3339 in UTC, to the second (`2026-01-02T03:04:05Z`).
pub fn format_time(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn to_the_second_in_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_767_323_045_900);
        assert_eq!(format_time(t), "2026-01-02T03:04:05Z");
    }
}
