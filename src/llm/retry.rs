//! When a failed model call is tried again, and how long to wait first.
//!
//! Worth retrying: 429 (rate limited), any 5xx (the provider's trouble, including Anthropic's
//! 529 "overloaded") and a connection that could not be made or broke before the response
//! began. Not retried: other 4xx (the request itself is wrong), replies that cannot be read,
//! and a read timeout (the model may still be generating, and a retry would pay for it again).
//!
//! The wait is exponential (0.5 s, 1 s, 2 s, ... capped at 8 s) with up to 25% of it taken
//! off at random, so that clients rate-limited together do not come back together. A
//! `Retry-After` (seconds or an HTTP date) or `retry-after-ms` header of at most 60 s is
//! waited exactly; a longer one is not waited (the call fails when its retries are used up
//! rather than hanging for minutes).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const BASE: Duration = Duration::from_millis(500);
const CAP: Duration = Duration::from_secs(8);
/// The longest server-asked wait honoured.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

pub fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait before retry number `retry` (0 for the first retry). `server` is what the
/// response asked for; `jitter` a number in [0, 1).
pub fn delay(retry: u32, server: Option<Duration>, jitter: f64) -> Duration {
    if let Some(asked) = server.filter(|d| *d <= MAX_RETRY_AFTER) {
        return asked;
    }
    let exp = BASE.saturating_mul(1u32 << retry.min(16)).min(CAP);
    exp.mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
}

/// The wait a response asks for: `retry-after-ms` (milliseconds, OpenAI's) first, then
/// `retry-after` as seconds (fractions accepted) or as an HTTP date.
pub fn retry_after(ms: Option<&str>, header: Option<&str>, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = header?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form `Retry-After` dates take.
fn http_date(text: &str) -> Option<SystemTime> {
    let mut parts = text.split_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month_name = parts.next()?;
    let month = MONTHS.iter().position(|m| *m == month_name)? as u64 + 1;
    let year: u64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || year < 1970 || h > 23 || m > 59 {
        return None;
    }
    // Days since 1970-01-01 of a civil date (the proleptic Gregorian calendar).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(UNIX_EPOCH + Duration::from_secs(days * 86_400 + h * 3600 + m * 60 + s.min(60)))
}

/// A number in [0, 1), different on every call (from the standard library's per-process
/// random hash keys; no cryptographic strength is needed for a jitter).
pub fn jitter() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// 64 random bits, different on every call (not for secrets).
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_up_to_the_cap_and_jitter_only_shortens_it() {
        assert_eq!(delay(0, None, 0.0), Duration::from_millis(500));
        assert_eq!(delay(1, None, 0.0), Duration::from_secs(1));
        assert_eq!(delay(3, None, 0.0), Duration::from_secs(4));
        assert_eq!(delay(9, None, 0.0), CAP);
        assert_eq!(delay(40, None, 0.0), CAP);
        assert_eq!(delay(0, None, 1.0), Duration::from_millis(375));
    }

    #[test]
    fn a_server_asked_wait_is_honoured_up_to_a_minute() {
        let asked = Some(Duration::from_secs(3));
        assert_eq!(delay(0, asked, 0.7), Duration::from_secs(3));
        assert_eq!(delay(0, Some(Duration::ZERO), 0.7), Duration::ZERO);
        let too_long = Some(Duration::from_secs(3600));
        assert_eq!(delay(1, too_long, 0.0), Duration::from_secs(1));
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
        assert_eq!(
            retry_after(Some("250"), Some("9"), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(None, Some("2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(None, Some("0.5"), now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            retry_after(None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(None, Some("Sun, 06 Nov 1994 08:49:00 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(None, Some("soon"), now), None);
        assert_eq!(retry_after(None, Some("-3"), now), None);
        assert_eq!(retry_after(None, None, now), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        for s in [429, 500, 502, 503, 529] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 404, 422, 200] {
            assert!(!retryable_status(s), "{s}");
        }
    }

    #[test]
    fn jitter_stays_in_range_and_varies() {
        let draws: Vec<f64> = (0..64).map(|_| jitter()).collect();
        assert!(draws.iter().all(|j| (0.0..1.0).contains(j)));
        assert!(draws.windows(2).any(|w| w[0] != w[1]));
    }
}
