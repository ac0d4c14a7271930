//! The one duration grammar of every surface (`exec --timeout`, `--slot-wait`, session
//! expiry, …): a number, whole or decimal, followed by a unit (`ms`, `s`, `m`, `h`, `d`);
//! a bare number is seconds: `500ms`, `30`, `1.5h`, `7d`. Less than a millisecond and
//! more than about 31 years are refused.

use std::time::Duration;

/// Why a text is not a duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// No number, or not one: `h`, `1.2.3s`, `-1`.
    NotANumber(String),
    /// A unit other than `ms`, `s`, `m`, `h`, `d`.
    UnknownUnit(String),
    /// Zero, or longer than the bound.
    OutOfRange(String),
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotANumber(s) => write!(
                f,
                "`{s}` is not a duration: expected a number and a unit, e.g. 500ms, 30s, 5m, 1.5h or 7d"
            ),
            Self::UnknownUnit(s) => {
                write!(f, "`{s}` is not a duration: use the unit ms, s, m, h or d")
            }
            Self::OutOfRange(s) => write!(
                f,
                "`{s}` is not a usable duration: it must be at least 1ms and at most 1000000000s"
            ),
        }
    }
}

impl std::error::Error for DurationError {}

/// The longest duration accepted, in seconds.
const MAX_SECONDS: f64 = 1e9;

/// Parse a duration in the grammar above.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let s = text.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    // `f64::from_str` also reads `inf`, `NaN` and exponents: only digits and one dot here.
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return Err(DurationError::NotANumber(s.into()));
    }
    let n: f64 = num
        .parse()
        .map_err(|_| DurationError::NotANumber(s.into()))?;
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return Err(DurationError::UnknownUnit(s.into())),
    };
    let secs = n * scale;
    if !(0.001..=MAX_SECONDS).contains(&secs) {
        return Err(DurationError::OutOfRange(s.into()));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_and_a_bare_number() {
        assert_eq!(parse("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse(" 90s "), Ok(Duration::from_secs(90)));
    }

    #[test]
    fn what_is_not_a_duration_says_why() {
        for bad in [
            "", "h", ".", "1.2.3s", "-1", "+1s", "1e9", "inf", "NaN", "1 s",
        ] {
            assert!(
                matches!(
                    parse(bad),
                    Err(DurationError::NotANumber(_) | DurationError::UnknownUnit(_))
                ),
                "{bad:?} → {:?}",
                parse(bad)
            );
        }
        assert!(matches!(parse("1w"), Err(DurationError::UnknownUnit(_))));
        assert!(matches!(
            parse("5 parsecs"),
            Err(DurationError::UnknownUnit(_))
        ));
        for bad in ["0", "0ms", "0.0001ms", "99999999999d"] {
            assert!(
                matches!(parse(bad), Err(DurationError::OutOfRange(_))),
                "{bad:?} → {:?}",
                parse(bad)
            );
        }
    }
}
