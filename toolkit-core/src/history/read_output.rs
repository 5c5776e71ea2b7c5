//! Ready tools that come with the crate.

use std::fmt;
use std::io::Read as _;
use std::path::{Component, Path};

use crate::result::confined::{Refused, open_inside};
use crate::{OutputBudget, ToolResult, tool};

/// Read an output that was too long to show, page by page.
///
/// Long tool outputs are saved whole to files, and the model is told the
/// file's name. This reads one page of such a file.
///
/// Register it beside the tools whose outputs are budgeted, with the same
/// [`OutputBudget`] as state: it reads only regular files directly in that
/// budget's folder (never through a link), in pages of the budget's size.
///
/// ```
/// use toolkit_core::{OutputBudget, Registry, tools};
/// use toolkit_core::builtin::read_output;
///
/// let budget = OutputBudget::new(4_000, std::env::temp_dir().join("agent-outputs"));
/// let registry = Registry::builder()
///     .tools(tools![read_output])
///     .state(budget)
///     .build()?;
/// # Ok::<(), toolkit_core::RegistryError>(())
/// ```
#[tool(catalogue = false)]
pub fn read_output(
    /// The file's name, as the notice about the cut output gave it.
    file: String,
    /// The page to read, from 1 (the first page when left out).
    page: Option<u32>,
    #[tool(state)] budget: OutputBudget,
) -> Result<ToolResult, ReadOutputError> {
    let name = Path::new(&file);
    let plain = matches!(
        name.components().collect::<Vec<_>>().as_slice(),
        [Component::Normal(_)]
    );
    if !plain {
        return Err(ReadOutputError::NotAName(file));
    }
    // Opened once, without following a link and only as a regular file,
    // so that neither a link nor a FIFO planted in the folder, nor one
    // swapped in while this runs, is read.
    let mut opened = open_inside(budget.dir(), name).map_err(|refused| match refused {
        Refused::Io(error) if error.kind() != std::io::ErrorKind::NotFound => {
            ReadOutputError::Unreadable(file.clone(), error.to_string())
        }
        _ => ReadOutputError::NoSuchFile(file.clone()),
    })?;
    let mut text = String::new();
    opened
        .read_to_string(&mut text)
        .map_err(|error| ReadOutputError::Unreadable(file.clone(), error.to_string()))?;

    let page_chars = budget.max_chars().max(1);
    let total_chars = text.chars().count();
    let pages = total_chars.div_ceil(page_chars).max(1);
    let page = page.unwrap_or(1).max(1) as usize;
    if page > pages {
        return Err(ReadOutputError::NoSuchPage { file, page, pages });
    }
    let body: String = text
        .chars()
        .skip((page - 1) * page_chars)
        .take(page_chars)
        .collect();
    let more = if page < pages {
        format!(" Read page {} for more.", page + 1)
    } else {
        String::new()
    };
    Ok(ToolResult::text(format!(
        "[`{file}`, page {page} of {pages}.{more}]\n{body}"
    )))
}

/// Why [`read_output`] could not read a page.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadOutputError {
    /// The name is a path, not a file name.
    NotAName(String),
    /// No saved output has that name.
    NoSuchFile(String),
    /// The file could not be read.
    Unreadable(String, String),
    /// The page is past the end.
    NoSuchPage {
        /// The file.
        file: String,
        /// The page asked for.
        page: usize,
        /// How many pages the file has.
        pages: usize,
    },
}

impl fmt::Display for ReadOutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAName(file) => write!(
                f,
                "`{file}` is not a file name: give the name exactly as the notice about the cut output gave it"
            ),
            Self::NoSuchFile(file) => write!(f, "there is no saved output named `{file}`"),
            Self::Unreadable(file, reason) => {
                write!(f, "the saved output `{file}` could not be read: {reason}")
            }
            Self::NoSuchPage { file, page, pages } => {
                write!(f, "`{file}` has {pages} page(s); there is no page {page}")
            }
        }
    }
}

impl std::error::Error for ReadOutputError {}
