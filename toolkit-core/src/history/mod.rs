//! The step history an agent loop keeps, and what the model sees of it.

pub(crate) mod budget;
mod json_form;
pub(crate) mod read_output;

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::result::block::render_text;
use crate::{Block, OutputBudget, ToolCallResult, ToolResult};

/// The results of every step so far, kept whole, and the rules that decide
/// what the model sees of them at the next step.
///
/// At step N+1 the model sees, for each result of steps 1..=N:
///
/// - its error, always;
/// - its long-term memory line, always;
/// - its content if it is not [show-once](ToolResult::with_show_once), or if it
///   is and was produced at step N; a show-once result seen before shows its
///   memory line instead (or a line saying it was shown, if it has none);
/// - with an [`OutputBudget`], content longer than the budget as its
///   beginning and the name of the file that holds it whole.
///
/// ```
/// use toolkit_core::{History, ToolCallResult, ToolResult};
///
/// let mut history = History::new();
/// history.record(vec![ToolCallResult::new(
///     "call_1",
///     "list_products",
///     ToolResult::text("[500 lines of product data]").with_show_once().with_memory("Found 50 products"),
/// )])?;
/// assert!(history.render().contains("[500 lines of product data]"));
///
/// history.record(vec![ToolCallResult::new("call_2", "open", ToolResult::text("opened"))])?;
/// let seen = history.render();
/// assert!(!seen.contains("[500 lines of product data]"));
/// assert!(seen.contains("Found 50 products"));
/// # Ok::<(), toolkit_core::HistoryError>(())
/// ```
///
/// Its JSON form (serde) is `{"budget", "steps": [{"calls": [{"call_id",
/// "tool_name", "result", "saved_file", "shortened"}]}]}`: each result
/// whole, in [its own form](ToolResult#json-form), beside the file the
/// budget saved it to and the content the model sees instead when it was
/// over budget (fields not set are left out). Saved files are named, not
/// copied.
#[derive(Debug, Clone, Default)]
pub struct History {
    steps: Vec<Step>,
    budget: Option<OutputBudget>,
}

#[derive(Debug, Clone)]
struct Step {
    calls: Vec<ToolCallResult>,
    saved: Vec<Saved>,
}

/// What the budget did with one call's output.
#[derive(Debug, Clone, Default)]
struct Saved {
    /// The file holding the whole text: over budget, or show-once.
    file: Option<PathBuf>,
    /// The shortened result, when over budget.
    shortened: Option<ToolResult>,
}

impl History {
    /// An empty history with no output budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty history whose long outputs are saved to files under `budget`.
    pub fn with_budget(budget: OutputBudget) -> Self {
        Self {
            steps: Vec::new(),
            budget: Some(budget),
        }
    }

    /// Sets the output budget for the steps recorded from now on (`None`:
    /// no budget); steps already recorded keep what was decided for them.
    pub fn set_budget(&mut self, budget: Option<OutputBudget>) {
        self.budget = budget;
    }

