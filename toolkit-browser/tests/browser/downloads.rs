//! Downloads: files a page downloads (a link with `download`, an answer
//! with `Content-Disposition: attachment`) saved in the session's folder,
//! reported in the action's reply, and read back with `read_download`.

use serde_json::{Value, json};
use toolkit_browser::{Browser, BrowserConfig, DownloadState, SafetyPolicy};
use toolkit_core::Registry;
use toolkit_tests::http::{Reply, Route, TestServer};

use crate::support::chromium;
use crate::support::runner::scenarios;

scenarios![
    downloads_are_saved_reported_and_read,
    downloads_over_the_limits_are_stopped,
    a_pdf_opened_in_the_tab_is_read,
];

/// The text of the notes the page offers.
const NOTES: &str = "Meeting notes\nThe tent order ships on Friday.\n";

/// The text the PDF report shows.
const REPORT_TEXT: &str = "Quarterly total: 4217 tents";

/// A one-page PDF showing `text` in Helvetica, its cross-reference table
/// computed from the objects' offsets.
fn pdf_with(text: &str) -> Vec<u8> {
    pdf_of_pages(&[&format!("BT /F1 18 Tf 72 720 Td ({text}) Tj ET")])
}

/// A PDF of one page per content stream, in Helvetica (`/F1`) and
/// Helvetica-Bold (`/F2`).
fn pdf_of_pages(pages: &[&str]) -> Vec<u8> {
    let n = pages.len();
    // 1 catalog, 2 page tree, 3 and 4 the fonts, then a page and its
    // content per page.
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 5 + 2 * i)).collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>".to_owned(),
    ];
    for (i, stream) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {} 0 R >>",
            6 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (n, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", n + 1).as_bytes());
    }
    let xref = pdf.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        table.push_str(&format!("{offset:010} 00000 n \n"));
    }
    table.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    pdf.extend_from_slice(table.as_bytes());
    pdf
}

/// The quarterly summary as most PDF writers lay it out: a bold heading,
/// then each line placed by a move (`Td`), and a second page.
fn summary_pdf() -> Vec<u8> {
    pdf_of_pages(&[
        "BT /F2 24 Tf 72 720 Td (Q3) Tj /F1 12 Tf 0 -30 Td (Revenue grew 42 percent) Tj \
         0 -16 Td (Costs held flat) Tj ET",
        "BT /F1 12 Tf 72 720 Td (Codeword: heron) Tj ET",
    ])
}

fn files_site() -> TestServer {
    TestServer::start([
        ("/files", Route::html(include_str!("../pages/files.html"))),
        (
            "/files/notes.txt",
            Route::reply(Reply::raw(
                200,
                [("Content-Type", "text/plain; charset=utf-8")],
                NOTES,
            )),
        ),
        (
            "/files/report",
            Route::reply(Reply::raw(
                200,
                [
                    ("Content-Type", "application/pdf"),
                    ("Content-Disposition", "attachment; filename=\"report.pdf\""),
                ],
                pdf_with(REPORT_TEXT),
            )),
        ),
        (
            "/files/summary.pdf",
            Route::reply(Reply::raw(
                200,
                [("Content-Type", "application/pdf")],
                summary_pdf(),
            )),
        ),
    ])
}

/// The toolbox over `browser`, allowed the test sites of 127.0.0.1.
fn local_registry(browser: &Browser) -> Registry {
    let policy = SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .build()
        .unwrap();
    toolkit_browser::registry(browser.clone(), policy)
        .build()
        .unwrap()
}

async fn call(registry: &Registry, name: &str, args: Value) -> toolkit_core::ToolResult {
    let outcome = registry.dispatch((name, &args)).await;
    assert!(outcome.error.is_none(), "{name}({args}) did not run");
    outcome.result
}

async fn ok(registry: &Registry, name: &str, args: Value) -> String {
    let result = call(registry, name, args.clone()).await;
    assert!(
        !result.is_error(),
        "{name}({args}) failed: {:?}",
        result.error_message()
    );
    result.to_text()
}

