//! Audio a tool returns: base64 data and its MIME type, checked when built.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::result::media::{decoded_len, media_mime};

/// A sound in a tool's output: base64 data held in memory and its MIME type
/// (`audio/*`).
///
/// Every constructor checks what it is given, so broken audio is an error
/// where it is made. The bytes themselves are not checked against the type:
/// audio formats are many, and a provider that takes audio decodes it
/// itself.
///
/// ```
/// use toolkit_core::{Audio, Block, ToolResult};
///
/// let audio = Audio::from_bytes("audio/wav", b"RIFF\0\0\0\0WAVEfmt ")?;
/// assert_eq!(audio.mime_type(), "audio/wav");
/// assert_eq!(audio.byte_len(), 16);
/// let result = ToolResult::blocks([Block::text("The recording:"), Block::audio(audio)]);
/// assert_eq!(result.to_text(), "The recording:\n[audio: audio/wav, 16 B]");
///
/// assert!(Audio::from_base64("image/png", "AAAA").is_err());
/// assert!(Audio::from_base64("audio/wav", "not base64!").is_err());
/// # Ok::<(), toolkit_core::AudioError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "AudioParts", into = "AudioParts")]
pub struct Audio(Arc<AudioData>);

// Shared, as an image is: cloning a result copies no audio data.
#[derive(Clone, PartialEq, Eq)]
struct AudioData {
    mime_type: String,
    data: Arc<str>,
}

impl Audio {
    /// Audio from raw bytes, encoded to base64 once, here.
    pub fn from_bytes(mime_type: &str, bytes: &[u8]) -> Result<Self, AudioError> {
        let mime_type = audio_mime(mime_type)?;
        Ok(Self(Arc::new(AudioData {
            mime_type,
            data: STANDARD.encode(bytes).into(),
        })))
    }

    /// WAV audio from its bytes.
    pub fn wav(bytes: &[u8]) -> Result<Self, AudioError> {
        Self::from_bytes("audio/wav", bytes)
    }

    /// Audio from base64 data (standard alphabet, with padding, no
    /// whitespace and no `data:` prefix), decoded once to check it and kept
    /// as given.
    pub fn from_base64(mime_type: &str, data: impl Into<String>) -> Result<Self, AudioError> {
        let mime_type = audio_mime(mime_type)?;
        let data: String = data.into();
        STANDARD
            .decode(data.as_bytes())
            .map_err(|error| AudioError::InvalidBase64 {
                reason: error.to_string(),
            })?;
        Ok(Self(Arc::new(AudioData {
            mime_type,
            data: data.into(),
        })))
    }

    /// The MIME type, lower-case, such as `audio/wav`.
    pub fn mime_type(&self) -> &str {
        &self.0.mime_type
    }

    /// The base64 data.
    pub fn data(&self) -> &str {
        &self.0.data
    }

    /// The number of bytes the data decodes to.
    pub fn byte_len(&self) -> usize {
        decoded_len(&self.0.data)
    }

    pub(crate) fn shared_data(&self) -> Arc<str> {
        Arc::clone(&self.0.data)
    }
}

impl fmt::Debug for Audio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Audio")
            .field("mime_type", &self.0.mime_type)
            .field("base64_len", &self.0.data.len())
            .finish()
    }
}

/// The serialized form of an [`Audio`]: `{"mime_type", "data"}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AudioParts {
    mime_type: String,
    data: String,
}

impl TryFrom<AudioParts> for Audio {
    type Error = AudioError;

    fn try_from(parts: AudioParts) -> Result<Self, Self::Error> {
        Self::from_base64(&parts.mime_type, parts.data)
    }
}

impl From<Audio> for AudioParts {
    fn from(audio: Audio) -> Self {
        Self {
            mime_type: audio.0.mime_type.clone(),
            data: audio.0.data.to_string(),
        }
    }
}

/// Why audio could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AudioError {
    /// The MIME type is not `audio/*`.
    NotAudio {
        /// The MIME type given.
        mime_type: String,
    },
    /// The data is not valid standard base64.
    InvalidBase64 {
        /// What the decoder reported.
        reason: String,
    },
}

impl fmt::Display for AudioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAudio { mime_type } => {
                write!(
                    f,
                    "`{mime_type}` is not an audio MIME type (expected audio/*)"
                )
            }
            Self::InvalidBase64 { reason } => write!(f, "audio data is not valid base64: {reason}"),
        }
    }
}

impl std::error::Error for AudioError {}

fn audio_mime(mime_type: &str) -> Result<String, AudioError> {
    media_mime(mime_type)
        .filter(|mime| mime.starts_with("audio/"))
        .ok_or_else(|| AudioError::NotAudio {
            mime_type: mime_type.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_is_normalised_and_checked() {
        assert_eq!(audio_mime(" Audio/WAV ").unwrap(), "audio/wav");
        for bad in ["audio/", "audio", "image/png", "audio/w a v", ""] {
            assert!(audio_mime(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn json_form_round_trips_and_checks() {
        let audio = Audio::from_bytes("audio/mpeg", b"ID3").unwrap();
        let json = serde_json::to_value(&audio).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"mime_type": "audio/mpeg", "data": "SUQz"})
        );
        assert_eq!(serde_json::from_value::<Audio>(json).unwrap(), audio);
        let bad = serde_json::json!({"mime_type": "audio/wav", "data": "%%"});
        assert!(serde_json::from_value::<Audio>(bad).is_err());
    }
}
