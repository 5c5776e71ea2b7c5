//! When and how long to wait before sending a request again.

use std::time::Duration;

/// Retries of a request the provider refused for now (HTTP 429, 5xx) or
/// that did not reach it.
///
/// The wait doubles from [`initial`](Self::initial) up to
/// [`max_delay`](Self::max_delay); a `Retry-After` from the provider takes
/// precedence (capped at `max_delay` too, so a run never sleeps for an
/// hour on a header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: none).
    pub max_retries: u32,
    /// The first wait.
    pub initial: Duration,
    /// The longest wait.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// With `retries` retries after the first attempt (0: none).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// With `wait` as the first wait.
    pub fn initial(mut self, wait: Duration) -> Self {
        self.initial = wait;
        self
    }

    /// With `wait` as the longest wait.
    pub fn max_delay(mut self, wait: Duration) -> Self {
        self.max_delay = wait;
        self
    }

    /// The wait before retry number `retry` (0 for the first).
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .initial
            .saturating_mul(2u32.saturating_pow(retry.min(16)));
        retry_after.unwrap_or(backoff).min(self.max_delay)
    }

    /// Whether a response with `status` is worth sending again.
    pub fn retries_status(status: u16) -> bool {
        status == 429 || (500..600).contains(&status)
    }
}

/// `Retry-After` in seconds (the HTTP-date form is rare from APIs and
/// falls back to the backoff).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    value
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
        .map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_retry_after_wins_within_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(0, None), Duration::from_millis(500));
        assert_eq!(policy.delay(2, None), Duration::from_secs(2));
        assert_eq!(policy.delay(30, None), Duration::from_secs(30));
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(3600))),
            Duration::from_secs(30)
        );
        assert_eq!(parse_retry_after(" 12 "), Some(Duration::from_secs(12)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert!(RetryPolicy::retries_status(429));
        assert!(RetryPolicy::retries_status(503));
        assert!(!RetryPolicy::retries_status(400));
    }
}
