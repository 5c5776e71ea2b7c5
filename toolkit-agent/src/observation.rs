//! What the host shows the model at the start of a step.

/// What the host shows the model at the start of a step, besides the task
/// and the results of its calls: the page a browser is on, the files of a
/// folder, the state of a game.
///
/// The latest observation is shown whole. When a newer one arrives, the
/// older one is replaced by its [`later`](Self::later) line, so a run
/// carries one full observation, not one per step, and the request does not
/// grow by a page map at every step.
///
/// ```
/// use toolkit_agent::Observation;
///
/// let seen = Observation::new("[1]<button>Sign up</button>\n[2]<a>Pricing</a>")
///     .later("Step 3: the sign-up page, 2 elements.");
/// assert_eq!(seen.text(), "[1]<button>Sign up</button>\n[2]<a>Pricing</a>");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    text: String,
    later: Option<String>,
}

impl Observation {
    /// What older observations become when no [`later`](Self::later) line
    /// was given.
    pub const DEFAULT_LATER: &'static str =
        "(An earlier observation, replaced by a newer one further on.)";

    /// An observation shown as `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            later: None,
        }
    }

    /// What the model sees of this observation once a newer one is shown
    /// (default: [`DEFAULT_LATER`](Self::DEFAULT_LATER)).
    pub fn later(mut self, line: impl Into<String>) -> Self {
        self.later = Some(line.into());
        self
    }

    /// The text shown while the observation is the latest.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line shown once a newer observation arrives.
    pub fn later_line(&self) -> &str {
        self.later.as_deref().unwrap_or(Self::DEFAULT_LATER)
    }

    pub(crate) fn into_parts(self) -> (String, String) {
        let later = match self.later {
            Some(later) => later,
            None => Self::DEFAULT_LATER.to_owned(),
        };
        (self.text, later)
    }
}
