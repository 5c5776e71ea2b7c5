//! Images a tool returns: validated when built, loaded from disk only when emitted.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// An image in a tool's output.
///
/// An image carries its MIME type and exactly one source: base64 data held in
/// memory, or a file path that is read when the result is emitted (so a tool
/// can point at a large screenshot without loading it). Every constructor
/// validates what it is given, so a broken image is an error where it is made,
/// not a message the provider rejects later.
///
/// ```
/// use toolkit_core::Image;
///
/// // The smallest valid PNG: 1×1 pixel.
/// let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// let image = Image::from_base64("image/png", png)?;
/// assert_eq!(image.mime_type(), "image/png");
///
/// assert!(Image::from_base64("text/plain", png).is_err());
/// assert!(Image::from_base64("image/png", "not base64!").is_err());
/// # Ok::<(), toolkit_core::ImageError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ImageParts", into = "ImageParts")]
pub struct Image(Arc<ImageData>);

// Shared, so that an image costs a content block one pointer: most blocks
// are text, and every result moves through several async layers on the
// way out of a call.
#[derive(Clone, PartialEq, Eq)]
struct ImageData {
    mime_type: String,
    source: ImageSource,
}

/// Where an [`Image`]'s bytes come from.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImageSource {
    /// Base64 data (standard alphabet, padded), already validated.
    ///
    /// Shared, so cloning a result that holds a large image copies nothing.
    Base64(Arc<str>),
    /// A file read when the result is emitted, and only if it lies inside the
    /// folder the host allows (see [`EmitOptions::with_image_dir`](crate::emit::EmitOptions::with_image_dir)).
    Path(PathBuf),
}

impl Image {
    fn new(mime_type: String, source: ImageSource) -> Self {
        Self(Arc::new(ImageData { mime_type, source }))
    }

    /// An image from raw bytes, encoded to base64 once, here.
    ///
    /// The bytes must match `mime_type` for the formats the providers accept
    /// (PNG, JPEG, GIF, WebP): a JPEG labelled `image/png` is an error.
    pub fn from_bytes(mime_type: &str, bytes: &[u8]) -> Result<Self, ImageError> {
        let mime_type = image_mime(mime_type)?;
        check_signature(&mime_type, bytes)?;
        Ok(Self::new(
            mime_type,
            ImageSource::Base64(STANDARD.encode(bytes).into()),
        ))
    }

    /// A PNG image from its bytes.
    pub fn png(bytes: &[u8]) -> Result<Self, ImageError> {
        Self::from_bytes("image/png", bytes)
    }

    /// A JPEG image from its bytes.
    pub fn jpeg(bytes: &[u8]) -> Result<Self, ImageError> {
        Self::from_bytes("image/jpeg", bytes)
    }

    /// An image from base64 data (standard alphabet, with padding, no
    /// whitespace and no `data:` prefix).
    ///
    /// The data is decoded once to check it, and kept as given.
    pub fn from_base64(mime_type: &str, data: impl Into<String>) -> Result<Self, ImageError> {
        let mime_type = image_mime(mime_type)?;
        let data: String = data.into();
        let bytes =
            STANDARD
                .decode(data.as_bytes())
                .map_err(|error| ImageError::InvalidBase64 {
                    reason: error.to_string(),
                })?;
        check_signature(&mime_type, &bytes)?;
        Ok(Self::new(mime_type, ImageSource::Base64(data.into())))
    }

    /// An image stored in a file, read when the result is emitted.
    ///
    /// The path is checked against the host's allowed folder at emission time,
    /// because only the host knows that folder.
    pub fn from_path(mime_type: &str, path: impl Into<PathBuf>) -> Result<Self, ImageError> {
        Ok(Self::new(
            image_mime(mime_type)?,
            ImageSource::Path(path.into()),
        ))
    }

    /// An image stored in a file, its MIME type taken from the extension
    /// (`png`, `jpg`/`jpeg`, `gif`, `webp`).
    pub fn from_file(path: impl Into<PathBuf>) -> Result<Self, ImageError> {
        let path = path.into();
        let mime_type = mime_for_extension(&path)
            .ok_or_else(|| ImageError::UnknownExtension { path: path.clone() })?;
        Self::from_path(mime_type, path)
    }

    /// An image from optional parts, as they arrive from configuration or
    /// another program: exactly one of `data` (base64) and `path` must be set.
    pub fn from_parts(
        mime_type: &str,
        data: Option<String>,
        path: Option<PathBuf>,
    ) -> Result<Self, ImageError> {
        match (data, path) {
            (Some(data), None) => Self::from_base64(mime_type, data),
            (None, Some(path)) => Self::from_path(mime_type, path),
            (Some(_), Some(_)) => Err(ImageError::BothDataAndPath),
            (None, None) => Err(ImageError::NeitherDataNorPath),
        }
    }

