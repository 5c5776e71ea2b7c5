//! The public errors of the browser toolbox that need no browser, walked as
//! a host's reporter (anyhow's `{:#}`) walks them: no message repeats its
//! source's, no sentence is said twice along a chain.

use toolkit_browser::{DomainPattern, RecordError, SafetyPolicy};
use toolkit_tests::error_chain::{assert_no_repeats, messages};

#[test]
fn pattern_and_policy_errors() {
    let error = DomainPattern::parse("*.").unwrap_err();
    assert_no_repeats("PatternError", &error);
    let error = SafetyPolicy::builder()
        .allow_domains(["", "*."])
        .build()
        .unwrap_err();
    assert_no_repeats("PolicyError", &error);
    let policy = SafetyPolicy::builder()
        .files_dir(std::env::temp_dir())
        .build()
        .unwrap();
    let error = policy.resolve_file("../../etc/passwd").unwrap_err();
    assert_no_repeats("BrowserError::Refused", &error);
}

#[test]
fn a_record_that_cannot_be_written_says_where_and_returns_why() {
    // A folder where a file is: writing into it fails as a disk would.
    let file = std::env::temp_dir().join(format!("error-chains-record-{}", std::process::id()));
    std::fs::write(&file, b"a file").unwrap();
    let path = file.join("record.html");
    let error = std::fs::write(&path, b"<html>").unwrap_err();
    let error = RecordError::Io { path, error };
    let chain = messages(&error);
    assert_eq!(chain.len(), 2, "{chain:?}");
    assert!(chain[0].contains("record.html"), "{chain:?}");
    assert_no_repeats("RecordError::Io", &error);
    for error in [
        RecordError::Tools("the tool `a` has no schema".into()),
        RecordError::Image("the screenshot is not a PNG".into()),
    ] {
        assert_no_repeats("RecordError", &error);
    }
    let _ = std::fs::remove_file(&file);
}
