//! The README's agent loop is the crate example: the README says so, and
//! this keeps the two the same (both are compiled as doc tests).

#[test]
fn the_readme_shows_the_crate_example() {
    let lib = include_str!("../src/lib.rs");
    let readme = include_str!("../../README.md");
    let start = lib.find("//! ```no_run\n").expect("the crate example") + "//! ```no_run\n".len();
    let end = start + lib[start..].find("//! ```\n").expect("its end");
    let example: String = lib[start..end]
        .lines()
        .map(|line| {
            format!(
                "{}\n",
                line.strip_prefix("//!")
                    .unwrap_or(line)
                    .strip_prefix(' ')
                    .unwrap_or("")
            )
        })
        .collect();
    assert!(
        readme.contains(&format!("```rust,no_run\n{example}```")),
        "README.md's agent example differs from toolkit-agent's crate example:\n{example}"
    );
}