    /// The MIME type, lower-case, such as `image/png`.
    pub fn mime_type(&self) -> &str {
        &self.0.mime_type
    }

    /// Where the bytes come from.
    pub fn source(&self) -> &ImageSource {
        &self.0.source
    }

    /// The base64 data, loading and checking the file for a path image.
    ///
    /// `allowed_dir` is the folder path images must lie in; `None` refuses
    /// every path image.
    pub(crate) fn load_base64(&self, allowed_dir: Option<&Path>) -> Result<Arc<str>, ImageError> {
        match &self.0.source {
            ImageSource::Base64(data) => Ok(Arc::clone(data)),
            ImageSource::Path(path) => {
                let bytes = read_inside(path, allowed_dir)?;
                check_signature(&self.0.mime_type, &bytes)?;
                Ok(STANDARD.encode(bytes).into())
            }
        }
    }
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Image");
        s.field("mime_type", &self.0.mime_type);
        match &self.0.source {
            // Megabytes of base64 help nobody reading a log.
            ImageSource::Base64(data) => s.field("base64_len", &data.len()),
            ImageSource::Path(path) => s.field("path", path),
        };
        s.finish()
    }
}

/// The serialized form of an [`Image`]: `{"mime_type", "data"?, "path"?}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImageParts {
    mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<PathBuf>,
}

impl TryFrom<ImageParts> for Image {
    type Error = ImageError;

    fn try_from(parts: ImageParts) -> Result<Self, Self::Error> {
        Self::from_parts(&parts.mime_type, parts.data, parts.path)
    }
}

impl From<Image> for ImageParts {
    fn from(image: Image) -> Self {
        let ImageData { mime_type, source } = Arc::unwrap_or_clone(image.0);
        let (data, path) = match source {
            ImageSource::Base64(data) => (Some(data.to_string()), None),
            ImageSource::Path(path) => (None, Some(path)),
        };
        Self {
            mime_type,
            data,
            path,
        }
    }
}

/// Why an image could not be built or loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImageError {
    /// The MIME type is not `image/*`.
    NotAnImage {
        /// The MIME type given.
        mime_type: String,
    },
    /// Both base64 data and a path were given; an image has exactly one source.
    BothDataAndPath,
    /// Neither base64 data nor a path was given.
    NeitherDataNorPath,
    /// The data is not valid standard base64.
    InvalidBase64 {
        /// What the decoder reported.
        reason: String,
    },
    /// The bytes are not of the declared type (for PNG, JPEG, GIF and WebP,
    /// which are recognised by their first bytes).
    WrongFormat {
        /// The declared MIME type.
        declared: String,
        /// What the bytes look like, if recognised.
        found: Option<&'static str>,
    },
    /// The file's extension names no image type.
    UnknownExtension {
        /// The path given.
        path: PathBuf,
    },
    /// A path image was emitted but the host allows no image folder.
    NoImageDir {
        /// The path given.
        path: PathBuf,
    },
    /// The path leads outside the folder the host allows: it lies
    /// elsewhere, climbs out with `..`, or goes through a link (links are
    /// not followed).
    OutsideImageDir {
        /// The path given.
        path: PathBuf,
        /// The folder the host allows.
        dir: PathBuf,
    },
    /// The folder the host allows cannot be opened.
    ImageDirUnavailable {
        /// The folder the host allows.
        dir: PathBuf,
        /// What the system reported.
        reason: String,
    },
    /// The file could not be read: it is missing, unreadable, or not a
    /// regular file.
    Unreadable {
        /// The path given.
        path: PathBuf,
        /// What the system reported.
        reason: String,
    },
    /// The provider does not accept this image type.
    Unsupported {
        /// The image's MIME type.
        mime_type: String,
        /// The provider.
        provider: crate::Provider,
        /// The types that provider accepts.
        accepted: &'static [&'static str],
    },
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnImage { mime_type } => {
                write!(
                    f,
                    "`{mime_type}` is not an image MIME type (expected image/*)"
                )
            }
            Self::BothDataAndPath => {
                f.write_str("an image has both base64 data and a path; give exactly one")
            }
            Self::NeitherDataNorPath => {
                f.write_str("an image has neither base64 data nor a path; give exactly one")
            }
            Self::InvalidBase64 { reason } => write!(f, "image data is not valid base64: {reason}"),
            Self::WrongFormat { declared, found } => match found {
                Some(found) => write!(f, "image declared as {declared} holds {found} data"),
                None => write!(
                    f,
                    "image declared as {declared} does not hold {declared} data"
                ),
            },
            Self::UnknownExtension { path } => write!(
                f,
                "cannot tell the image type of `{}` from its extension (png, jpg, jpeg, gif, webp)",
                path.display()
            ),
            // The model reads these: they name the file as the tool gave it
            // (an absolute path by its file name only) and never the host's
            // folder.
            Self::NoImageDir { path } => write!(
                f,
                "image file `{}` refused: the host allows no image folder",
                Shown(path)
            ),
            Self::OutsideImageDir { path, .. } => write!(
                f,
                "image file `{}` refused: it is not a file inside the allowed image folder (links are not followed)",
                Shown(path)
            ),
            Self::ImageDirUnavailable { reason, .. } => {
                write!(f, "the allowed image folder cannot be opened: {reason}")
            }
            Self::Unreadable { path, reason } => {
                write!(
                    f,
                    "image file `{}` could not be read: {reason}",
                    Shown(path)
                )
            }
            Self::Unsupported {
                mime_type,
                provider,
                accepted,
            } => write!(
                f,
                "{provider} does not accept {mime_type} images (accepted: {})",
                accepted.join(", ")
            ),
        }
    }
}

