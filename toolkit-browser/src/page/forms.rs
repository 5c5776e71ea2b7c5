//! Dropdowns and file inputs: the form controls that typing and clicking
//! do not cover.

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::dom::{
    BackendNodeId, ResolveNodeParams, SetFileInputFilesParams,
};
use chromiumoxide::cdp::browser_protocol::page::FileChooserOpenedMode;
use chromiumoxide::cdp::js_protocol::runtime::CallFunctionOnParams;
use serde::{Deserialize, Serialize};

use super::input::Effects;
use super::map::{Element, MAX_TEXT_CHARS};
use super::{live, live_element};
use crate::browser::{Browser, Session};
use crate::error::BrowserError;
use crate::safety::Redactor;

/// One option of a dropdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DropdownOption {
    /// The option's text.
    pub text: String,
    /// Its value (`<option value>`, or an ARIA option's `data-value` or
    /// `value`; empty when it has none).
    #[serde(default)]
    pub value: String,
    /// Whether it is selected now.
    #[serde(default)]
    pub selected: bool,
    /// Whether it cannot be chosen.
    #[serde(default)]
    pub disabled: bool,
}

/// A dropdown and its options.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Dropdown {
    /// The element asked about.
    pub element: Element,
    /// A native `<select>` (else an ARIA listbox or menu).
    pub native: bool,
    /// A `<select multiple>`.
    pub multiple: bool,
    /// An ARIA widget that says it is collapsed (`aria-expanded=false`):
    /// its options may appear only once it is opened.
    pub collapsed: bool,
    /// The options, in order.
    pub options: Vec<DropdownOption>,
}

/// What [`Browser::select_option`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Selected {
    /// The dropdown, as it was before.
    pub element: Element,
    /// The chosen option's text.
    pub text: String,
    /// The chosen option's value.
    pub value: String,
    /// Whether the dropdown shows the option as selected afterwards.
    pub confirmed: bool,
    /// For an ARIA dropdown, what clicking the option caused (a navigation,
    /// a new tab).
    pub effects: Option<Effects>,
}

/// What [`Browser::upload_file`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Uploaded {
    /// The element asked about.
    pub element: Element,
    /// The names of the files the input holds afterwards.
    pub names: Vec<String>,
    /// When the element was no file input but a control that opens a file
    /// chooser (a button whose script clicks a hidden input): what
    /// clicking it caused besides the chooser. `None` when the files went
    /// straight into the input the element is or reaches.
    pub chooser: Option<Effects>,
    /// The page took the files (its input's `input` or `change` event saw
    /// them; `names` are those) and then emptied the input itself, as a
    /// page that sends a file as soon as it is chosen does. Told for a
    /// chooser a control opened.
    pub cleared: bool,
}

/// How long [`Browser::upload_file`] waits for the file chooser a click
/// on a control opens. The page opens it in the click's own task, so it
/// comes at once or not at all; the margin is for a busy page.
pub const CHOOSER_WAIT: Duration = Duration::from_secs(2);

#[derive(Deserialize)]
struct OptionsReply {
    #[serde(default)]
    stale: bool,
    el: Option<Element>,
    #[serde(default, rename = "notDropdown")]
    not_dropdown: bool,
    #[serde(default)]
    native: bool,
    #[serde(default)]
    multiple: bool,
    #[serde(default)]
    collapsed: bool,
    #[serde(default)]
    options: Vec<DropdownOption>,
}

#[derive(Deserialize)]
struct SelectReply {
    #[serde(default)]
    stale: bool,
    el: Option<Element>,
    #[serde(default, rename = "notDropdown")]
    not_dropdown: bool,
    #[serde(default, rename = "noMatch")]
    no_match: bool,
    #[serde(default)]
    options: Vec<DropdownOption>,
    #[serde(rename = "disabledOption")]
    disabled_option: Option<String>,
    #[serde(default, rename = "disabledSelect")]
    disabled_select: bool,
    #[serde(default)]
    native: bool,
    #[serde(default)]
    text: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    selected: bool,
    /// The number given to an ARIA option, to click.
    option: Option<u32>,
    #[serde(default)]
    next: u32,
}