    /// Records one step's results, in call order, and returns the step's
    /// number (from 1).
    ///
    /// Outputs over budget are saved now. If a file cannot be written, the
    /// step is recorded all the same, its outputs shown whole (nothing is
    /// lost), and the error says which outputs were not saved.
    pub fn record(&mut self, calls: Vec<ToolCallResult>) -> Result<usize, HistoryError> {
        let number = self.steps.len() + 1;
        let mut failures = Vec::new();
        let saved = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let Some(budget) = &self.budget else {
                    return Saved::default();
                };
                let name = format!("step{number}-call{}-{}", index + 1, call.call_id);
                let outcome = budget.apply(&call.result, &name).and_then(|spilled| {
                    Ok(match spilled {
                        Some(spilled) => Saved {
                            file: Some(spilled.file),
                            shortened: Some(spilled.result),
                        },
                        // Show-once content leaves the model's view after one
                        // step; the file is how the model can still reach it.
                        None if call.result.is_show_once() => Saved {
                            file: Some(budget.save(&call.result, &name)?),
                            shortened: None,
                        },
                        None => Saved::default(),
                    })
                });
                outcome.unwrap_or_else(|error| {
                    failures.push((call.call_id.clone(), error));
                    Saved::default()
                })
            })
            .collect();
        self.steps.push(Step { calls, saved });
        if failures.is_empty() {
            Ok(number)
        } else {
            Err(HistoryError {
                step: number,
                failures,
            })
        }
    }

    /// How many steps are recorded.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether no step is recorded.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps recorded after the first `steps`, with this history's
    /// budget: what a store appends when it keeps a history as a journal
    /// rather than whole at every save. Steps, once recorded, never change,
    /// so these and the ones before are the whole history.
    ///
    /// ```
    /// use toolkit_core::{History, ToolCallResult, ToolResult};
    ///
    /// let mut history = History::new();
    /// history.record(vec![ToolCallResult::new("c1", "a", ToolResult::text("one"))])?;
    /// let mut copy = history.clone();
    /// history.record(vec![ToolCallResult::new("c2", "b", ToolResult::text("two"))])?;
    /// copy.append(history.since(1));
    /// assert_eq!(copy.render(), history.render());
    /// # Ok::<(), toolkit_core::HistoryError>(())
    /// ```
    pub fn since(&self, steps: usize) -> History {
        History {
            steps: self.steps.get(steps..).unwrap_or_default().to_vec(),
            budget: self.budget.clone(),
        }
    }

    /// Adds `later`'s steps after this history's, and takes its budget:
    /// the inverse of [`since`](Self::since).
    pub fn append(&mut self, later: History) {
        self.steps.extend(later.steps);
        self.budget = later.budget;
    }

    /// The results of step `number` (from 1), whole, as recorded.
    pub fn step(&self, number: usize) -> Option<&[ToolCallResult]> {
        Some(&self.steps.get(number.checked_sub(1)?)?.calls)
    }

    /// The file holding the whole output of call `index` (from 0) of step
    /// `number`, if it was saved: over budget, or show-once.
    pub fn saved_file(&self, number: usize, index: usize) -> Option<&Path> {
        let step = self.steps.get(number.checked_sub(1)?)?;
        step.saved.get(index)?.file.as_deref()
    }

    /// The results of step `number` as the model sees them at the next step,
    /// ready for any emitter: show-once content past its step replaced by
    /// the memory line, long content by its beginning, the memory line added
    /// after the content.
    pub fn view(&self, number: usize) -> Vec<ToolCallResult> {
        let Some(step) = number.checked_sub(1).and_then(|i| self.steps.get(i)) else {
            return Vec::new();
        };
        let latest = number == self.steps.len();
        step.calls
            .iter()
            .zip(&step.saved)
            .map(|(call, saved)| {
                let shown = saved.shortened.as_ref().unwrap_or(&call.result);
                let hidden = shown.is_show_once() && !latest;
                let mut blocks: Vec<Block> = if hidden {
                    Vec::new()
                } else {
                    shown.content().to_vec()
                };
                if let Some(memory) = shown.memory() {
                    blocks.push(Block::text(format!("Memory: {memory}")));
                }
                if hidden {
                    blocks.push(Block::text(match &saved.file {
                        Some(file) => format!(
                            "(The output of step {number} was shown once; it is saved in the file `{}`.)",
                            crate::history::budget::file_name(file)
                        ),
                        None => format!("(The output of step {number} was shown once.)"),
                    }));
                }
                ToolCallResult {
                    call_id: call.call_id.clone(),
                    tool_name: call.tool_name.clone(),
                    result: shown.replace_content(blocks),
                }
            })
            .collect()
    }

    /// What the model sees of the whole history at the next step, as text:
    /// every step in order, each result under a line naming its tool and
    /// call.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for number in 1..=self.steps.len() {
            let _ = writeln!(out, "<step {number}>");
            for call in self.view(number) {
                let _ = writeln!(out, "[{} {}]", call.tool_name, call.call_id);
                let result = &call.result;
                if let Some(error) = result.error_message() {
                    let _ = writeln!(out, "Error: {error}");
                }
                let text = render_text(result.content());
                if !text.is_empty() {
                    let _ = writeln!(out, "{text}");
                }
            }
            let _ = writeln!(out, "</step {number}>");
        }
        out
    }
}

/// Outputs over budget that could not be saved; the step was recorded with
/// them shown whole.
#[derive(Debug)]
#[non_exhaustive]
pub struct HistoryError {
    /// The step recorded.
    pub step: usize,
    /// Each call whose output was not saved, with the reason.
    pub failures: Vec<(String, io::Error)>,
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {}: outputs not saved to file:", self.step)?;
        for (call_id, error) in &self.failures {
            write!(f, " {call_id} ({error});")?;
        }
        Ok(())
    }
}

impl std::error::Error for HistoryError {}
