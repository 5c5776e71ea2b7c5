//! Text for the model: an element, a text and a whole map as lines, and
//! the assembly of one map's lines from the documents of a tab (its own
//! and its frames').

use std::fmt::Write as _;

use super::model::{CHARS_PER_TOKEN, estimate_tokens};
use super::model::{Element, MAX_ELEMENTS, MapText, PageMap, VIEWPORT_EXPANSION_PX};

impl Element {
    /// The element as one line for the model:
    /// `[12]<input type=text name=q placeholder="Search"> value="rust"`,
    /// `[13]<button> Search`, `*[14]<a> Docs` (new),
    /// `[15]<div scroll="0 px above, 800 px below"> News…` (a scroll
    /// container), `[16]<div scroll="0 px above, 600 px below"
    /// hidden_elements="12 below (scroll it to see them)"> Reviews` (a
    /// scroll container whose interactive elements beyond its visible part
    /// are not listed).
    ///
    /// A link's `href` is left out when the link has a text or a label
    /// (the model clicks by number; the address costs tokens on every
    /// link of every map): it shows on a link with neither, and in
    /// [`render_with_href`](Self::render_with_href), which the `find`
    /// action uses.
    pub fn render(&self) -> String {
        let named = self.text.as_deref().is_some_and(|t| !t.is_empty())
            || self.name.as_deref().is_some_and(|n| !n.is_empty());
        self.line(!named)
    }

    /// The element as one line, with its `href` if it is a link:
    /// `[14]<a href=/docs> Docs`.
    pub fn render_with_href(&self) -> String {
        self.line(true)
    }

    fn line(&self, href: bool) -> String {
        let mut line = String::with_capacity(64);
        if self.is_new {
            line.push('*');
        }
        let _ = write!(line, "[{}]<{}", self.index, self.tag);
        let mut token = |key: &str, value: &Option<String>| {
            if let Some(v) = value {
                let _ = write!(line, " {key}={}", token_value(v));
            }
        };
        token("role", &self.role);
        token("type", &self.input_type);
        token("name", &self.field_name);
        if href {
            token("href", &self.href);
        }
        token("target", &self.target);
        let shown_text = self.text.as_deref().unwrap_or_default();
        if let Some(name) = self.name.as_deref().filter(|n| *n != shown_text) {
            let _ = write!(line, " label={}", quoted(name));
        }
        if let Some(p) = &self.placeholder {
            let _ = write!(line, " placeholder={}", quoted(p));
        }
        if !self.options.is_empty() {
            let mut list = self.options.join(" | ");
            let total = self.option_count.unwrap_or(0) as usize;
            if total > self.options.len() {
                let _ = write!(list, " | \u{2026} {total} in all");
            }
            let _ = write!(line, " options={}", quoted(&list));
        }
        for (flag, value) in [
            ("checked", self.checked),
            ("selected", self.selected),
            ("expanded", self.expanded),
        ] {
            match value {
                Some(true) => {
                    let _ = write!(line, " {flag}");
                }
                Some(false) => {
                    let _ = write!(line, " {flag}=false");
                }
                None => {}
            }
        }
        if self.disabled {
            line.push_str(" disabled");
        }
        if let (Some(above), Some(below)) = (self.scroll_above, self.scroll_below) {
            let _ = write!(line, " scroll=\"{above} px above, {below} px below\"");
        }
        let hidden: Vec<String> = [(self.hidden_below, "below"), (self.hidden_above, "above")]
            .into_iter()
            .filter_map(|(n, side)| n.filter(|n| *n > 0).map(|n| format!("{n} {side}")))
            .collect();
        if !hidden.is_empty() {
            let _ = write!(
                line,
                " hidden_elements=\"{} (scroll it to see them)\"",
                hidden.join(", ")
            );
        }
        line.push('>');
        if let Some(v) = &self.value {
            let _ = write!(line, " value={}", quoted(v));
        }
        if !shown_text.is_empty() {
            line.push(' ');
            line.push_str(shown_text);
        }
        line
    }
}