impl std::error::Error for ImageError {}

/// Lower-cases and checks a MIME type: `image/<subtype>` with a non-empty
/// subtype of token characters.
fn image_mime(mime_type: &str) -> Result<String, ImageError> {
    let lower = mime_type.trim().to_ascii_lowercase();
    let valid = lower.strip_prefix("image/").is_some_and(|subtype| {
        !subtype.is_empty()
            && subtype
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    if valid {
        Ok(lower)
    } else {
        Err(ImageError::NotAnImage {
            mime_type: mime_type.to_owned(),
        })
    }
}

fn mime_for_extension(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// The format the first bytes announce, for the formats providers accept.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Checks the bytes against the declared type where the type is one we can
/// recognise; other image types pass as declared.
fn check_signature(mime_type: &str, bytes: &[u8]) -> Result<(), ImageError> {
    let known = matches!(
        mime_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    );
    let found = sniff(bytes);
    if known && found != Some(mime_type) {
        return Err(ImageError::WrongFormat {
            declared: mime_type.to_owned(),
            found,
        });
    }
    Ok(())
}

/// Reads the image file `path` (relative paths from `dir`), opened once
/// inside `dir` without following links, and only if it is a regular file.
fn read_inside(path: &Path, dir: Option<&Path>) -> Result<Vec<u8>, ImageError> {
    use std::io::Read as _;

    use crate::result::confined::{Refused, open_inside};

    let Some(dir) = dir else {
        return Err(ImageError::NoImageDir {
            path: path.to_owned(),
        });
    };
    let unreadable = |reason: String| ImageError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let mut file = open_inside(dir, path).map_err(|refused| match refused {
        Refused::Folder(error) => ImageError::ImageDirUnavailable {
            dir: dir.to_owned(),
            reason: error.to_string(),
        },
        Refused::Outside => ImageError::OutsideImageDir {
            path: path.to_owned(),
            dir: dir.to_owned(),
        },
        Refused::NotAFile => unreadable("it is not a regular file".into()),
        Refused::Io(error) => unreadable(error.to_string()),
    })?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|error| unreadable(error.to_string()))?;
    Ok(bytes)
}

/// A path as an error shows it to the model: a relative path as given (it
/// is relative to the folder, which it does not name), an absolute one by
/// its file name only.
struct Shown<'a>(&'a Path);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_relative() {
            return write!(f, "{}", self.0.display());
        }
        match self.0.file_name() {
            Some(name) => write!(f, "…/{}", Path::new(name).display()),
            None => f.write_str("…"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_is_normalised() {
        assert_eq!(image_mime(" Image/PNG ").unwrap(), "image/png");
        assert_eq!(image_mime("image/svg+xml").unwrap(), "image/svg+xml");
        for bad in ["image/", "image", "text/plain", "image/p n g", ""] {
            assert!(image_mime(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn signatures() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a..."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVE"), None);
        assert!(check_signature("image/bmp", b"BM...").is_ok());
    }

    #[test]
    fn extension_decides_mime() {
        assert_eq!(mime_for_extension(Path::new("a/B.JPG")), Some("image/jpeg"));
        assert_eq!(mime_for_extension(Path::new("a.txt")), None);
        assert_eq!(mime_for_extension(Path::new("noext")), None);
    }
}