#[derive(Deserialize)]
struct FileReply {
    #[serde(default)]
    stale: bool,
    el: Option<Element>,
    #[serde(rename = "notFile")]
    not_file: Option<String>,
    /// For an element that is no file input: whether a click on it may
    /// open a file chooser (it is no text field, no dropdown).
    #[serde(default)]
    clickable: bool,
    #[serde(default)]
    multiple: bool,
}

#[derive(Deserialize)]
struct NamesReply {
    #[serde(default)]
    stale: bool,
    #[serde(default)]
    names: Vec<String>,
}

fn not_a_dropdown(index: u32, element: &Element) -> BrowserError {
    BrowserError::invalid(format!(
        "element [{index}] is a <{}>, not a dropdown: dropdown options work on <select> \
         elements and on ARIA listboxes and menus; click other elements instead",
        element.tag
    ))
}

/// Redacts the options' texts and values as they are read (texts cut to
/// their limit once redacted).
fn redact_options(options: &mut [DropdownOption], redactor: &Redactor) {
    for option in options {
        option.text = redactor.redact_cut(&option.text, MAX_TEXT_CHARS as usize);
        redactor.redact_in_place(&mut option.value);
    }
}

/// The options as one line for messages: `"Rust", "Go" (selected)`.
pub(crate) fn option_list(options: &[DropdownOption], limit: usize) -> String {
    let mut shown: Vec<String> = options
        .iter()
        .take(limit)
        .map(|o| {
            let mut s = format!("{:?}", o.text);
            if o.selected {
                s.push_str(" (selected)");
            }
            if o.disabled {
                s.push_str(" (disabled)");
            }
            s
        })
        .collect();
    if options.len() > limit {
        shown.push(format!("and {} more", options.len() - limit));
    }
    shown.join(", ")
}