/// An attribute value written bare when it is one plain token, quoted
/// otherwise.
fn token_value(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '='))
    {
        v.to_owned()
    } else {
        quoted(v)
    }
}

fn quoted(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl PageMap {
    /// The map as compact text for the model, within its
    /// [`token_budget`](Self::token_budget):
    ///
    /// ```text
    /// URL: http://127.0.0.1:8080/search
    /// Title: Search
    /// Scroll: 0 px above (0.0 pages), 1200 px below (1.5 pages)
    /// Interactive elements ([number]<tag ...> text; * = new since the last map):
    /// [1]<input type=text name=q placeholder="Search"> value="rust"
    /// [2]<button> Search
    /// [3]<a> Docs
    /// ```
    ///
    /// A `Tabs:` list follows the title only when more than one tab is
    /// open. Links show no `href` (see [`Element::render`]) unless two
    /// links of the map have the same text and lead to different places.
    pub fn render(&self) -> String {
        self.render_within(self.token_budget as usize)
    }

    /// The map as [`render`](Self::render) gives it, within `budget`
    /// tokens ([`estimate_tokens`]; 0 for no budget). A map above it
    /// keeps its header and closing notes, the elements in the viewport,
    /// the headings, and then the elements (and the short texts beside
    /// them) nearest the viewport; a line stands where elements were left
    /// out, and the last line says how many and how to reach them (`find`,
    /// or scrolling).
    pub fn render_within(&self, budget: usize) -> String {
        let header = self.header();
        let footer = self.footer();
        let body = self.body_lines();
        let whole: usize = body.iter().map(|l| l.text.chars().count() + 1).sum();
        let fixed = header.chars().count() + footer.chars().count();
        if budget == 0 || (fixed + whole).div_ceil(CHARS_PER_TOKEN) <= budget {
            let mut out = header;
            for line in &body {
                out.push_str(&line.text);
                out.push('\n');
            }
            out.push_str(&footer);
            return out;
        }
        // The closing note and the markers where lines were left out cost
        // about 100 tokens; the rest of the budget goes to lines, and lines
        // are taken back, farthest first, while the whole is still above.
        let mut room = (budget * CHARS_PER_TOKEN).saturating_sub(fixed + 300);
        let mut order: Vec<usize> = (0..body.len()).collect();
        order.sort_by_key(|&k| (body[k].rank(), body[k].distance, k));
        let mut keep = vec![false; body.len()];
        let mut taken = Vec::new();
        for k in order {
            let cost = body[k].text.chars().count() + 1;
            if cost > room {
                // The rest would be farther away than what was left out.
                if body[k].rank() > 1 {
                    break;
                }
                continue;
            }
            room -= cost;
            keep[k] = true;
            taken.push(k);
        }
        loop {
            let out = cut_map(budget, &header, &footer, &body, &keep);
            match taken.pop() {
                Some(k) if estimate_tokens(&out) > budget => keep[k] = false,
                _ => return out,
            }
        }
    }

    fn header(&self) -> String {
        let mut out = String::with_capacity(256);
        let _ = writeln!(out, "URL: {}", self.url);
        let _ = writeln!(out, "Title: {}", self.title);
        // The current tab is the URL and title above: a list with it alone
        // would repeat them.
        if self.tabs.len() > 1 {
            out.push_str("Tabs:\n");
            for tab in &self.tabs {
                if tab.current {
                    let _ = writeln!(out, "  Tab {} (current)", tab.id);
                } else {
                    let _ = writeln!(out, "  {tab}");
                }
            }
        }
        let s = &self.scroll;
        let _ = writeln!(
            out,
            "Scroll: {} px above ({:.1} pages), {} px below ({:.1} pages)",
            s.pixels_above(),
            s.pages_above(),
            s.pixels_below(),
            s.pages_below()
        );
        if self.elements.is_empty() && self.pdf {
            out.push_str(
                "Interactive elements: none (the tab shows a PDF document, which the map does \
                 not see into: extract reads its text)\n",
            );
        } else if self.elements.is_empty() && self.nothing_visible {
            out.push_str(
                "Interactive elements: none (nothing on the page is visible: its content is \
                 hidden, or it has none)\n",
            );
        } else if self.elements.is_empty() {
            // The map covers VIEWPORT_EXPANSION_PX beyond the viewport:
            // scrolling helps only when the page reaches further.
            let beyond = i64::from(VIEWPORT_EXPANSION_PX);
            out.push_str("Interactive elements: none visible");
            match (s.pixels_above() > beyond, s.pixels_below() > beyond) {
                (_, true) => out.push_str(" (scroll down to see more of the page)"),
                (true, false) => out.push_str(" (scroll up to see more of the page)"),
                (false, false) => out.push_str(" (the page has none within reach)"),
            }
            out.push('\n');
        } else if self.texts.is_empty() {
            out.push_str(
                "Interactive elements ([number]<tag ...> text; * = new since the last map):\n",
            );
        } else {
            out.push_str(
                "Interactive elements ([number]<tag ...> text; * = new since the last map), \
                 between headings (#) and short texts of the page:\n",
            );
        }
        out
    }

    fn footer(&self) -> String {
        let mut out = String::new();
        if self.truncated {
            let _ = writeln!(
                out,
                "(the page has more interactive elements than the {MAX_ELEMENTS} shown)"
            );
        }
        if self.cross_origin_frames > 0 {
            let _ = writeln!(
                out,
                "({} frame(s) from other sites are not mapped)",
                self.cross_origin_frames
            );
        }
        if !self.still_changing.is_empty() {
            let _ = writeln!(
                out,
                "(the page was still changing when this map was taken ({}): what is arriving may \
                 be missing)",
                self.still_changing.join(", ")
            );
        }
        out
    }

    /// The lines between the header and the closing notes, in page order,
    /// each with how far from the viewport it stands.
    fn body_lines(&self) -> Vec<BodyLine> {
        let ambiguous = ambiguous_links(&self.elements);
        let viewport = self.scroll.viewport_height;
        let place = |e: &Element| -> (Side, i64) {
            if e.y + e.h <= 0 {
                (Side::Above, -(e.y + e.h))
            } else if viewport > 0 && e.y >= viewport {
                (Side::Below, e.y - viewport)
            } else {
                (Side::In, 0)
            }
        };
        let mut out = Vec::with_capacity(self.elements.len() + self.texts.len());
        let mut texts = self.texts.iter().peekable();
        let near = |position: usize| {
            self.elements
                .get(position)
                .or_else(|| self.elements.last())
                .map_or(0, |e| place(e).1)
        };
        for (position, element) in self.elements.iter().enumerate() {
            while let Some(text) = texts.next_if(|t| t.before <= position) {
                out.push(BodyLine::text(text, near(position)));
            }
            let named = element.text.as_deref().or(element.name.as_deref());
            let show_href = named.is_none_or(|n| n.is_empty() || ambiguous.contains(n));
            let (side, distance) = place(element);
            out.push(BodyLine {
                text: element.line(show_href),
                side,
                heading: false,
                distance,
            });
        }
        for text in texts {
            out.push(BodyLine::text(text, near(self.elements.len())));
        }
        out
    }
}

/// A map of which only the `keep` lines of `body` are shown.
fn cut_map(budget: usize, header: &str, footer: &str, body: &[BodyLine], keep: &[bool]) -> String {
    let mut out = header.to_owned();
    let (mut above, mut below, mut texts, mut run) = (0usize, 0usize, 0usize, 0usize);
    for (line, kept) in body.iter().zip(keep) {
        if *kept {
            if run > 0 {
                let _ = writeln!(out, "(\u{2026} {run} element(s) left out here)");
                run = 0;
            }
            out.push_str(&line.text);
            out.push('\n');
            continue;
        }
        match line.side {
            Side::Text => texts += 1,
            Side::Above => {
                above += 1;
                run += 1;
            }
            Side::In | Side::Below => {
                below += 1;
                run += 1;
            }
        }
    }
    if run > 0 {
        let _ = writeln!(out, "(\u{2026} {run} element(s) left out here)");
    }
    out.push_str(footer);
    let _ = writeln!(
        out,
        "(the map was cut to its budget of about {budget} tokens: {above} element(s) above \
         and {below} below the view left out, with {texts} short text(s); the find action \
         searches every element of the page by text, role or label, and scrolling maps \
         what comes into view)"
    );
    out
}

/// The texts shared by links of a map that lead to different places:
/// those links show their `href`, or the model could not tell them apart.
fn ambiguous_links(elements: &[Element]) -> std::collections::HashSet<&str> {
    let mut first: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut ambiguous = std::collections::HashSet::new();
    for e in elements {
        let (Some(href), Some(named)) =
            (e.href.as_deref(), e.text.as_deref().or(e.name.as_deref()))
        else {
            continue;
        };
        if named.is_empty() {
            continue;
        }
        match first.get(named) {
            Some(seen) if *seen != href => {
                ambiguous.insert(named);
            }
            Some(_) => {}
            None => {
                first.insert(named, href);
            }
        }
    }
    ambiguous
}

/// Where a line of the map stands against the viewport.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Above,
    In,
    Below,
    /// A short text (not a heading).
    Text,
}

