//! Key names (`"Enter"`, `"Control+a"`, `"Shift+Tab"`) to DevTools key
//! events.

use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType};
use chromiumoxide::keys::get_key_definition;

use crate::error::BrowserError;

const ALT: i64 = 1;
const CONTROL: i64 = 2;
const META: i64 = 4;
const SHIFT: i64 = 8;

/// One key as the protocol describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    key: String,
    code: String,
    key_code: i64,
    text: Option<String>,
}

/// One key combination: modifiers held while one key is pressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chord {
    modifiers: Vec<(Key, i64)>,
    key: Key,
}

/// Parses `"Enter"`, `"Control+a"`, `"Tab Tab Enter"`: combinations
/// separated by spaces, keys within one by `+`.
pub(crate) fn parse_keys(spec: &str) -> Result<Vec<Chord>, BrowserError> {
    let chords: Vec<&str> = spec.split_whitespace().collect();
    if chords.is_empty() {
        return Err(BrowserError::invalid(
            "no keys given: name a key such as `Enter`, `Escape`, `Tab` or `Control+a`",
        ));
    }
    chords.into_iter().map(parse_chord).collect()
}

fn parse_chord(chord: &str) -> Result<Chord, BrowserError> {
    // `Control++` and a lone `+` press the plus key.
    let mut parts: Vec<&str> = if chord == "+" {
        vec!["+"]
    } else if let Some(head) = chord.strip_suffix("++") {
        head.split('+').chain(std::iter::once("+")).collect()
    } else {
        chord.split('+').collect()
    };
    if parts.iter().any(|p| p.is_empty()) {
        return Err(unknown(chord));
    }
    let last = parts.pop().ok_or_else(|| unknown(chord))?;
    let mut modifiers = Vec::with_capacity(parts.len());
    for part in parts {
        let key = lookup(part)?;
        let bit = modifier_bit(&key.key).ok_or_else(|| {
            BrowserError::invalid(format!(
                "`{part}` in `{chord}` is not a modifier: only Control, Shift, Alt and Meta \
                 can be combined with `+`; separate keys pressed one after another by spaces"
            ))
        })?;
        modifiers.push((key, bit));
    }
    Ok(Chord {
        modifiers,
        key: lookup(last)?,
    })
}

fn unknown(chord: &str) -> BrowserError {
    BrowserError::invalid(format!(
        "cannot read the keys `{chord}`: write one key (`Enter`) or modifiers and a key \
         joined by `+` (`Control+a`)"
    ))
}

fn modifier_bit(key: &str) -> Option<i64> {
    match key {
        "Alt" => Some(ALT),
        "Control" => Some(CONTROL),
        "Meta" => Some(META),
        "Shift" => Some(SHIFT),
        _ => None,
    }
}

/// Common names that are not DOM `key` values.
fn alias(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ctrl" | "control" => "Control",
        "cmd" | "command" | "meta" | "super" | "win" | "windows" => "Meta",
        "alt" | "option" | "opt" => "Alt",
        "shift" => "Shift",
        "esc" | "escape" => "Escape",
        "enter" | "return" => "Enter",
        "space" | "spacebar" => " ",
        "del" | "delete" => "Delete",
        "backspace" => "Backspace",
        "tab" => "Tab",
        "up" | "arrowup" => "ArrowUp",
        "down" | "arrowdown" => "ArrowDown",
        "left" | "arrowleft" => "ArrowLeft",
        "right" | "arrowright" => "ArrowRight",
        "pgup" | "pageup" => "PageUp",
        "pgdn" | "pagedown" => "PageDown",
        "home" => "Home",
        "end" => "End",
        "ins" | "insert" => "Insert",
        "plus" => "+",
        _ => return None,
    })
}

fn lookup(name: &str) -> Result<Key, BrowserError> {
    let canonical = alias(name).unwrap_or(name);
    if let Some(def) = get_key_definition(canonical).or_else(|| {
        // `f5` for `F5` and the like.
        (canonical.len() > 1)
            .then(|| get_key_definition(canonical.to_ascii_uppercase()))
            .flatten()
    }) {
        let text = def
            .text
            .map(str::to_owned)
            .or_else(|| (def.key.chars().count() == 1).then(|| def.key.to_owned()));
        return Ok(Key {
            key: def.key.to_owned(),
            code: def.code.to_owned(),
            key_code: def.key_code,
            text,
        });
    }
    let mut chars = canonical.chars();
    match (chars.next(), chars.next()) {
        // Any other single character (é, 日): no physical key, only text.
        (Some(c), None) => Ok(Key {
            key: c.to_string(),
            code: String::new(),
            key_code: 0,
            text: Some(c.to_string()),
        }),
        _ => Err(BrowserError::invalid(format!(
            "unknown key `{name}`: use DOM key names such as Enter, Escape, Tab, Backspace, \
             Delete, ArrowDown, PageDown, Home, End, F5, a single character, or a combination \
             such as Control+a"
        ))),
    }
}