impl Browser {
    /// The options of dropdown `index`: a native `<select>` (or a label or
    /// wrapper holding one), or an ARIA listbox or menu (the element, the
    /// one it names in `aria-controls`/`aria-owns`, or one inside it).
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`], or [`BrowserError::InvalidInput`]
    /// for an element that is not a dropdown.
    pub async fn dropdown_options(&self, index: u32) -> Result<Dropdown, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let args = serde_json::json!({ "index": index, "maxText": MAX_TEXT_CHARS });
        let mut reply: OptionsReply = session.call(&page, "dropdownOptions", args).await?;
        let element = live_element(index, reply.stale, reply.el, session.redactor())?;
        redact_options(&mut reply.options, session.redactor());
        if reply.not_dropdown {
            return Err(not_a_dropdown(index, &element));
        }
        Ok(Dropdown {
            element,
            native: reply.native,
            multiple: reply.multiple,
            collapsed: reply.collapsed,
            options: reply.options,
        })
    }

    /// Chooses the option `wanted` names (its text, its value, either
    /// ignoring case, or a part of one text that no other shares) in
    /// dropdown `index`. A native `<select>` is set as its own picker would
    /// (with `input` and `change` events); an ARIA option is clicked like a
    /// person would, after opening the dropdown if it is closed.
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`]; [`BrowserError::InvalidInput`] for an
    /// element that is not a dropdown, a disabled option or dropdown, or no
    /// matching option (the message lists the options).
    pub async fn select_option(&self, index: u32, wanted: &str) -> Result<Selected, BrowserError> {
        let reply: SelectReply = {
            let mut session = self.live().await?;
            let page = session.current();
            let args = serde_json::json!({
                "index": index,
                "wanted": wanted,
                "base": self.next_index(),
                "maxText": MAX_TEXT_CHARS,
            });
            session.call(&page, "selectOption", args).await?
        };
        self.advance_index(reply.next);
        let mut reply = reply;
        let policy = self.policy();
        let redactor = policy.redactor();
        let element = live_element(index, reply.stale, reply.el, redactor)?;
        redact_options(&mut reply.options, redactor);
        reply.text = redactor.redact_cut(&reply.text, MAX_TEXT_CHARS as usize);
        redactor.redact_in_place(&mut reply.value);
        if let Some(text) = &mut reply.disabled_option {
            *text = redactor.redact_cut(text, MAX_TEXT_CHARS as usize);
        }
        if reply.not_dropdown {
            return Err(not_a_dropdown(index, &element));
        }
        if reply.no_match {
            return Err(BrowserError::invalid(format!(
                "dropdown [{index}] has no option {wanted:?}; its options are {}",
                option_list(&reply.options, 30)
            )));
        }
        if let Some(text) = reply.disabled_option {
            return Err(BrowserError::invalid(format!(
                "the option {text:?} of dropdown [{index}] is disabled and cannot be chosen"
            )));
        }
        if reply.disabled_select {
            return Err(BrowserError::invalid(format!(
                "dropdown [{index}] is disabled; nothing can be chosen in it"
            )));
        }
        if reply.native {
            return Ok(Selected {
                element,
                text: reply.text,
                value: reply.value,
                confirmed: reply.selected,
                effects: None,
            });
        }
        let Some(option) = reply.option else {
            return Err(BrowserError::script("the option to click is missing"));
        };
        let clicked = match self.click(option).await {
            Err(BrowserError::NotClickable { .. }) => {
                // The list is closed: open it, then pick.
                self.click(index).await?;
                self.click(option).await
            }
            other => other,
        };
        let effects = clicked
            .map_err(|e| match e {
                BrowserError::NotClickable { reason, .. } => BrowserError::NotClickable {
                    index,
                    reason: format!("its option {:?} {reason}", reply.text),
                },
                other => other,
            })?
            .effects;
        let confirmed = self.confirm_selection(index, option, &reply.text).await;
        Ok(Selected {
            element,
            text: reply.text,
            value: reply.value,
            confirmed,
            effects: Some(effects),
        })
    }

    /// Whether an ARIA dropdown shows `text` as chosen: the option says it
    /// is selected, or the dropdown's own text or value now shows it.
    async fn confirm_selection(&self, index: u32, option: u32, text: &str) -> bool {
        if let Ok(chosen) = self.element(option).await
            && chosen.selected == Some(true)
        {
            return true;
        }
        if let Ok(dropdown) = self.dropdown_options(index).await
            && dropdown
                .options
                .iter()
                .any(|o| o.selected && o.text == text)
        {
            return true;
        }
        match self.element(index).await {
            Ok(el) => [el.value, el.text, el.name]
                .iter()
                .flatten()
                .any(|shown| shown.contains(text)),
            Err(_) => false,
        }
    }

    /// Puts files into the file input element `index` reaches, through
    /// `DOM.setFileInputFiles`, as a person choosing them in the file
    /// dialog would (the page gets `input` and `change` events). The input
    /// is the element itself, the control of a `<label>`, one inside the
    /// element, or one laid over it (a transparent input on a styled box:
    /// what a click at the element's centre hits). Any other control (a
    /// 📎 button whose script clicks a hidden input) is clicked with the
    /// browser's file chooser intercepted (`Page.setInterceptFileChooserDialog`):
    /// the chooser it opens names its input, which gets the files. Paths
    /// are used as given: check them first (see
    /// [`SafetyPolicy::resolve_file`](crate::SafetyPolicy::resolve_file)).
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`]; [`BrowserError::InvalidInput`] for a
    /// text field or dropdown, a control that opens no file chooser within
    /// [`CHOOSER_WAIT`], or several files for an input that takes one.
    pub async fn upload_file(
        &self,
        index: u32,
        files: &[PathBuf],
    ) -> Result<Uploaded, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let args = serde_json::json!({ "index": index, "maxText": MAX_TEXT_CHARS });
        let reply: FileReply = session.call(&page, "fileInput", args).await?;
        let element = live_element(index, reply.stale, reply.el, session.redactor())?;
        if let Some(what) = reply.not_file {
            drop(session);
            if !reply.clickable {
                return Err(BrowserError::invalid(format!(
                    "element [{index}] is {what}, not a file input; pick an <input type=file>, \
                     its label, or the control that opens the file chooser from the page map"
                )));
            }
            return self
                .upload_through_chooser(index, element, &what, files)
                .await;
        }
        if files.len() > 1 && !reply.multiple {
            return Err(BrowserError::invalid(format!(
                "file input [{index}] takes one file, not {}",
                files.len()
            )));
        }
        let node = session.element_object(&page, "fileNode", index).await?;
        let node = live(index, false, node)?;
        let mut params = SetFileInputFilesParams::new(paths(files));
        params.object_id = Some(node);
        session.exec(&page, params, "choosing the file").await?;
        let args = serde_json::json!({ "index": index });
        let names: NamesReply = session.call(&page, "fileNames", args).await?;
        live(index, names.stale, Some(()))?;
        let names = redacted_names(session.redactor(), &names.names);
        Ok(Uploaded {
            element,
            names,
            chooser: None,
            cleared: false,
        })
    }

    /// Clicks control `index` with the file chooser intercepted, and puts
    /// the files into the input the chooser it opened belongs to.
    async fn upload_through_chooser(
        &self,
        index: u32,
        element: Element,
        what: &str,
        files: &[PathBuf],
    ) -> Result<Uploaded, BrowserError> {
        if self.live().await?.in_other_site_frame(index) {
            return Err(BrowserError::script(format!(
                "element [{index}] is inside a frame from another site, where files cannot \
                 be chosen; open the frame's address in a tab of its own (navigate) and try \
                 there"
            )));
        }
        let (clicked, chooser) = self.click_watching(index, Some(CHOOSER_WAIT)).await?;
        let effects = clicked.effects;
        let mut session = self.live().await?;
        // Whatever happens to the files, the click happened: an error
        // says what it did too.
        let did = clicked_sentence(&effects, session.redactor());
        let Some((page, chooser)) = chooser else {
            return Err(BrowserError::invalid(format!(
                "element [{index}] is {what}, not a file input, and clicking it opened no file \
                 chooser within {} s; pick an <input type=file>, its label, or the control \
                 that opens the file chooser from the page map. {did}",
                CHOOSER_WAIT.as_secs()
            )));
        };
        let Some(node) = chooser.backend_node_id else {
            return Err(BrowserError::invalid(format!(
                "clicking element [{index}] opened a file chooser that belongs to no file input \
                 (a script's file picker), which cannot be given files. {did}"
            )));
        };
        if files.len() > 1 && chooser.mode == FileChooserOpenedMode::SelectSingle {
            return Err(BrowserError::invalid(format!(
                "the file chooser element [{index}] opens takes one file, not {}. {did}",
                files.len()
            )));
        }
        // The chooser is answered in the tab the click happened in, which
        // a tab the click opened may have replaced as the current one.
        let chosen = choose_in(&mut session, &page, node, files).await;
        let chosen = chosen.map_err(|error| with_sentence(error, &did))?;
        let names = redacted_names(session.redactor(), &chosen.names);
        Ok(Uploaded {
            element,
            names,
            chooser: Some(effects),
            cleared: chosen.cleared,
        })
    }
}

/// What [`choose_in`] saw.
struct Chosen {
    /// The names the input held when the page was told of them (its
    /// `input` or `change` event), else those it holds now.
    names: Vec<String>,
    /// The page took the files and then emptied the input itself.
    cleared: bool,
}

/// Gives `files` to the file input `node` of `page` (the chooser it
/// opened is answered with them), and reads what the page took: the
/// names the input held when its `input` or `change` event fired, since a
/// page that sends a file at once may empty the input in that very event.
async fn choose_in(
    session: &mut Session,
    page: &chromiumoxide::Page,
    node: BackendNodeId,
    files: &[PathBuf],
) -> Result<Chosen, BrowserError> {
    let resolve = ResolveNodeParams {
        backend_node_id: Some(node),
        ..ResolveNodeParams::default()
    };
    let input = session
        .exec(page, resolve, "finding the file input")
        .await?;
    let Some(object) = input.object.object_id else {
        return Err(BrowserError::script("the file input has no handle"));
    };
    // A closure only the returned function can read: the page cannot see
    // or change what it notes.
    let mut watch = CallFunctionOnParams::new(
        "function () { let seen = null; const input = this; \
         const note = () => { if (seen === null) seen = Array.from(input.files || [], (f) => f.name); }; \
         input.addEventListener('input', note, { capture: true, once: true }); \
         input.addEventListener('change', note, { capture: true, once: true }); \
         return () => ({ seen, now: Array.from(input.files || [], (f) => f.name) }); }",
    );
    watch.object_id = Some(object);
    let watcher = session
        .exec(page, watch, "watching the file input")
        .await?
        .result
        .object_id
        .ok_or_else(|| BrowserError::script("the file input cannot be watched"))?;
    let mut params = SetFileInputFilesParams::new(paths(files));
    params.backend_node_id = Some(node);
    session.exec(page, params, "choosing the file").await?;
    let mut read = CallFunctionOnParams::new("function () { return this(); }");
    read.object_id = Some(watcher);
    read.return_by_value = Some(true);
    let read = session.exec(page, read, "reading the chosen files").await?;
    #[derive(Deserialize, Default)]
    struct Seen {
        seen: Option<Vec<String>>,
        #[serde(default)]
        now: Vec<String>,
    }
    let seen: Seen = read
        .result
        .value
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    Ok(match seen.seen {
        Some(names) if !names.is_empty() => Chosen {
            cleared: seen.now.is_empty(),
            names,
        },
        _ => Chosen {
            names: seen.now,
            cleared: false,
        },
    })
}

/// What a click did besides its own effect, as a sentence for an error
/// about what came after it.
fn clicked_sentence(effects: &Effects, redactor: &Redactor) -> String {
    let said = if let Some(tab) = &effects.new_tab {
        format!(
            "The click opened a new tab, which is now current: Tab {} ({}).",
            tab.id, tab.url
        )
    } else if effects.navigated && effects.still_loading {
        format!(
            "The click made the page load {}, still loading.",
            effects.url
        )
    } else if effects.navigated {
        format!("The click made the page load {}.", effects.url)
    } else {
        "The click changed nothing else.".to_owned()
    };
    redactor.redact(&said).into_owned()
}

/// `error` with `sentence` after its message, for an error whose message
/// the model reads (a fatal one says all there is).
pub(crate) fn with_sentence(error: BrowserError, sentence: &str) -> BrowserError {
    let joined = |detail: String| format!("{}. {sentence}", detail.trim_end_matches('.'));
    match error {
        BrowserError::InvalidInput { detail } => BrowserError::InvalidInput {
            detail: joined(detail),
        },
        BrowserError::Script { detail } => BrowserError::Script {
            detail: joined(detail),
        },
        BrowserError::Protocol { detail } => BrowserError::Protocol {
            detail: joined(detail),
        },
        other => other,
    }
}

/// The paths as `DOM.setFileInputFiles` takes them.
fn paths(files: &[PathBuf]) -> Vec<String> {
    files.iter().map(|p| p.display().to_string()).collect()
}

/// File names as the page reports them, redacted: a name may hold a
/// secret the model must not read.
fn redacted_names(redactor: &Redactor, names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|n| redactor.redact(n).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::TabInfo;

    #[test]
    fn sentences_follow_an_error_s_message() {
        let error = with_sentence(
            BrowserError::invalid("no chooser."),
            "The click changed nothing else.",
        );
        let expected = BrowserError::invalid("no chooser. The click changed nothing else.");
        assert_eq!(error.to_string(), expected.to_string());
        assert!(matches!(
            with_sentence(BrowserError::Closed, "x"),
            BrowserError::Closed
        ));
    }

    #[test]
    fn a_click_that_opened_a_tab_says_so() {
        let effects = Effects {
            new_tab: Some(TabInfo {
                id: "t2".into(),
                url: "http://127.0.0.1/help".into(),
                title: String::new(),
                current: true,
            }),
            ..Effects::default()
        };
        let said = clicked_sentence(&effects, &Redactor::default());
        assert!(
            said.contains("opened a new tab") && said.contains("t2"),
            "{said}"
        );
        let said = clicked_sentence(&Effects::default(), &Redactor::default());
        assert_eq!(said, "The click changed nothing else.");
    }
}
