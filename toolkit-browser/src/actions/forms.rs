//! Dropdowns and files: `dropdown_options`, `select_option`, `upload_file`.

use std::fmt::Write as _;

use toolkit_core::{ToolResult, tool};

use super::{Reply, act, check_navigation, effects_sentence, label, stop_if_fatal};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::page::forms::{option_list, with_sentence};

/// List the options of the dropdown numbered `index` in the page map: a
/// `<select>`, or a custom dropdown (an ARIA listbox or menu).
#[tool(catalogue = false)]
pub async fn dropdown_options(
    /// The dropdown's number in the page map.
    index: u32,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let dropdown = browser.dropdown_options(index).await?;
        let what = label(&dropdown.element);
        if dropdown.options.is_empty() {
            let hint = if dropdown.collapsed {
                "; it is closed, and its options may appear only once it is open: click it, \
                 then list them again"
            } else {
                ""
            };
            return Err(BrowserError::invalid(format!(
                "dropdown {what} has no options{hint}"
            )));
        }
        let mut text = format!("{what} has {} option(s):", dropdown.options.len());
        for (k, option) in dropdown.options.iter().enumerate().take(200) {
            let _ = write!(text, "\n{}. {:?}", k + 1, option.text);
            if !option.value.is_empty() && option.value != option.text {
                let _ = write!(text, " (value {:?})", option.value);
            }
            if option.selected {
                text.push_str(" [selected]");
            }
            if option.disabled {
                text.push_str(" [disabled]");
            }
        }
        if dropdown.options.len() > 200 {
            let _ = write!(text, "\n(and {} more)", dropdown.options.len() - 200);
        }
        let _ = write!(
            text,
            "\nChoose one with select_option, by its text or value."
        );
        if dropdown.multiple {
            text.push_str(" It takes several options: choose them one at a time.");
        }
        Ok(Reply::text(text).with_show_once().memory(format!(
            "Options of {what}: {}",
            option_list(&dropdown.options, 10)
        )))
    })
    .await
}

/// Choose an option of the dropdown numbered `index` (a `<select>` or a
/// custom dropdown), by the option's text or value, as listed by
/// dropdown_options.
#[tool(catalogue = false)]
pub async fn select_option(
    /// The dropdown's number in the page map.
    index: u32,
    /// The option's text or value (case does not matter; a part of the text
    /// works when no other option shares it).
    option: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        let before = browser.current_tab().await?;
        let chosen = browser.select_option(index, &option).await;
        stop_if_fatal(&chosen)?;
        // Choosing a custom option is a click, which may navigate.
        let note = check_navigation(&browser, &policy, Some(&before.id)).await?;
        let chosen = chosen?;
        let what = label(&chosen.element);
        let mut reply = Reply::text(format!("Selected {:?} in {what}.", chosen.text))
            .memory(format!("Selected {:?} in {what}", chosen.text));
        if !chosen.confirmed {
            reply = reply.say(
                "The dropdown does not show it as selected yet: check the page map before \
                 going on.",
            );
        }
        if let Some(effects) = &chosen.effects {
            reply = reply.say(effects_sentence(&browser, effects).await?);
        }
        Ok(reply.say(note))
    })
    .await
}

/// Choose a file for the upload control numbered `index`, as a person
/// would in the file dialog: a file input, its label, a box a file input
/// lies over, or a button that opens a file dialog (📎, "Attach", "Upload";
/// it is clicked and its dialog answered). Only files in the folder the
/// host provides can be used; give the path relative to it.
#[tool(catalogue = false)]
pub async fn upload_file(
    /// The number in the page map of the file input, its label, or the
    /// control that opens the file dialog.
    index: u32,
    /// The file's path, relative to the files folder.
    path: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        // Opened and checked now, and staged as a private copy: Chromium
        // reads the file only when the form is sent, by which time the
        // path could name another file.
        let (file, real) = policy.open_file(&path)?;
        let file_name = real.file_name().unwrap_or(real.as_os_str());
        let staged = browser.stage_upload(file, file_name)?;
        let before = browser.current_tab().await?;
        let upload = browser
            .upload_file(index, std::slice::from_ref(&staged))
            .await;
        stop_if_fatal(&upload)?;
        // The control may have been clicked, and a click may navigate.
        let note = check_navigation(&browser, &policy, Some(&before.id)).await?;
        // What the page was stopped from belongs with an error too.
        let upload = match upload {
            Err(error) if !note.is_empty() => return Err(with_sentence(error, &note)),
            other => other?,
        };
        let what = label(&upload.element);
        let name = file_name.to_string_lossy().into_owned();
        if !upload.names.contains(&name) {
            return Err(BrowserError::script(format!(
                "the file input {what} did not take the file {name:?} (it holds {:?})",
                upload.names
            )));
        }
        let size = std::fs::metadata(&staged).map(|m| m.len()).unwrap_or(0);
        let mut reply = Reply::text(format!(
            "Chose the file {name:?} ({size} bytes) for {what}."
        ))
        .memory(format!("Chose the file {name:?} for {what}"));
        if let Some(effects) = &upload.chooser {
            reply = reply
                .say("It was clicked, and the file went to the file dialog it opened.")
                .say(effects_sentence(&browser, effects).await?);
        }
        if upload.cleared {
            reply = reply.say(
                "The page took the file and then emptied the input itself, as a page that \
                 sends a file as soon as it is chosen does.",
            );
        }
        Ok(reply.say(note))
    })
    .await
}
