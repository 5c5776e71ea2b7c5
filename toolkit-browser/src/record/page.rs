//! The record as one self-contained HTML page: no script, no external
//! resource, the screenshots inline as `data:` URLs.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{MAX_HTML_BYTES, Step};

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1320px;\
padding:0 1em;color:#222}h1{font-size:1.4em}section{border-top:1px solid #ccc;padding:.6em 0}\
h2{font-size:1.1em;margin:.2em 0}.error h2{color:#b00020}.url{color:#555;word-break:break-all}\
pre{background:#f5f5f5;padding:.5em;white-space:pre-wrap;word-break:break-word;margin:.3em 0}\
img{max-width:100%;border:1px solid #999}.note{color:#777;font-style:italic}";

/// The page: a heading, a `<section class="step">` per step (its number,
/// tool, the page's URL, the screenshot, the call and the result), then
/// `<section class="end">` with the page at the end.
pub(super) fn render(steps: &[Step], left_out: usize, end: &Result<Vec<u8>, String>) -> String {
    let mut html = String::with_capacity(4096);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width\">\
         <title>Browser run: {} step(s)</title><style>{STYLE}</style></head><body>\n\
         <h1>Browser run: {} step(s)</h1>\n\
         <p>Each step shows the page as the call found it, the element the call acts on \
         outlined, then the call and its result.</p>\n",
        steps.len(),
        steps.len()
    );
    let mut budget = Budget::default();
    for (n, step) in (1..).zip(steps) {
        let class = if step.is_error { "step error" } else { "step" };
        let _ = writeln!(
            html,
            "<section class=\"{class}\" id=\"step-{n}\"><h2>Step {n}: {}</h2>",
            escape(&step.tool)
        );
        if !step.url.is_empty() {
            let _ = writeln!(html, "<p class=url>{}</p>", escape(&step.url));
        }
        let alt = match step.outlined {
            Some(index) => format!("The page before step {n}, element [{index}] outlined"),
            None => format!("The page before step {n}"),
        };
        budget.picture(&mut html, &step.picture, &alt);
        let _ = write!(
            html,
            "<pre class=call>{} {}</pre>\n<pre class=result>{}{}</pre>\n</section>\n",
            escape(&step.tool),
            escape(&step.arguments),
            if step.is_error { "Error: " } else { "" },
            escape(&step.result)
        );
    }
    if left_out > 0 {
        let _ = writeln!(
            html,
            "<p class=note>{left_out} later call(s) ran but are not recorded (at most {} are).</p>",
            super::MAX_RECORDED_STEPS
        );
    }
    html.push_str("<section class=\"end\"><h2>The page at the end</h2>\n");
    budget.picture(&mut html, end, "The page at the end of the run");
    html.push_str("</section>\n</body></html>\n");
    html
}

/// What the page's screenshots have used of [`MAX_HTML_BYTES`].
#[derive(Default)]
struct Budget {
    used: usize,
}

impl Budget {
    /// Adds a screenshot as an `<img>`, or a note saying why there is none.
    fn picture(&mut self, html: &mut String, picture: &Result<Vec<u8>, String>, alt: &str) {
        match picture {
            Ok(png) => {
                let size = png.len().div_ceil(3) * 4;
                if self.used + size > MAX_HTML_BYTES {
                    html.push_str(
                        "<p class=note>(Screenshot left out: the record is at its size limit.)</p>\n",
                    );
                    return;
                }
                self.used += size;
                let _ = writeln!(
                    html,
                    "<img alt=\"{}\" src=\"data:image/png;base64,{}\">",
                    escape(alt),
                    STANDARD.encode(png)
                );
            }
            Err(why) => {
                let _ = writeln!(html, "<p class=note>(No screenshot: {})</p>", escape(why));
            }
        }
    }
}

/// Text as HTML: the five characters with a meaning escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(tool: &str, result: &str, picture: Result<Vec<u8>, String>) -> Step {
        Step {
            tool: tool.into(),
            arguments: r#"{"index": 3}"#.into(),
            result: result.into(),
            is_error: false,
            url: "http://127.0.0.1/a?x=<b>".into(),
            picture,
            outlined: Some(3),
        }
    }

    #[test]
    fn every_text_is_escaped_and_every_step_has_its_section() {
        let steps = [
            step("click", "<script>alert(1)</script>", Ok(vec![1, 2, 3])),
            step(
                "input",
                "typed \"x\" & 'y'",
                Err("the browser is down".into()),
            ),
        ];
        let html = render(&steps, 2, &Ok(vec![4]));
        assert_eq!(html.matches("<section class=\"step\"").count(), 2);
        assert_eq!(html.matches("<section class=\"end\"").count(), 1);
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("typed &quot;x&quot; &amp; &#39;y&#39;"));
        assert!(html.contains("x=&lt;b&gt;"));
        assert!(html.contains("data:image/png;base64,AQID"));
        assert!(html.contains("(No screenshot: the browser is down)"));
        assert!(html.contains("2 later call(s)"));
        // Nothing is fetched from elsewhere.
        for outside in ["src=\"http", "href=", "<link", "<script", "url("] {
            assert!(!html.contains(outside), "{outside}");
        }
    }

    #[test]
    fn screenshots_past_the_budget_are_left_out() {
        let big = vec![0u8; MAX_HTML_BYTES / 4 * 3 / 2];
        let steps: Vec<Step> = (0..4)
            .map(|_| step("click", "ok", Ok(big.clone())))
            .collect();
        let html = render(&steps, 0, &Ok(big));
        assert_eq!(html.matches("<img ").count(), 2);
        assert_eq!(
            html.matches("left out: the record is at its size limit")
                .count(),
            3
        );
        assert!(html.len() < MAX_HTML_BYTES + 64 * 1024);
    }
}
