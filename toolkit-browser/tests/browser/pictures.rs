//! Pictures of the page: screenshots with the page map's numbers drawn on
//! their elements, checked pixel by pixel in the decoded PNG, and the
//! layer that draws them gone without a trace afterwards.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use toolkit_browser::{Browser, Element, OUTLINE_RGB, PageMap};
use toolkit_core::{Block, ImageSource, Registry};
use toolkit_tests::http::TestServer;

use crate::support::runner::scenarios;

scenarios![
    numbered_screenshot_outlines_elements_and_leaves_no_trace,
    page_styles_cannot_hide_the_numbers,
    one_element_is_outlined_alone,
    the_screenshot_action_draws_numbers_on_request,
];

/// A decoded screenshot: RGBA rows.
pub struct Picture {
    pub width: usize,
    pub height: usize,
    rgba: Vec<u8>,
}

impl Picture {
    pub fn decode(png_bytes: &[u8]) -> Self {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut buf = vec![0; reader.output_buffer_size().expect("a PNG of a sane size")];
        let info = reader.next_frame(&mut buf).expect("a PNG frame");
        let channels = info.color_type.samples();
        let (width, height) = (info.width as usize, info.height as usize);
        let mut rgba = Vec::with_capacity(width * height * 4);
        for pixel in buf[..info.buffer_size()].chunks_exact(channels) {
            match channels {
                1 | 2 => rgba.extend_from_slice(&[pixel[0], pixel[0], pixel[0], 255]),
                3 => rgba.extend_from_slice(&[pixel[0], pixel[1], pixel[2], 255]),
                _ => rgba.extend_from_slice(&pixel[..4]),
            }
        }
        Self {
            width,
            height,
            rgba,
        }
    }

    fn is_outline(&self, x: i64, y: i64) -> bool {
        let (Ok(x), Ok(y)) = (usize::try_from(x), usize::try_from(y)) else {
            return false;
        };
        if x >= self.width || y >= self.height {
            return false;
        }
        let at = (y * self.width + x) * 4;
        self.rgba[at..at + 3] == OUTLINE_RGB
    }

    /// Pixels of the outline colour in the whole picture.
    pub fn outline_pixels(&self) -> usize {
        self.rgba
            .chunks_exact(4)
            .filter(|p| p[..3] == OUTLINE_RGB)
            .count()
    }

    /// The share of the 2-pixel ring just inside `element`'s box (its
    /// visible part) that has the outline colour.
    pub fn ring_share(&self, element: &Element) -> f64 {
        let (mut hits, mut all) = (0u32, 0u32);
        let (x0, y0) = (element.x, element.y);
        let (x1, y1) = (element.x + element.w - 1, element.y + element.h - 1);
        let mut look = |x: i64, y: i64| {
            if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
                all += 1;
                hits += u32::from(self.is_outline(x, y));
            }
        };
        for x in x0..=x1 {
            for d in 0..2 {
                look(x, y0 + d);
                look(x, y1 - d);
            }
        }
        for y in y0..=y1 {
            for d in 0..2 {
                look(x0 + d, y);
                look(x1 - d, y);
            }
        }
        if all == 0 {
            0.0
        } else {
            f64::from(hits) / f64::from(all)
        }
    }
}

/// What the page's own DOM holds, as its scripts would count it.
async fn dom_census(browser: &Browser) -> serde_json::Value {
    browser
        .evaluate(
            "({ all: document.getElementsByTagName('*').length, \
               top: document.documentElement.children.length, \
               last: document.documentElement.lastElementChild.localName, \
               popovers: document.querySelectorAll('[popover]').length, \
               fixed: [...document.querySelectorAll('*')] \
                 .filter((e) => getComputedStyle(e).position === 'fixed').length })",
        )
        .await
        .expect("the census script runs")
}

fn element<'a>(map: &'a PageMap, needle: &str) -> &'a Element {
    map.elements
        .iter()
        .find(|e| e.render().contains(needle))
        .unwrap_or_else(|| panic!("no element {needle:?} in\n{}", map.render()))
}

