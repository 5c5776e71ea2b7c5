//! The benchmark's fixture pages: `/many` (1,000 interactive elements),
//! `/controls` (a counter button and a text field, `pages/controls.html`),
//! `/fade` (a panel that fades in again on demand, `pages/fade.html`)
//! and `/long` (about 280,000 characters of text, as the browser tests'
//! long page).

use toolkit_tests::http::Route;

use super::test_pages::{long_text_page, page};

/// How many interactive elements the page-map fixture holds.
pub const MANY: usize = 1000;

/// How long the text of `/long` is, in characters (about).
const LONG_TEXT_CHARS: usize = 280_000;

/// The routes of the benchmark's server.
pub fn routes() -> [(&'static str, Route); 4] {
    [
        ("/many", Route::html(many_elements_page(MANY))),
        (
            "/controls",
            Route::html(include_str!("../pages/controls.html")),
        ),
        ("/long", Route::html(long_text_page(LONG_TEXT_CHARS))),
        ("/fade", Route::html(include_str!("../pages/fade.html"))),
    ]
}

/// `count` interactive elements, a mix of buttons, links, text inputs,
/// checkboxes and selects, in a dense grid: 25 columns of 48 px (1,250 px,
/// inside the 1,280 px viewport) by 26 px rows, so 1,000 elements take
/// 1,040 px, well inside the mapped band (the 800 px viewport plus
/// `VIEWPORT_EXPANSION_PX` = 1,000 px below it). Every one of them counts.
fn many_elements_page(count: usize) -> String {
    let mut body = String::from(
        "<style>body{margin:0;font:10px sans-serif}.g{display:grid;\
         grid-template-columns:repeat(25,48px);gap:2px}.g>*{height:24px;margin:0;\
         box-sizing:border-box;width:48px}</style><div class=g>",
    );
    for i in 0..count {
        let item = match i % 5 {
            0 => format!("<button type=button>B{i}</button>"),
            1 => format!("<a href=\"/l{i}\">L{i}</a>"),
            2 => format!("<input name=i{i} placeholder=\"I{i}\">"),
            3 => format!("<input type=checkbox name=c{i}>"),
            _ => format!("<select name=s{i}><option>S{i}</option><option>T{i}</option></select>"),
        };
        body.push_str(&item);
    }
    body.push_str("</div>");
    page("Many elements", &body)
}
