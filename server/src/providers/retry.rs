//! The retry policy of the official OpenAI and Anthropic SDKs, as pure functions: which
//! failures are worth another attempt, and how long to wait before it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first backoff; each further retry doubles it.
const INITIAL_DELAY: Duration = Duration::from_millis(500);
/// Backoff never grows past this.
const MAX_DELAY: Duration = Duration::from_secs(8);
/// A server-requested delay is honoured only up to this; past it (or negative) we fall back
/// to our own backoff, as the SDKs do, rather than leave an editor waiting for minutes.
const MAX_SERVER_DELAY: Duration = Duration::from_secs(60);

/// What went wrong with one attempt, as far as the retry decision cares.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Failure<'a> {
    /// No connection (refused, unreachable, DNS, connect timeout), or the connection
    /// closed before any response header arrived.
    Connect,
    /// The call's time ran out before the response headers arrived.
    TimeoutBeforeHeaders,
    /// The call's time ran out while the body was arriving: the server is answering but
    /// too slowly, and a rerun would only double the wait.
    TimeoutAfterHeaders,
    /// An HTTP error status with its body.
    Status { status: u16, body: &'a str },
    /// The body broke off (or ended without its end marker, or carried an error event)
    /// before any text or tool call was decoded: nothing was shown, so a rerun is clean.
    BrokenBeforeOutput,
    /// The body broke off after output was decoded: a rerun could produce a different
    /// answer than the one already half-received, so the call fails instead.
    BrokenAfterOutput,
    /// The reply arrived whole but does not decode: the same request would get the same.
    Unusable,
}

/// Whether a failed attempt may be retried (the caller also checks the retry budget).
pub(crate) fn is_retryable(failure: Failure<'_>) -> bool {
    match failure {
        Failure::Connect | Failure::TimeoutBeforeHeaders | Failure::BrokenBeforeOutput => true,
        Failure::TimeoutAfterHeaders | Failure::BrokenAfterOutput | Failure::Unusable => false,
        Failure::Status { status, body } => is_retryable_status(status, body),
    }
}

fn is_retryable_status(status: u16, body: &str) -> bool {
    match status {
        // An exhausted quota or billing limit is a 429 too, but waiting will not fix it.
        429 => !body.contains("insufficient_quota"),
        // 408 request timeout, 409 lock conflict; 529 is Anthropic's "overloaded".
        408 | 409 | 529 => true,
        // The SDKs retry every server error, except one whose body says the request itself
        // failed validation: llama-cpp-python answers a message shape its schema rejects
        // with a 500 carrying pydantic's "N validation errors", and the same request can
        // never pass.
        500..=599 => !is_validation_failure(body),
        _ => false,
    }
}

