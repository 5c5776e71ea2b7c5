//! The page-side script's files (`src/js/`), each evaluated alone in the
//! browser: every file is a module of its own (a function expression), not
//! a fragment that only parses joined to the others.

use std::path::Path;

use toolkit_browser::Browser;
use toolkit_tests::http::TestServer;

use crate::support::runner::scenarios;

scenarios![each_script_file_parses_alone];

/// Files the page script is known to be made of: the directory listing
/// below must hold at least these, so the check cannot pass over an empty
/// or moved directory.
const KNOWN: [&str; 10] = [
    "install.js",
    "core.js",
    "map.js",
    "input.js",
    "forms.js",
    "text.js",
    "mask.js",
    "api.js",
    "markdown.js",
    "overlay.js",
];

async fn each_script_file_parses_alone(browser: Browser, _server: TestServer) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/js");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "js"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            (name, text)
        })
        .collect();
    files.sort();
    for known in KNOWN {
        assert!(
            files.iter().any(|(name, _)| name == known),
            "{known} is missing from {}",
            dir.display()
        );
    }
    for (name, text) in &files {
        // The file as the only text of an expression: a fragment of a
        // larger body (declarations, an unclosed function) is a syntax
        // error here. The newline ends a line comment on the file's last
        // line.
        let kind = browser
            .evaluate(&format!("typeof (\n{text}\n)"))
            .await
            .unwrap_or_else(|e| panic!("{name} does not parse alone: {e}"));
        assert_eq!(kind, "function", "{name} is not one function expression");
    }
}
