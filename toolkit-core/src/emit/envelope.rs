//! The envelope, for hosts that want plain strings.

use serde_json::Value;

use super::resolve::object;
use super::{EmitOptions, Emitted};
use crate::{Envelope, ToolCallResult};

/// One turn's results as `{"ok": bool, "output": string}` objects, one per
/// call, in call order, each output cut to
/// [`EmitOptions::envelope_limit`] characters. Images appear as
/// `[image: <type>]`; the note follows the output on its own line.
///
/// ```
/// use toolkit_core::emit::{self, EmitOptions};
/// use toolkit_core::{ToolCallResult, ToolResult};
///
/// let turn = [ToolCallResult::new("1", "search", ToolResult::text("3 hits"))];
/// let items = emit::envelope(&turn, &EmitOptions::default()).items;
/// assert_eq!(items[0], serde_json::json!({"ok": true, "output": "3 hits"}));
/// ```
pub fn envelope(turn: &[ToolCallResult], options: &EmitOptions) -> Emitted {
    let items = turn
        .iter()
        .map(|call| {
            let envelope = Envelope::of(&call.result, options.envelope_limit());
            object([
                ("ok", Value::Bool(envelope.ok)),
                ("output", Value::String(envelope.output)),
            ])
        })
        .collect();
    Emitted {
        items,
        problems: Vec::new(),
    }
}