async fn numbered_screenshot_outlines_elements_and_leaves_no_trace(
    browser: Browser,
    server: TestServer,
) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let before = browser.page_map().await.unwrap();
    let census = dom_census(&browser).await;

    let plain = Picture::decode(&browser.screenshot().await.unwrap());
    assert_eq!(
        plain.outline_pixels(),
        0,
        "the fixture uses the outline colour"
    );

    let (png, map) = browser.numbered_screenshot().await.unwrap();
    let shot = Picture::decode(&png);
    assert_eq!((shot.width, shot.height), (1280, 800));
    for needle in ["Search", "Docs", "Clickable div"] {
        let e = element(&map, needle);
        let share = shot.ring_share(e);
        assert!(
            share > 0.8,
            "{needle} ({e:?}): {share} of its ring outlined"
        );
    }
    // Boxes and labels, not a picture painted over.
    assert!(shot.outline_pixels() < shot.width * shot.height / 4);

    // Gone without a trace: the page's DOM, the map, and the next picture.
    assert_eq!(dom_census(&browser).await, census);
    let after = browser.page_map().await.unwrap();
    assert_eq!(after.render(), before.render());
    assert_eq!(map.render(), before.render());
    let again = Picture::decode(&browser.screenshot().await.unwrap());
    assert_eq!(again.outline_pixels(), 0);
}

async fn page_styles_cannot_hide_the_numbers(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    // A page that hides every `div` it does not know, and would hide the
    // layer's content if its styles reached inside, in a layer of its own.
    browser
        .evaluate(
            "(() => { const s = document.createElement('style'); \
             s.textContent = '@layer x { html > div, div, span { display: none !important; \
               opacity: 0 !important; } } html > div:last-child { display: none !important; \
               transform: scale(0) !important; } * { border-color: transparent !important; }'; \
             document.head.appendChild(s); return true; })()",
        )
        .await
        .unwrap();
    let (png, map) = browser.numbered_screenshot().await.unwrap();
    let shot = Picture::decode(&png);
    let visible: Vec<&Element> = map
        .elements
        .iter()
        .filter(|e| e.y >= 0 && e.y + e.h <= 800 && e.w > 4 && e.h > 4)
        .collect();
    assert!(!visible.is_empty(), "{}", map.render());
    for e in visible {
        let share = shot.ring_share(e);
        assert!(share > 0.8, "{e:?}: {share} of its ring outlined");
    }
}

async fn one_element_is_outlined_alone(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let docs = element(&map, "Docs").index;
    let looked_up = browser.element(docs).await.unwrap();
    let shot = Picture::decode(
        &browser
            .outlined_screenshot(std::slice::from_ref(&looked_up))
            .await
            .unwrap(),
    );
    assert!(shot.ring_share(&looked_up) > 0.8);
    let other = element(&map, "Clickable div");
    assert!(shot.ring_share(other) < 0.2, "{other:?} is outlined too");
    assert_eq!(
        Picture::decode(&browser.screenshot().await.unwrap()).outline_pixels(),
        0
    );
}

async fn the_screenshot_action_draws_numbers_on_request(browser: Browser, server: TestServer) {
    let registry: Registry = toolkit_browser::registry(browser.clone(), Default::default())
        .build()
        .unwrap();
    let navigated = registry
        .dispatch(("navigate", &json!({ "url": server.url("/form") })))
        .await;
    assert!(
        !navigated.result.is_error(),
        "{}",
        navigated.result.to_text()
    );
    for (args, numbered) in [(json!({}), false), (json!({ "numbered": true }), true)] {
        let outcome = registry.dispatch(("screenshot", &args)).await;
        let result = outcome.result;
        assert!(!result.is_error(), "{}", result.to_text());
        let text = result.to_text();
        assert_eq!(text.contains("numbers of the"), numbered, "{text}");
        let [Block::Text { .. }, Block::Image { image }] = result.content() else {
            panic!("expected text then image: {result:?}");
        };
        let ImageSource::Base64(data) = image.source() else {
            panic!("a screenshot is held in memory: {image:?}");
        };
        let png = STANDARD.decode(data.as_bytes()).expect("base64");
        let outlined = Picture::decode(&png).outline_pixels();
        assert_eq!(outlined > 0, numbered, "{args}: {outlined} outline pixels");
    }
}