impl Chord {
    /// The protocol events for this chord: modifiers down, the key down and
    /// up, modifiers up in reverse order.
    pub(crate) fn events(&self) -> Vec<DispatchKeyEventParams> {
        let mut events = Vec::with_capacity(2 + 2 * self.modifiers.len());
        let mut held = 0;
        for (key, bit) in &self.modifiers {
            held |= bit;
            events.push(event(DispatchKeyEventType::RawKeyDown, key, held, None));
        }
        // With Control, Alt or Meta held a key is a shortcut and types
        // nothing; Shift changes the character of a letter.
        let text = if held & (CONTROL | ALT | META) == 0 {
            self.key.text.as_ref().map(|t| {
                if held & SHIFT != 0 {
                    t.to_uppercase()
                } else {
                    t.clone()
                }
            })
        } else {
            None
        };
        let mut main = self.key.clone();
        if let Some(t) = &text
            && main.key.chars().count() == 1
        {
            main.key.clone_from(t);
        }
        let down = if text.is_some() {
            DispatchKeyEventType::KeyDown
        } else {
            DispatchKeyEventType::RawKeyDown
        };
        events.push(event(down, &main, held, text));
        events.push(event(DispatchKeyEventType::KeyUp, &main, held, None));
        for (key, bit) in self.modifiers.iter().rev() {
            held &= !bit;
            events.push(event(DispatchKeyEventType::KeyUp, key, held, None));
        }
        events
    }
}

fn event(
    kind: DispatchKeyEventType,
    key: &Key,
    modifiers: i64,
    text: Option<String>,
) -> DispatchKeyEventParams {
    let mut params = DispatchKeyEventParams::new(kind);
    params.modifiers = Some(modifiers);
    params.key = Some(key.key.clone());
    if !key.code.is_empty() {
        params.code = Some(key.code.clone());
    }
    if key.key_code != 0 {
        params.windows_virtual_key_code = Some(key.key_code);
        params.native_virtual_key_code = Some(key.key_code);
    }
    params.unmodified_text.clone_from(&text);
    params.text = text;
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(spec: &str) -> Vec<(String, String, i64, Option<String>)> {
        parse_keys(spec)
            .unwrap()
            .iter()
            .flat_map(Chord::events)
            .map(|e| {
                (
                    e.r#type.as_ref().to_owned(),
                    e.key.unwrap_or_default(),
                    e.modifiers.unwrap_or_default(),
                    e.text,
                )
            })
            .collect()
    }

    #[test]
    fn enter_types_a_carriage_return() {
        assert_eq!(
            kinds("Enter"),
            vec![
                ("keyDown".into(), "Enter".into(), 0, Some("\r".into())),
                ("keyUp".into(), "Enter".into(), 0, None),
            ]
        );
    }

    #[test]
    fn control_a_holds_control_and_types_nothing() {
        assert_eq!(
            kinds("Control+a"),
            vec![
                ("rawKeyDown".into(), "Control".into(), 2, None),
                ("rawKeyDown".into(), "a".into(), 2, None),
                ("keyUp".into(), "a".into(), 2, None),
                ("keyUp".into(), "Control".into(), 0, None),
            ]
        );
    }

    #[test]
    fn aliases_sequences_and_shift() {
        let events = kinds("ctrl+shift+Tab esc Shift+a");
        assert_eq!(events[0].1, "Control");
        assert_eq!(events[1], ("rawKeyDown".into(), "Shift".into(), 10, None));
        assert_eq!(events[2], ("rawKeyDown".into(), "Tab".into(), 10, None));
        assert!(events.iter().any(|e| e.1 == "Escape"));
        assert!(events.contains(&("keyDown".into(), "A".into(), 8, Some("A".into()))));
    }

    #[test]
    fn unicode_characters_and_plus() {
        assert_eq!(kinds("é")[0].3.as_deref(), Some("é"));
        assert_eq!(kinds("Control++")[1].1, "+");
        assert_eq!(kinds("f5")[0].1, "F5");
    }

    #[test]
    fn bad_keys_say_what_is_accepted() {
        let e = parse_keys("Hyper").unwrap_err().to_string();
        assert!(e.contains("unknown key `Hyper`"), "{e}");
        let e = parse_keys("a+b").unwrap_err().to_string();
        assert!(e.contains("not a modifier"), "{e}");
        assert!(parse_keys("   ").is_err());
        assert!(parse_keys("Control+").is_err());
    }
}
