//! What an action adds to its call's `execute_tool` span: the address the
//! action left the page at, as OpenTelemetry's `url.full`, with nothing a
//! trace must not keep (docs/observability.md, "Browser actions").

use toolkit_core::telemetry;
use toolkit_core::text::cut;

use crate::browser::Browser;
use crate::safety::SafetyPolicy;

/// The most characters of an address a span holds (a `data:` page can be
/// megabytes long).
const MAX_URL_CHARS: usize = 2048;

/// Query keys whose values OpenTelemetry's URL conventions replace with
/// `REDACTED` by default (signatures and access keys of signed URLs).
const SENSITIVE_QUERY_KEYS: [&str; 4] = ["AWSAccessKeyId", "Signature", "sig", "X-Goog-Signature"];

/// What the conventions write in place of a removed value.
const REDACTED: &str = "REDACTED";

/// Records the current tab's address on the call's span, if a subscriber
/// records the span; the browser is asked for it only then.
pub(crate) async fn record_page_url(browser: &Browser, policy: &SafetyPolicy) {
    if !telemetry::in_recorded_call() {
        return;
    }
    if let Some(url) = browser.current_url().await
        && let Some(shown) = span_url(policy, &url)
    {
        telemetry::record_url(&shown);
    }
}

/// `raw` as a span may hold it: credentials written `REDACTED:REDACTED`,
/// the query left out if it holds a secret of the policy (in any encoding
/// the redaction reads) and its signature values replaced, the fragment
/// left out if it holds a secret, then the whole redacted (a secret in
/// the path) and cut. `None` for text that is no URL.
pub(crate) fn span_url(policy: &SafetyPolicy, raw: &str) -> Option<String> {
    let mut url = url::Url::parse(raw).ok()?;
    if !url.username().is_empty() || url.password().is_some() {
        // A URL that cannot have credentials never has any to remove.
        let _ = url.set_username(REDACTED);
        let _ = url.set_password(Some(REDACTED));
    }
    let holds_secret = |text: &str| policy.redact(text) != text;
    if let Some(query) = url.query().map(str::to_owned) {
        if holds_secret(&query) {
            url.set_query(None);
        } else if let Some(scrubbed) = scrub_query(&query) {
            url.set_query(Some(&scrubbed));
        }
    }
    if url.fragment().is_some_and(holds_secret) {
        url.set_fragment(None);
    }
    let shown = policy.redact(url.as_str()).into_owned();
    Some(cut(&shown, MAX_URL_CHARS).into_owned())
}

/// The query with the values of [`SENSITIVE_QUERY_KEYS`] replaced, keys
/// and order kept; `None` when it has none of them.
fn scrub_query(query: &str) -> Option<String> {
    let mut changed = false;
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if SENSITIVE_QUERY_KEYS.contains(&key) => {
                changed = true;
                format!("{key}={REDACTED}")
            }
            _ => pair.to_owned(),
        })
        .collect();
    changed.then(|| pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::span_url;
    use crate::safety::SafetyPolicy;

    fn policy() -> SafetyPolicy {
        SafetyPolicy::builder()
            .secret("password", "hunter2-x9")
            .build()
            .unwrap()
    }

    #[test]
    fn credentials_are_redacted_and_a_plain_query_kept() {
        assert_eq!(
            span_url(&policy(), "https://ada:pw@shop.example/s?q=rust#top").as_deref(),
            Some("https://REDACTED:REDACTED@shop.example/s?q=rust#top")
        );
    }

    #[test]
    fn a_query_holding_a_secret_is_left_out_whatever_its_encoding() {
        assert_eq!(
            span_url(
                &policy(),
                "https://shop.example/login?user=ada&pw=hunter2%2Dx9"
            )
            .as_deref(),
            Some("https://shop.example/login")
        );
        assert_eq!(
            span_url(&policy(), "https://shop.example/a#t=HUNTER2-X9").as_deref(),
            Some("https://shop.example/a")
        );
    }

    #[test]
    fn signatures_are_redacted_and_a_secret_in_the_path_replaced() {
        assert_eq!(
            span_url(
                &policy(),
                "https://s3.example/f?X-Goog-Signature=abc&v=1&sig=d"
            )
            .as_deref(),
            Some("https://s3.example/f?X-Goog-Signature=REDACTED&v=1&sig=REDACTED")
        );
        let shown = span_url(&policy(), "https://shop.example/reset/hunter2-x9/done").unwrap();
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn text_that_is_no_url_is_not_recorded() {
        assert_eq!(span_url(&policy(), "not a url"), None);
    }
}