/// Whether an error body is pydantic's report of a request that failed validation
/// (`"1 validation error for …"`, `"7 validation errors:"`), which is deterministic.
fn is_validation_failure(body: &str) -> bool {
    body.match_indices(" validation error").any(|(at, _)| {
        body[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// How long to wait before retry number `retries_done + 1`: the server's `retry-after-ms`
/// or `retry-after` (seconds or an HTTP date) when it lies within 0..=60 s, otherwise
/// exponential backoff from 0.5 s, capped at 8 s, shortened by up to a quarter at random
/// (`random` in 0..1) so that many clients do not retry in lockstep.
pub(crate) fn retry_delay(
    retries_done: u32,
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
    random: f64,
) -> Duration {
    server_requested_delay(retry_after_ms, retry_after, now)
        .unwrap_or_else(|| backoff(retries_done, random))
}

fn server_requested_delay(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    let from_ms = retry_after_ms
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|ms| ms / 1000.0);
    let seconds = from_ms.or_else(|| {
        let value = retry_after?.trim();
        match value.parse::<f64>() {
            Ok(seconds) => Some(seconds),
            Err(_) => {
                let at = parse_http_date(value)?;
                Some(match at.duration_since(now) {
                    Ok(ahead) => ahead.as_secs_f64(),
                    Err(behind) => -behind.duration().as_secs_f64(),
                })
            }
        }
    })?;
    if seconds.is_finite() && (0.0..=MAX_SERVER_DELAY.as_secs_f64()).contains(&seconds) {
        Some(Duration::from_secs_f64(seconds))
    } else {
        None
    }
}

fn backoff(retries_done: u32, random: f64) -> Duration {
    let exponential = INITIAL_DELAY.as_secs_f64() * 2f64.powi(retries_done.min(30) as i32);
    let capped = exponential.min(MAX_DELAY.as_secs_f64());
    let jitter = 1.0 - 0.25 * random.clamp(0.0, 1.0);
    Duration::from_secs_f64(capped * jitter)
}

/// Parses the IMF-fixdate form of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`), the only
/// one RFC 9110 lets servers send.
fn parse_http_date(text: &str) -> Option<SystemTime> {
    let mut parts = text.split_ascii_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if parts.next()? != "GMT" || parts.next().is_some() || clock.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 || year < 1970 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = u64::try_from(days).ok()? * 86_400 + hour * 3600 + minute * 60 + second;
    Some(UNIX_EPOCH + Duration::from_secs(seconds))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_decision_table() {
        let cases: &[(Failure, bool)] = &[
            (Failure::Connect, true),
            (Failure::TimeoutBeforeHeaders, true),
            (Failure::TimeoutAfterHeaders, false),
            (Failure::BrokenBeforeOutput, true),
            (Failure::BrokenAfterOutput, false),
            (Failure::Unusable, false),
            (
                Failure::Status {
                    status: 408,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 409,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 429,
                    body: "slow down",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 500,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 500,
                    body: r#"{"error":{"message":"7 validation errors:\n  {'type': 'string_type'"}}"#,
                },
                false,
            ),
            (
                Failure::Status {
                    status: 500,
                    body: "1 validation error for ChatCompletionRequest",
                },
                false,
            ),
            (
                Failure::Status {
                    status: 500,
                    body: "the validation error log is full",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 502,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 503,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 504,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 529,
                    body: "",
                },
                true,
            ),
            (
                Failure::Status {
                    status: 400,
                    body: "",
                },
                false,
            ),
            (
                Failure::Status {
                    status: 401,
                    body: "",
                },
                false,
            ),
            (
                Failure::Status {
                    status: 403,
                    body: "",
                },
                false,
            ),
            (
                Failure::Status {
                    status: 404,
                    body: "",
                },
                false,
            ),
            (
                Failure::Status {
                    status: 422,
                    body: "",
                },
                false,
            ),
            (
                Failure::Status {
                    status: 429,
                    body: r#"{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}"#,
                },
                false,
            ),
        ];
        for (failure, expected) in cases {
            assert_eq!(is_retryable(*failure), *expected, "{failure:?}");
        }
    }

    #[test]
    fn backoff_table() {
        // (retries done, random, expected milliseconds)
        let cases: &[(u32, f64, u64)] = &[
            (0, 0.0, 500),
            (1, 0.0, 1000),
            (2, 0.0, 2000),
            (3, 0.0, 4000),
            (4, 0.0, 8000),
            (5, 0.0, 8000),
            (40, 0.0, 8000),
            (0, 1.0, 375),
            (0, 0.5, 437),
            (4, 1.0, 6000),
        ];
        for &(retries, random, millis) in cases {
            let delay = retry_delay(retries, None, None, SystemTime::now(), random);
            assert_eq!(
                delay.as_millis() as u64,
                millis,
                "retry {retries}, random {random}"
            );
        }
    }

    #[test]
    fn server_requested_delay_table() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let in_ten_s = "Tue, 14 Nov 2023 22:13:30 GMT";
        // (retry-after-ms, retry-after, expected ms; 500 = fell back to backoff)
        let cases: &[(Option<&str>, Option<&str>, u64)] = &[
            (Some("0"), None, 0),
            (Some("250"), None, 250),
            (Some("1500.5"), None, 1500),
            (Some("60000"), None, 60_000),
            (Some("60001"), None, 500),
            (Some("-1"), None, 500),
            (Some("soon"), None, 500),
            (None, Some("2"), 2000),
            (None, Some("0"), 0),
            (None, Some("61"), 500),
            (None, Some(in_ten_s), 10_000),
            (None, Some("Tue, 14 Nov 2023 22:13:10 GMT"), 500),
            (None, Some("Tue, 14 Nov 2023 23:13:20 GMT"), 500),
            (None, Some("not a date"), 500),
            // retry-after-ms wins over retry-after.
            (Some("100"), Some("30"), 100),
            // An unusable retry-after-ms lets retry-after speak.
            (Some("x"), Some("3"), 3000),
        ];
        for &(ms, after, expected) in cases {
            let delay = retry_delay(0, ms, after, now, 0.0);
            assert_eq!(delay.as_millis() as u64, expected, "{ms:?} {after:?}");
        }
    }

    #[test]
    fn http_dates() {
        let cases: &[(&str, Option<u64>)] = &[
            ("Thu, 01 Jan 1970 00:00:00 GMT", Some(0)),
            ("Sun, 06 Nov 1994 08:49:37 GMT", Some(784_111_777)),
            ("Tue, 29 Feb 2000 12:00:00 GMT", Some(951_825_600)),
            ("Tue, 14 Nov 2023 22:13:20 GMT", Some(1_700_000_000)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", None),
            ("Sun, 06 Nov 1994 08:49:37 UTC", None),
            ("Sun, 06 Foo 1994 08:49:37 GMT", None),
            ("", None),
        ];
        for &(text, expected) in cases {
            let parsed =
                parse_http_date(text).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs());
            assert_eq!(parsed, expected, "{text}");
        }
    }
}
