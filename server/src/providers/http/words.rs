//! A connection's failure in words, for the provider's errors and its retry lines: the
//! most specific reason in an error's chain, without the system's error numbers.

/// The most specific description in an error's source chain, in words ("connection
/// refused" rather than reqwest's generic "error sending request", or the system's
/// "Connection refused (os error 111)").
pub(super) fn error_reason(error: &(dyn std::error::Error + 'static)) -> String {
    let mut reason = error.to_string();
    let mut io_kind = None;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(inner) = source {
        reason = inner.to_string();
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        source = inner.source();
    }
    use std::io::ErrorKind;
    let said = match io_kind {
        Some(ErrorKind::ConnectionRefused) => Some("connection refused"),
        Some(ErrorKind::ConnectionReset) => Some("the connection was reset"),
        Some(ErrorKind::ConnectionAborted) => Some("the connection was aborted"),
        Some(ErrorKind::TimedOut) => Some("the connection timed out"),
        Some(ErrorKind::AddrNotAvailable) => Some("the address is not available"),
        Some(ErrorKind::NetworkUnreachable) => Some("the network is unreachable"),
        Some(ErrorKind::HostUnreachable) => Some("the host is unreachable"),
        _ => None,
    };
    match said {
        Some(said) => said.to_string(),
        None => without_os_error(&reason),
    }
}

/// "Broken pipe (os error 32)" → "broken pipe": the system's number means nothing to a
/// reader.
fn without_os_error(reason: &str) -> String {
    let text = match reason.rfind(" (os error ") {
        Some(at) if reason.ends_with(')') => &reason[..at],
        _ => reason,
    };
    let mut chars = text.chars();
    match chars.next() {
        // "Connection refused" reads as part of a sentence after "cannot connect to …:".
        Some(first) if chars.clone().next().is_some_and(char::is_lowercase) => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_errors_are_said_in_words() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(error_reason(&refused), "connection refused");
        let raw = std::io::Error::from_raw_os_error(111);
        assert_eq!(error_reason(&raw), "connection refused");
        assert_eq!(without_os_error("Broken pipe (os error 32)"), "broken pipe");
        assert_eq!(
            without_os_error("dns error: failed to lookup address"),
            "dns error: failed to lookup address"
        );
        assert_eq!(
            without_os_error("TLS handshake failed"),
            "TLS handshake failed"
        );
    }
}