async fn index_of(browser: &Browser, text: &str) -> u32 {
    let map = browser.page_map().await.expect("a page map");
    map.elements
        .iter()
        .find(|e| e.text.as_deref().is_some_and(|t| t.contains(text)))
        .unwrap_or_else(|| panic!("no element {text:?} in\n{}", map.render()))
        .index
}

/// Clicks the link holding `text` and returns what the replies said until
/// one reported `saved` (a download can begin just after the click's
/// reply: the next reply tells it).
async fn click_until(registry: &Registry, browser: &Browser, text: &str, saved: &str) -> String {
    let link = index_of(browser, text).await;
    let mut said = ok(registry, "click", json!({ "index": link })).await;
    for _ in 0..20 {
        if said.contains(saved) {
            return said;
        }
        said.push('\n');
        said.push_str(&ok(registry, "wait", json!({ "seconds": 0.5 })).await);
    }
    panic!("no reply said {saved:?}: {said}");
}

async fn downloads_are_saved_reported_and_read(browser: Browser, _: TestServer) {
    let server = files_site();
    let registry = local_registry(&browser);
    ok(
        &registry,
        "navigate",
        json!({ "url": server.url("/files") }),
    )
    .await;
    let notes = click_until(
        &registry,
        &browser,
        "Meeting notes",
        "\"meeting notes.txt\" was saved",
    )
    .await;
    assert!(
        notes.contains(&format!(
            "\"meeting notes.txt\" was saved ({} bytes, text/plain)",
            NOTES.len()
        )),
        "{notes}"
    );
    let report = click_until(
        &registry,
        &browser,
        "Quarterly report",
        "\"report.pdf\" was saved",
    )
    .await;
    assert!(report.contains("application/pdf"), "{report}");
    // The browser already replaces the separators of such a name.
    click_until(
        &registry,
        &browser,
        "Escaping name",
        "escape.txt\" was saved",
    )
    .await;

    let text = ok(
        &registry,
        "read_download",
        json!({ "name": "meeting notes.txt" }),
    )
    .await;
    assert!(text.contains("The tent order ships on Friday."), "{text}");
    let text = ok(&registry, "read_download", json!({ "name": "report.pdf" })).await;
    assert!(text.contains(REPORT_TEXT), "{text}");

    // Only the session's downloads, by their names: no path reaches out.
    for name in ["../../escape.txt", "/etc/passwd", "nothing.txt"] {
        let result = call(&registry, "read_download", json!({ "name": name })).await;
        let message = result.error_message().unwrap_or_default().to_owned();
        assert!(
            message.contains("there is no download named") && message.contains("\"report.pdf\""),
            "{name}: {message}"
        );
    }

    let dir = browser.downloads_dir().await.expect("a downloads folder");
    let all = browser.downloads().await;
    let mine: Vec<_> = all
        .iter()
        .filter(|d| d.url.starts_with(&server.base_url()))
        .collect();
    assert_eq!(mine.len(), 3, "{all:?}");
    for download in &mine {
        assert!(!download.name.contains(['/', '\\']), "{download:?}");
        assert_eq!(download.state, DownloadState::Completed);
        assert_eq!(download.path.parent(), Some(dir.as_path()));
        assert!(download.path.is_file());
    }
    assert!(!dir.parent().unwrap().join("escape.txt").exists());
    assert!(
        !dir.join("escape.txt").exists(),
        "files are named by the browser, not the page"
    );
}

/// The size of the large file: 32 times the limit of the browser below.
const BIG_BYTES: usize = 32 << 20;

