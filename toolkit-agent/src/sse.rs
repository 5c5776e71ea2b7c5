//! Server-sent events: bytes in, each event's `data` out.

/// Splits a byte stream into events, however the bytes are chunked.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    pending: Vec<u8>,
    data: String,
}

impl SseDecoder {
    /// Takes in bytes; returns the data of every event they complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            self.line(line, &mut events);
        }
        events
    }

    /// The data of an event the stream ended without closing.
    pub(crate) fn finish(mut self) -> Option<String> {
        if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            let mut events = Vec::new();
            self.line(line.trim_end_matches('\r'), &mut events);
        }
        (!self.data.is_empty()).then_some(self.data)
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                events.push(std::mem::take(&mut self.data));
            }
            return;
        }
        if let Some(rest) = line.strip_prefix("data:") {
            if !self.data.is_empty() {
                self.data.push('\n');
            }
            self.data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
        // `event:`, `id:`, `retry:` and comments carry nothing the turn
        // needs: every provider repeats the event type inside the data.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks() {
        let mut decoder = SseDecoder::default();
        assert!(
            decoder
                .push(b"event: message_start\r\ndata: {\"a\":")
                .is_empty()
        );
        assert_eq!(
            decoder.push(b"1}\r\n\r\n: comment\n\ndata: [DONE]\n\n"),
            ["{\"a\":1}", "[DONE]"]
        );
        assert!(decoder.push(b"data: {\"b\":2}").is_empty());
        assert_eq!(decoder.finish().as_deref(), Some("{\"b\":2}"));
    }
}