/// One line of a map's body, for the budget.
struct BodyLine {
    text: String,
    side: Side,
    heading: bool,
    /// Pixels between the line's element and the viewport (0 inside it).
    distance: i64,
}

impl BodyLine {
    fn text(text: &MapText, distance: i64) -> Self {
        Self {
            text: text.render(),
            side: Side::Text,
            heading: text.heading.is_some(),
            distance,
        }
    }

    /// What a budget keeps first: elements in the viewport (0), headings
    /// (1), then everything else by distance (2).
    fn rank(&self) -> u8 {
        if self.heading {
            1
        } else if self.side == Side::In {
            0
        } else {
            2
        }
    }
}

impl MapText {
    /// The text as one line of the map: `## Heading` for a heading, the
    /// text indented by two spaces otherwise.
    pub fn render(&self) -> String {
        match self.heading {
            Some(level) => format!(
                "{} {}",
                "#".repeat(usize::from(level.clamp(1, 6))),
                self.text
            ),
            None => format!("  {}", self.text),
        }
    }
}

/// One line of a map being assembled from the documents of a tab.
pub(super) enum Line {
    Element(Box<Element>),
    Text(MapText),
}

/// The lines of the frames inside one document, each with where it
/// stands: `(before, order, lines)`, like a text's `before` and `order`.
pub(super) type FrameLines = Vec<(usize, u32, Vec<Line>)>;