async fn downloads_over_the_limits_are_stopped(_: Browser, _: TestServer) {
    let server = TestServer::start([
        (
            "/big",
            Route::html(
                "<!doctype html><title>Big files</title>\
                 <a href=\"/big/file\">Big export</a>\
                 <a href=\"/notes\" download=\"one.txt\">Note one</a>\
                 <a href=\"/notes\" download=\"two.txt\">Note two</a>",
            ),
        ),
        (
            "/big/file",
            Route::reply(Reply::raw(
                200,
                [
                    ("Content-Type", "application/octet-stream"),
                    ("Content-Disposition", "attachment; filename=\"export.bin\""),
                ],
                vec![7u8; BIG_BYTES],
            )),
        ),
        (
            "/notes",
            Route::reply(Reply::raw(200, [("Content-Type", "text/plain")], NOTES)),
        ),
    ]);
    let config = BrowserConfig::builder()
        .executable(chromium::executable())
        .profile_parent(chromium::profiles())
        .max_download_bytes(1 << 20)
        .max_downloads(2)
        .build();
    let browser = Browser::launch(config).await.expect("launch Chromium");
    let registry = local_registry(&browser);
    ok(&registry, "navigate", json!({ "url": server.url("/big") })).await;

    let big = click_until(
        &registry,
        &browser,
        "Big export",
        "\"export.bin\" was stopped",
    )
    .await;
    assert!(
        big.contains("it passed the limit of 1 MiB for one download, so it was canceled"),
        "{big}"
    );
    let dir = browser.downloads_dir().await.expect("a downloads folder");
    let all = browser.downloads().await;
    let export = all
        .iter()
        .find(|d| d.name == "export.bin")
        .expect("the export");
    assert_eq!(export.state, DownloadState::Canceled, "{export:?}");
    assert!(
        export
            .refused
            .as_deref()
            .is_some_and(|r| r.contains("1 MiB"))
    );
    // What it wrote is gone, and the folder holds nothing near its size.
    assert!(!export.path.exists(), "{export:?}");
    let left: Vec<(String, u64)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, e.metadata().unwrap().len())
        })
        .collect();
    let written: u64 = left.iter().map(|(_, n)| n).sum();
    assert!(
        written <= 1 << 20,
        "left in the folder: {left:?} ({export:?})"
    );
    let refused = call(&registry, "read_download", json!({ "name": "export.bin" })).await;
    let message = refused.error_message().unwrap_or_default().to_owned();
    assert!(
        message.contains("was canceled (it passed the limit of 1 MiB"),
        "{message}"
    );

    // The stopped download counts: one more is kept, the next refused.
    let one = click_until(&registry, &browser, "Note one", "\"one.txt\" was").await;
    assert!(one.contains("\"one.txt\" was saved"), "{one}");
    let two = click_until(&registry, &browser, "Note two", "\"two.txt\" was").await;
    assert!(
        two.contains(
            "\"two.txt\" was stopped: the session already has 2 downloads, the most it keeps"
        ),
        "{two}"
    );
    let all = browser.downloads().await;
    let two = all
        .iter()
        .find(|d| d.name == "two.txt")
        .expect("the refused one");
    assert_eq!(two.state, DownloadState::Canceled, "{two:?}");
    assert!(!two.path.exists(), "{two:?}");
    let text = ok(&registry, "read_download", json!({ "name": "one.txt" })).await;
    assert!(text.contains("The tent order ships on Friday."), "{text}");
    browser.close().await.expect("close");
}

async fn a_pdf_opened_in_the_tab_is_read(browser: Browser, _: TestServer) {
    let server = files_site();
    let registry = local_registry(&browser);
    ok(
        &registry,
        "navigate",
        json!({ "url": server.url("/files") }),
    )
    .await;
    assert!(!browser.page_map().await.expect("a page map").pdf);
    // Opened as most sites link a PDF: in the tab, not as an attachment.
    ok(
        &registry,
        "navigate",
        json!({ "url": server.url("/files/summary.pdf") }),
    )
    .await;
    let map = browser.page_map().await.expect("a page map");
    assert!(map.pdf, "{}", map.render());
    assert!(
        map.render().contains(
            "the tab shows a PDF document, which the map does not see into: extract reads its text"
        ),
        "{}",
        map.render()
    );
    let text = ok(&registry, "extract", json!({})).await;
    // Line by line, each page apart, as the PDF lays them out.
    assert!(
        text.contains("Q3\nRevenue grew 42 percent\nCosts held flat\n"),
        "{text}"
    );
    assert!(text.contains("\nCodeword: heron"), "{text}");
    assert!(!text.contains("flatCodeword"), "{text}");
    let read = browser.page_text().await.expect("the page's text");
    assert!(read.markdown.starts_with("Q3\n"), "{read:?}");
    // Nothing was downloaded to read it.
    assert!(
        browser
            .downloads()
            .await
            .iter()
            .all(|d| !d.url.starts_with(&server.base_url())),
        "{:?}",
        browser.downloads().await
    );
}
