//! Byte sizes on the command line (`--memory-limit 512M`).

/// A size that is not one.
#[derive(Debug)]
pub struct SizeError(String);

impl std::fmt::Display for SizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SizeError {}

/// Parse `4096`, `64K`, `512M`, `2G`, `1T` (powers of 1024; `KiB`, `MB`… spellings too).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = |why: &str| SizeError(format!("invalid size `{s}`: {why}"));
    let n: u64 = num
        .parse()
        .map_err(|_| bad("expected bytes, or a number with K, M, G or T"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches('B') {
        "" => 0,
        "K" | "KI" => 10,
        "M" | "MI" => 20,
        "G" | "GI" => 30,
        "T" | "TI" => 40,
        _ => return Err(bad("use the suffix K, M, G or T")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| bad("it is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64k").unwrap(), 64 << 10);
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("1T").unwrap(), 1 << 40);
        assert!(parse_size("").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