/// The lines of one document: its texts, its elements, and the lines of
/// the frames from other sites inside it, each where it stands (frames as
/// `(before, order, lines)`, like a text's `before` and `order`).
pub(super) fn assemble(
    elements: Vec<Element>,
    texts: Vec<MapText>,
    frames: FrameLines,
) -> Vec<Line> {
    // Texts and frames, in the order they stand in.
    let mut between: Vec<(usize, u32, Vec<Line>)> = texts
        .into_iter()
        .map(|t| (t.before, t.order, vec![Line::Text(t)]))
        .chain(frames)
        .collect();
    between.sort_by_key(|(before, order, _)| (*before, *order));
    let mut between = between.into_iter().peekable();
    let mut out = Vec::with_capacity(elements.len() + between.len());
    for (position, element) in elements.into_iter().enumerate() {
        while let Some((_, _, pieces)) = between.next_if(|(before, _, _)| *before <= position) {
            out.extend(pieces);
        }
        out.push(Line::Element(Box::new(element)));
    }
    out.extend(between.flat_map(|(_, _, pieces)| pieces));
    out
}

/// The map's elements and texts, each text saying how many elements come
/// before it.
pub(super) fn split(pieces: Vec<Line>) -> (Vec<Element>, Vec<MapText>) {
    let mut elements = Vec::with_capacity(pieces.len());
    let mut texts = Vec::new();
    for piece in pieces {
        match piece {
            Line::Element(element) => elements.push(*element),
            Line::Text(mut text) => {
                text.before = elements.len();
                texts.push(text);
            }
        }
    }
    (elements, texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::TabInfo;
    use crate::page::map::model::{ScrollPosition, estimate_tokens};

    fn element(json: &str) -> Element {
        serde_json::from_str(json).expect("a walk element")
    }

    #[test]
    fn elements_render_as_compact_lines() {
        let input = element(
            r#"{"i":12,"tag":"input","type":"text","field":"q","placeholder":"Search",
                "value":"rust","name":"Query","x":1,"y":2,"w":3,"h":4}"#,
        );
        assert_eq!(
            input.render(),
            r#"[12]<input type=text name=q label="Query" placeholder="Search"> value="rust""#
        );
        let button = element(r#"{"i":13,"tag":"button","name":"Search","text":"Search"}"#);
        assert_eq!(button.render(), "[13]<button> Search");
        let link = element(r#"{"i":14,"tag":"a","href":"/a b","text":"Docs","new":true}"#);
        assert_eq!(link.render(), "*[14]<a> Docs");
        assert_eq!(link.render_with_href(), r#"*[14]<a href="/a b"> Docs"#);
        let bare = element(r#"{"i":18,"tag":"a","href":"/next","target":"_blank"}"#);
        assert_eq!(bare.render(), "[18]<a href=/next target=_blank>");
        let check = element(
            r#"{"i":15,"tag":"div","role":"checkbox","checked":false,"disabled":true,
                "name":"Say \"hi\"\nnow"}"#,
        );
        assert_eq!(
            check.render(),
            r#"[15]<div role=checkbox label="Say \"hi\"\nnow" checked=false disabled>"#
        );
        let scroller = element(r#"{"i":16,"tag":"div","sa":0,"sb":800,"text":"News"}"#);
        assert_eq!(
            scroller.render(),
            r#"[16]<div scroll="0 px above, 800 px below"> News"#
        );
        let hiding = element(r#"{"i":17,"tag":"ul","sa":40,"sb":800,"ha":1,"hb":12}"#);
        assert_eq!(
            hiding.render(),
            r#"[17]<ul scroll="40 px above, 800 px below" hidden_elements="12 below, 1 above (scroll it to see them)">"#
        );
    }

    #[test]
    fn dropdowns_list_their_first_options() {
        let select = element(
            r#"{"i":2,"tag":"select","field":"size","value":"M","opts":["S","M","L"],"nopts":3}"#,
        );
        assert_eq!(
            select.render(),
            r#"[2]<select name=size options="S | M | L"> value="M""#
        );
        let long = element(r#"{"i":3,"tag":"select","opts":["1","2"],"nopts":14}"#);
        assert_eq!(
            long.render(),
            "[3]<select options=\"1 | 2 | \u{2026} 14 in all\">"
        );
    }

    fn text(json: &str) -> MapText {
        serde_json::from_str(json).expect("a walk text")
    }

    #[test]
    fn texts_and_frames_stand_where_they_were_found() {
        let elements = vec![
            element(r#"{"i":1,"tag":"button","text":"A"}"#),
            element(r#"{"i":2,"tag":"button","text":"B"}"#),
        ];
        let texts = vec![
            text(r#"{"t":"Title","h":1,"at":0,"s":0}"#),
            text(r#"{"t":"after the frame","at":1,"s":9}"#),
            text(r#"{"t":"the end","at":2,"s":20}"#),
        ];
        let frame = vec![
            Line::Text(text(r#"{"t":"In the frame","h":2,"at":0}"#)),
            Line::Element(Box::new(element(r#"{"i":7,"tag":"a","text":"F"}"#))),
        ];
        let (elements, texts) = split(assemble(elements, texts, vec![(1, 5, frame)]));
        let order: Vec<u32> = elements.iter().map(|e| e.index).collect();
        assert_eq!(order, [1, 7, 2]);
        let at: Vec<(&str, usize)> = texts.iter().map(|t| (t.text.as_str(), t.before)).collect();
        assert_eq!(
            at,
            [
                ("Title", 0),
                ("In the frame", 1),
                ("after the frame", 2),
                ("the end", 3)
            ]
        );
        let map = PageMap {
            url: "u".into(),
            title: "t".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition {
                x: 0,
                y: 0,
                width: 0,
                height: 0,
                viewport_width: 0,
                viewport_height: 0,
            },
            elements,
            texts,
            truncated: false,
            cross_origin_frames: 0,
            nothing_visible: false,
            pdf: false,
            walk_ms: 0.0,
            still_changing: Vec::new(),
            settle_ms: 0.0,
            token_budget: 0,
        };
        let rendered = map.render();
        let body = rendered.split_once("page:\n").expect("the header").1;
        assert_eq!(
            body,
            "# Title\n[1]<button> A\n## In the frame\n[7]<a> F\n  after the frame\n\
             [2]<button> B\n  the end\n"
        );
    }

    #[test]
    fn an_empty_map_suggests_scrolling_only_beyond_its_band() {
        let map = |y: i64, height: i64, still: &[&str]| PageMap {
            url: "u".into(),
            title: "t".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition {
                x: 0,
                y,
                width: 1280,
                height,
                viewport_width: 1280,
                viewport_height: 800,
            },
            elements: Vec::new(),
            texts: Vec::new(),
            truncated: false,
            cross_origin_frames: 0,
            nothing_visible: false,
            pdf: false,
            walk_ms: 0.0,
            still_changing: still.iter().map(|s| (*s).to_owned()).collect(),
            settle_ms: 0.0,
            token_budget: 0,
        };
        let none = |m: PageMap| {
            m.render()
                .lines()
                .find(|l| l.starts_with("Interactive elements"))
                .map(str::to_owned)
                .expect("the elements line")
        };
        let within = "Interactive elements: none visible (the page has none within reach)";
        assert_eq!(none(map(0, 800, &[])), within);
        assert_eq!(none(map(0, 1800, &[])), within);
        assert_eq!(
            none(map(0, 1801, &[])),
            "Interactive elements: none visible (scroll down to see more of the page)"
        );
        assert_eq!(
            none(map(1500, 2300, &[])),
            "Interactive elements: none visible (scroll up to see more of the page)"
        );
        assert!(map(0, 800, &["requests", "animations"]).render().ends_with(
            "(the page was still changing when this map was taken (requests, animations): \
             what is arriving may be missing)\n"
        ));
    }

    #[test]
    fn the_map_has_header_lines() {
        let map = PageMap {
            url: "http://127.0.0.1/".into(),
            title: "Home".into(),
            tabs: vec![TabInfo {
                id: "1a2b".into(),
                url: "http://127.0.0.1/".into(),
                title: "Home".into(),
                current: true,
            }],
            scroll: ScrollPosition {
                x: 0,
                y: 400,
                width: 1280,
                height: 2400,
                viewport_width: 1280,
                viewport_height: 800,
            },
            elements: vec![element(r#"{"i":1,"tag":"button","text":"Go"}"#)],
            texts: Vec::new(),
            truncated: false,
            cross_origin_frames: 1,
            nothing_visible: false,
            pdf: false,
            walk_ms: 1.0,
            still_changing: Vec::new(),
            settle_ms: 0.0,
            token_budget: 0,
        };
        let mut two = map.clone();
        two.tabs.push(TabInfo {
            id: "3c4d".into(),
            url: "http://127.0.0.1/docs".into(),
            title: "Docs".into(),
            current: false,
        });
        assert!(two.render().starts_with(
            "URL: http://127.0.0.1/\nTitle: Home\nTabs:\n  Tab 1a2b (current)\n  \
             Tab 3c4d: Docs \u{2014} http://127.0.0.1/docs\nScroll:"
        ));
        assert_eq!(
            map.render(),
            "URL: http://127.0.0.1/\nTitle: Home\n\
             Scroll: 400 px above (0.5 pages), 1200 px below (1.5 pages)\n\
             Interactive elements ([number]<tag ...> text; * = new since the last map):\n\
             [1]<button> Go\n\
             (1 frame(s) from other sites are not mapped)\n"
        );
    }

    fn long_page(elements: Vec<Element>, texts: Vec<MapText>) -> PageMap {
        PageMap {
            url: "http://127.0.0.1/long".into(),
            title: "Long".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition {
                x: 0,
                y: 4000,
                width: 1280,
                height: 20000,
                viewport_width: 1280,
                viewport_height: 800,
            },
            elements,
            texts,
            truncated: false,
            cross_origin_frames: 0,
            nothing_visible: false,
            walk_ms: 0.0,
            still_changing: Vec::new(),
            settle_ms: 0.0,
            token_budget: 0,
            pdf: false,
        }
    }

    #[test]
    fn links_with_the_same_text_to_different_places_show_where_they_lead() {
        let map = long_page(
            vec![
                element(r#"{"i":1,"tag":"a","href":"/a","text":"More","y":10,"h":20}"#),
                element(r#"{"i":2,"tag":"a","href":"/b","text":"More","y":40,"h":20}"#),
                element(r#"{"i":3,"tag":"a","href":"/c","text":"Home","y":70,"h":20}"#),
                element(r#"{"i":4,"tag":"a","href":"/c","text":"Home","y":90,"h":20}"#),
            ],
            Vec::new(),
        );
        let body: Vec<String> = map.render().lines().skip(4).map(str::to_owned).collect();
        assert_eq!(
            body,
            [
                "[1]<a href=/a> More",
                "[2]<a href=/b> More",
                "[3]<a> Home",
                "[4]<a> Home"
            ]
        );
    }

    #[test]
    fn a_budget_keeps_the_view_and_the_headings_and_says_what_it_left_out() {
        // 200 links, 30 px apart from 1,000 px above the viewport to
        // 5,000 px below; a heading every 50.
        let elements: Vec<Element> = (0..200)
            .map(|k| {
                element(&format!(
                    r#"{{"i":{},"tag":"a","href":"/p{k}","text":"Page number {k} of the manual","y":{},"h":20}}"#,
                    k + 1,
                    k * 30 - 1000
                ))
            })
            .collect();
        let texts: Vec<MapText> = (0..4)
            .map(|k| text(&format!(r#"{{"t":"Part {k}","h":2,"at":{}}}"#, k * 50)))
            .collect();
        let mut map = long_page(elements, texts);
        let whole = map.render();
        assert!(
            estimate_tokens(&whole) > 1500,
            "{}",
            estimate_tokens(&whole)
        );
        assert!(!whole.contains("left out"));
        map.token_budget = 600;
        let cut = map.render();
        assert!(
            estimate_tokens(&cut) <= 600,
            "{}\n{cut}",
            estimate_tokens(&cut)
        );
        // Every element in the viewport (y from 0 to 800: links 34 to 60)
        // and every heading stay.
        for k in 34..=60 {
            assert!(
                cut.contains(&format!("[{}]<a> Page number {k} ", k + 1)),
                "{k}: {cut}"
            );
        }
        for k in 0..4 {
            assert!(cut.contains(&format!("## Part {k}\n")), "{cut}");
        }
        // The nearest ones beyond it stay before farther ones.
        assert!(cut.contains("[62]<a>"), "{cut}");
        assert!(
            !cut.contains("[1]<a>") && !cut.contains("[200]<a>"),
            "{cut}"
        );
        let last = cut.lines().last().expect("a closing line");
        assert!(
            last.starts_with("(the map was cut to its budget of about 600 tokens: "),
            "{last}"
        );
        assert!(last.contains("the find action searches"), "{last}");
        let left_out: usize = cut
            .lines()
            .filter_map(|l| l.strip_prefix("(\u{2026} "))
            .map(|l| l.split(' ').next().unwrap().parse::<usize>().unwrap())
            .sum();
        let shown = cut.lines().filter(|l| l.starts_with('[')).count();
        assert_eq!(left_out + shown, 200);
        // No budget, or a budget the map fits in, changes nothing.
        assert_eq!(map.render_within(0), whole);
        assert_eq!(map.render_within(100_000), whole);
    }
}
