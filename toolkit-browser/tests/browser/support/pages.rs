//! The fixture pages made by code: those with a size to choose (many
//! elements, long text) and the page that echoes what it was sent. Every
//! other page is a file under `tests/pages/`.

use base64::Engine as _;

/// Wraps a body in a page with a title.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>\
         <body>{body}</body></html>"
    )
}

/// `count` interactive elements (buttons, links, inputs, checkboxes) in a
/// dense grid, all within the mapped band below the viewport.
pub fn many_elements_page(count: usize) -> String {
    let mut body = String::from(
        "<style>body{margin:0;font:10px sans-serif} .g{display:grid;\
         grid-template-columns:repeat(25,48px);gap:2px} .g>*{height:24px;margin:0;\
         box-sizing:border-box;overflow:hidden;width:48px}</style><div class=g>",
    );
    for i in 0..count {
        let item = match i % 4 {
            0 => format!("<button>B{i}</button>"),
            1 => format!("<a href=\"/l{i}\">L{i}</a>"),
            2 => format!("<input name=i{i} placeholder=\"I{i}\">"),
            _ => format!("<input type=checkbox name=c{i}>"),
        };
        body.push_str(&item);
    }
    body.push_str("</div>");
    page("Many elements", &body)
}

/// A page of about `chars` characters of readable text, in paragraphs.
pub fn long_text_page(chars: usize) -> String {
    let sentence = "The quick brown fox jumps over the lazy dog near the riverbank. ";
    let mut body = String::with_capacity(chars + 1000);
    let mut k = 0;
    while body.len() < chars {
        k += 1;
        body.push_str(&format!("<p>Paragraph {k}. {}</p>", sentence.repeat(4)));
    }
    page("Long text", &body)
}

/// The fields of a query string or form body, decoded.
pub fn form_fields(encoded: &str) -> Vec<(String, String)> {
    encoded
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (form_decode(k), form_decode(v))
        })
        .collect()
}

fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match text.get(i + 1..i + 3).map(|h| u8::from_str_radix(h, 16)) {
                    Some(Ok(b)) => {
                        out.push(b);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes text for HTML (text and quoted attributes).
pub fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Percent-encodes every byte but ASCII letters and digits.
pub fn percent_encode_all(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `text` in capitals, character for character (a character whose
/// capital is two, `ß`, stays as it is).
pub fn simple_upper(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(u), None) => u,
                _ => c,
            }
        })
        .collect()
}

/// A page that echoes `fields` everywhere a page can show a value: the
/// title, a paragraph, a table, a link's text and `href`, a data attribute,
/// a text field's value, an image's `alt`, an `aria-label`, a placeholder,
/// a button's `title`, and encoded: in capitals and in base64 (standard,
/// and URL-safe in a link).
pub fn echo_page(fields: &[(String, String)]) -> String {
    let mut body = String::from("<h1>Echo</h1><table><tr><th>Field</th><th>Value</th></tr>");
    let mut title = String::from("Echo");
    for (k, v) in fields {
        let v_html = html_escape(v);
        body.push_str(&format!(
            "<tr><td>{}</td><td>{v_html}</td></tr>",
            html_escape(k)
        ));
        title.push(' ');
        title.push_str(v);
    }
    body.push_str("</table>");
    for (k, v) in fields {
        let v_html = html_escape(v);
        let k_html = html_escape(k);
        body.push_str(&format!(
            "<p id=\"said-{k_html}\">You sent {v_html}.</p>\
             <p><a href=\"/docs?{k_html}={}\" data-value=\"{v_html}\">Again with {v_html}</a></p>\
             <p><label>Copy <input name=\"copy-{k_html}\" value=\"{v_html}\"></label></p>\
             <ul>{v_html}<li>item</li></ul>\
             <p>Shouted: {upper}</p><p>Token: {b64}</p>\
             <p><a href=\"/docs?t={b64_url}\">Token link</a> \
             <a href=\"/docs\"><img alt=\"{v_html}\" width=\"24\" height=\"24\"></a> \
             <button aria-label=\"{v_html}\">?</button> \
             <input name=\"hint-{k_html}\" placeholder=\"{v_html}\"> \
             <button title=\"{v_html}\"></button></p>",
            percent_encode_all(v),
            upper = html_escape(&simple_upper(v)),
            b64 = base64::engine::general_purpose::STANDARD.encode(v),
            b64_url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v),
        ));
    }
    page(&html_escape(&title), &body)
}
