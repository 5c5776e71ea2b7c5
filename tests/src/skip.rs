//! Skipping the tests that need an external program (Chromium, a model
//! server) on a machine that cannot have it, by a variable set on purpose.

/// Whether the tests guarded by `variable` are to be skipped: only when it
/// is set to exactly `1` (unset, empty, `0` or anything else runs them, so
/// that a stray value never hides a failure). When skipping, says so on
/// stderr, naming the test (the thread's name under libtest) or else the
/// program.
pub fn skipped(variable: &str) -> bool {
    let skip = std::env::var_os(variable).is_some_and(|value| value == "1");
    if skip {
        let thread = std::thread::current();
        let what = match thread.name() {
            Some(name) if name != "main" => name.to_owned(),
            _ => std::env::args()
                .next()
                .map(|program| {
                    let file = std::path::Path::new(&program)
                        .file_name()
                        .map_or(program.clone(), |name| name.to_string_lossy().into_owned());
                    // Cargo names test binaries `NAME-HASH`.
                    file.rsplit_once('-')
                        .map_or(file.clone(), |(name, _)| name.to_owned())
                })
                .unwrap_or_else(|| "these tests".to_owned()),
        };
        eprintln!("SKIPPED {what}: {variable}=1");
    }
    skip
}
