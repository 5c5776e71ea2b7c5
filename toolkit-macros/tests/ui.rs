//! Compile-fail tests pinning every diagnostic of `#[tool]`, and compile-pass
//! tests of what it accepts. Each `tests/ui/NAME.rs` is compiled as a program of
//! its own: `tests/ui/pass_*.rs` must compile and run, every other file must fail
//! to compile with exactly the errors in `tests/ui/NAME.stderr`.
//!
//! After a deliberate change to a diagnostic, regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p toolkit-macros --test ui`, then read
//! every changed `.stderr`: each error must point at the offending token and
//! say how to fix it.

use std::path::Path;

#[test]
fn ui() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .expect("the ui directory")
        .map(|entry| {
            entry
                .expect("a ui case")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".rs"))
        .collect();
    cases.sort();
    let t = trybuild::TestCases::new();
    for case in &cases {
        let path = format!("tests/ui/{case}");
        if case.starts_with("pass_") {
            t.pass(path);
        } else {
            t.compile_fail(path);
        }
    }
}
