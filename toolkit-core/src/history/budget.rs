//! Outputs too long for the model: saved whole to a file, shown by their beginning.

use std::fmt;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::result::block::render_text;
use crate::text::{CUT_MARK, prefix_len};
use crate::{Block, ToolResult};

/// The most text a result may put before the model, and the folder where
/// longer outputs are saved whole.
///
/// When the text of a result's content (text, JSON, resources and links;
/// images and audio are not counted) is longer than the budget, the text is
/// written to a file in the folder and the model sees its first `max_chars`
/// characters, the [cut mark](crate::text::CUT_MARK), then a line naming
/// the file and how much was left out. Images and audio are kept. Nothing
/// is lost: the file holds all of the text.
///
/// ```
/// use toolkit_core::{OutputBudget, ToolResult};
///
/// let dir = std::env::temp_dir().join(format!("toolkit-budget-doc-{}", std::process::id()));
/// let budget = OutputBudget::new(10, &dir);
/// let long = ToolResult::text("0123456789abcdefghij");
/// let spilled = budget.apply(&long, "step1-call1")?.expect("over budget");
/// assert!(spilled.result.as_text().unwrap().starts_with("0123456789…\n"));
/// assert_eq!(std::fs::read_to_string(&spilled.file)?, "0123456789abcdefghij");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// Its JSON form is `{"max_chars", "dir"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputBudget {
    max_chars: usize,
    dir: PathBuf,
}

/// A result whose text went over budget, and the file holding it whole.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Spilled {
    /// The result as the model sees it: the beginning of the text, the
    /// notice naming the file, then the images.
    pub result: ToolResult,
    /// The file holding the whole text.
    pub file: PathBuf,
}

impl OutputBudget {
    /// A budget of `max_chars` characters, saving longer outputs in `dir`
    /// (created when first needed).
    pub fn new(max_chars: usize, dir: impl Into<PathBuf>) -> Self {
        Self {
            max_chars,
            dir: dir.into(),
        }
    }

    /// The budget, in characters.
    pub fn max_chars(&self) -> usize {
        self.max_chars
    }

    /// The folder long outputs are saved in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Applies the budget to `result`. Returns `None` when the text fits;
    /// otherwise saves the text as `<name>.txt` in the folder and returns the
    /// shortened result. `name` is reduced to letters, digits, `-` and `_`.
    ///
    /// The folder is created readable by its owner only (`0700`), and so is
    /// the file (`0600`). A file is always new: when `<name>.txt` is taken
    /// (by an earlier run, or by a link planted there), the text goes to
    /// `<name>-2.txt`, and so on; nothing is overwritten and no link is
    /// followed.
    pub fn apply(&self, result: &ToolResult, name: &str) -> io::Result<Option<Spilled>> {
        let text = content_text(result);
        let Some(head_end) = prefix_len(&text, self.max_chars) else {
            return Ok(None);
        };
        let file = self.write(name, &text)?;
        let notice = Notice {
            shown: self.max_chars,
            total: text.chars().count(),
            file: &file,
        };
        let mut blocks = vec![Block::text(format!(
            "{}{CUT_MARK}\n{notice}",
            &text[..head_end]
        ))];
        blocks.extend(
            result
                .content()
                .iter()
                .filter(|block| matches!(block, Block::Image { .. } | Block::Audio { .. }))
                .cloned(),
        );
        Ok(Some(Spilled {
            result: result.replace_content(blocks),
            file,
        }))
    }

    /// Saves the text of `result`'s content as `<name>.txt` in the folder
    /// (or the next free name, as [`apply`](Self::apply) does), whatever its
    /// length, and returns the file's path.
    pub fn save(&self, result: &ToolResult, name: &str) -> io::Result<PathBuf> {
        self.write(name, &content_text(result))
    }

    fn write(&self, name: &str, text: &str) -> io::Result<PathBuf> {
        create_private_dir(&self.dir)?;
        let stem = sanitize(name);
        for attempt in 1..=MAX_NAME_ATTEMPTS {
            let file = match attempt {
                1 => self.dir.join(format!("{stem}.txt")),
                n => self.dir.join(format!("{stem}-{n}.txt")),
            };
            match create_new(&file) {
                Ok(mut out) => {
                    out.write_all(text.as_bytes())?;
                    return Ok(file);
                }
                // Taken (by an earlier run, or by a link someone planted,
                // which is neither followed nor removed): try the next name.
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("`{stem}.txt` and the next {MAX_NAME_ATTEMPTS} names are all taken"),
        ))
    }
}

/// How many names a saved output tries (`name.txt`, `name-2.txt`, …)
/// before giving up.
const MAX_NAME_ATTEMPTS: usize = 100;

/// Creates the folder, and any missing parent, readable by its owner only:
/// saved outputs are the tools' outputs, which may be private.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates `file`, which must not exist yet, readable by its owner only.
/// `create_new` also refuses a link at that name: it is never followed.
fn create_new(file: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(file)
}

/// The blocks of a result that are text, rendered (JSON, resources and
/// links as [`render_text`] writes them); images and audio are not text.
fn content_text(result: &ToolResult) -> String {
    render_text(
        result
            .content()
            .iter()
            .filter(|block| !matches!(block, Block::Image { .. } | Block::Audio { .. })),
    )
}

struct Notice<'a> {
    shown: usize,
    total: usize,
    file: &'a Path,
}

impl fmt::Display for Notice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[Output cut: {} of {} characters shown. The whole output is saved in the file `{}`.]",
            self.shown,
            self.total,
            file_name(self.file)
        )
    }
}

/// A file's name as the model is told it: the name alone, not the host's path.
pub(crate) fn file_name(path: &Path) -> std::borrow::Cow<'_, str> {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
}

fn sanitize(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        "output".into()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn names_cannot_escape_the_folder() {
        assert_eq!(sanitize("../../etc/passwd"), "______etc_passwd");
        assert_eq!(sanitize(""), "output");
        assert_eq!(sanitize("step1-call_2"), "step1-call_2");
    }
}
