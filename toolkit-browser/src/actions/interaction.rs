//! Acting on elements and keys: `click`, `input`, `scroll`, `send_keys`.

use toolkit_core::{ToolResult, tool};

use super::{Reply, act, check_navigation, effects_sentence, label, stop_if_fatal};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::page::forms::option_list;
use crate::safety::SafetyPolicy;
use crate::safety::{Typed, typed_parts};
use toolkit_core::text::cut;

/// Click the element numbered `index` in the page map, like a person: it
/// is scrolled into view first.
///
/// A click that opens a new tab switches to that tab and says so; one that
/// opens a file dialog says so (choose the file with upload_file). A
/// dropdown (`<select>`) is not clicked: its options are listed instead, to
/// be chosen with select_option. A number that is not in the current page
/// map is an error: look at the new map.
#[tool(catalogue = false)]
pub async fn click(
    /// The element's number in the page map.
    index: u32,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        click_element(&browser, &policy, index).await
    })
    .await
}

async fn click_element(
    browser: &Browser,
    policy: &SafetyPolicy,
    index: u32,
) -> Result<Reply, BrowserError> {
    let element = browser.element(index).await?;
    if element.tag == "select" {
        // A native picker cannot be driven by clicks in a headless browser.
        let dropdown = browser.dropdown_options(index).await?;
        return Ok(Reply::text(format!(
            "{} is a dropdown, so it was not clicked. Its options are {}. Choose one with \
             select_option.",
            label(&element),
            option_list(&dropdown.options, 30)
        ))
        .memory(format!("Listed the options of {}", label(&element))));
    }
    if element.tag == "input" && element.input_type.as_deref() == Some("file") {
        return Err(BrowserError::invalid(format!(
            "{} is a file input: clicking it would open a file dialog; use upload_file with \
             its number instead",
            label(&element)
        )));
    }
    let before = browser.current_tab().await?;
    let clicked = browser.click(index).await;
    stop_if_fatal(&clicked)?;
    let what = label(&element);
    let checked = check_navigation(browser, policy, Some(&before.id)).await;
    let outcome = clicked?;
    let note = match checked {
        Ok(note) => note,
        Err(blocked) => {
            return Ok(Reply::text(format!("Clicked {what}."))
                .memory(format!("Clicked {what}; its navigation was blocked"))
                .failed(blocked));
        }
    };
    let mut effects = effects_sentence(browser, &outcome.effects).await?;
    if outcome.file_chooser {
        effects.push_str(&format!(
            "{}It opened a file dialog, which is not shown here: choose the file with \
             upload_file and the number {index}.",
            if effects.is_empty() { "" } else { " " }
        ));
    }
    let mut memory = format!("Clicked {what}");
    if outcome.effects.new_tab.is_some() {
        memory.push_str("; it opened a new tab, now current");
    } else if outcome.effects.navigated {
        let now = browser.page_info().await?;
        memory.push_str(&format!("; the page is now {}", now.url));
    }
    Ok(Reply::text(format!("Clicked {what}."))
        .say(effects)
        .say(note)
        .memory(memory))
}

/// Type text into the text field numbered `index` (an input, a text area,
/// or an editable element), replacing what it holds unless clear is false.
///
/// Any text works: accents, emoji, other scripts. To type a secret the
/// host configured, write `<secret>name</secret>` where its value goes;
/// the value is typed but never shown.
#[tool(catalogue = false)]
pub async fn input(
    /// The text field's number in the page map.
    index: u32,
    /// The text to type.
    text: String,
    /// Replace the field's current content (default true); false appends.
    clear: Option<bool>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        type_into(&browser, &policy, index, &text, clear.unwrap_or(true)).await
    })
    .await
}

async fn type_into(
    browser: &Browser,
    policy: &SafetyPolicy,
    index: u32,
    text: &str,
    clear: bool,
) -> Result<Reply, BrowserError> {
    let has_secret = typed_parts(text)
        .iter()
        .any(|p| matches!(p, Typed::Secret(_)));
    let real = if has_secret {
        // The sites a secret may be typed on are checked against the
        // document the field is in: a frame from another site is not the
        // tab's site.
        let origin = browser.element_origin(index).await?;
        policy.resolve_secrets(text, &origin)?
    } else {
        text.to_owned()
    };
    let typed = browser.type_text(index, &real, clear).await?;
    let what = label(&typed.element);
    let shown = cut(text, 200);
    let mut reply = Reply::text(format!("Typed {shown:?} into {what}."))
        .memory(format!("Typed {:?} into {what}", cut(text, 60)));
    if !typed.matches {
        // With a secret in it, even a cut value could give part of it away.
        reply = if has_secret {
            reply.say(
                "The field's value is not what was typed: the page changed or limited the input.",
            )
        } else {
            reply.say(format!(
                "The field now holds {:?}: the page changed or limited the input.",
                cut(&typed.value, 200)
            ))
        };
    }
    Ok(reply)
}

/// Scroll the page (or, with index, the scrollable box holding that
/// element) down or up by a number of screen heights.
#[tool(catalogue = false)]
pub async fn scroll(
    /// Scroll down (default true); false scrolls up.
    down: Option<bool>,
    /// How many screen heights to scroll (default 1; fractions such as 0.5
    /// are fine).
    pages: Option<f64>,
    /// Scroll the scrollable box holding this element instead of the page.
    index: Option<u32>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let down = down.unwrap_or(true);
        let pages = pages.unwrap_or(1.0);
        let moved = browser.scroll(pages, down, index).await?;
        let direction = if down { "down" } else { "up" };
        let what = match &moved.container {
            Some(container) => format!("the box {container}"),
            None => "the page".to_owned(),
        };
        if moved.moved == 0 {
            let end = if down { "bottom" } else { "top" };
            return Err(BrowserError::invalid(format!(
                "could not scroll {what} {direction}: it is already at the {end}"
            )));
        }
        let amount = moved.moved.abs();
        Ok(Reply::text(format!(
            "Scrolled {what} {direction} by {amount} px; {} px above, {} px below.",
            moved.above, moved.below
        ))
        .memory(format!("Scrolled {what} {direction} by {amount} px")))
    })
    .await
}

/// Press keys on the focused element: one key or combination ("Enter",
/// "Escape", "Tab", "ArrowDown", "Control+a", "Shift+Tab"), or several
/// separated by spaces ("Tab Tab Enter").
///
/// A page the keys open (a submitted form, a new tab) is waited for and
/// reported.
#[tool(catalogue = false)]
pub async fn send_keys(
    /// The keys, as DOM key names joined by + for combinations and spaces
    /// between presses.
    keys: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        let before = browser.current_tab().await?;
        let pressed = browser.press_keys(&keys).await;
        stop_if_fatal(&pressed)?;
        let checked = check_navigation(&browser, &policy, Some(&before.id)).await;
        let effects = pressed?;
        let note = match checked {
            Ok(note) => note,
            Err(blocked) => {
                return Ok(Reply::text(format!("Pressed {keys}."))
                    .memory(format!("Pressed {keys}; its navigation was blocked"))
                    .failed(blocked));
            }
        };
        let sentence = effects_sentence(&browser, &effects).await?;
        let mut memory = format!("Pressed {keys}");
        if effects.new_tab.is_some() {
            memory.push_str("; it opened a new tab, now current");
        } else if effects.navigated {
            memory.push_str(&format!("; the page is now {}", effects.url));
        }
        Ok(Reply::text(format!("Pressed {keys}."))
            .say(sentence)
            .say(note)
            .memory(memory))
    })
    .await
}
