//! A history's JSON form, for saving a conversation and loading it back.
//!
//! `{"budget"?, "steps": [{"calls": [call]}]}`, each call its
//! [`ToolCallResult`] form with what the budget did beside it: the file
//! holding its whole output (`saved_file`) and, when it was over budget,
//! the content the model sees instead (`shortened`). Saved files are named,
//! not copied: they stay where the budget wrote them.

use std::path::PathBuf;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::history::{Saved, Step};
use crate::{Block, History, OutputBudget, ToolResult};

#[derive(Serialize)]
struct WrittenHistory<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<&'a OutputBudget>,
    steps: Vec<WrittenStep<'a>>,
}

#[derive(Serialize)]
struct WrittenStep<'a> {
    calls: Vec<WrittenCall<'a>>,
}

#[derive(Serialize)]
struct WrittenCall<'a> {
    call_id: &'a str,
    tool_name: &'a str,
    result: &'a ToolResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    saved_file: Option<&'a PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shortened: Option<&'a [Block]>,
}

// `expecting`: errors name what the form holds, not these types.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a history: {\"steps\": [...]}")]
struct ReadHistory {
    #[serde(default)]
    budget: Option<OutputBudget>,
    steps: Vec<ReadStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a step: {\"calls\": [...]}")]
struct ReadStep {
    calls: Vec<ReadCall>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a call: {\"call_id\", \"tool_name\", \"result\", ...}"
)]
struct ReadCall {
    call_id: String,
    tool_name: String,
    result: ToolResult,
    #[serde(default)]
    saved_file: Option<PathBuf>,
    #[serde(default)]
    shortened: Option<Vec<Block>>,
}

/// `{"budget"?, "steps": [{"calls": [{"call_id", "tool_name", "result",
/// "saved_file"?, "shortened"?}]}]}`.
impl Serialize for History {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let steps = self
            .steps
            .iter()
            .map(|step| WrittenStep {
                calls: step
                    .calls
                    .iter()
                    .zip(&step.saved)
                    .map(|(call, saved)| WrittenCall {
                        call_id: &call.call_id,
                        tool_name: &call.tool_name,
                        result: &call.result,
                        saved_file: saved.file.as_ref(),
                        shortened: saved.shortened.as_ref().map(ToolResult::content),
                    })
                    .collect(),
            })
            .collect();
        WrittenHistory {
            budget: self.budget.as_ref(),
            steps,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = ReadHistory::deserialize(deserializer)?;
        let mut steps = Vec::with_capacity(read.steps.len());
        for (number, step) in (1..).zip(read.steps) {
            let mut calls = Vec::with_capacity(step.calls.len());
            let mut saved = Vec::with_capacity(step.calls.len());
            for call in step.calls {
                if call.shortened.is_some() && call.saved_file.is_none() {
                    return Err(D::Error::custom(format!(
                        "call `{}` of step {number} has a shortened output but no `saved_file`: \
                         an output is shortened only once saved whole",
                        call.call_id
                    )));
                }
                saved.push(Saved {
                    file: call.saved_file,
                    // The budget shortens the content and keeps every other
                    // field, as it did when it applied.
                    shortened: call
                        .shortened
                        .map(|blocks| call.result.replace_content(blocks)),
                });
                calls.push(crate::ToolCallResult {
                    call_id: call.call_id,
                    tool_name: call.tool_name,
                    result: call.result,
                });
            }
            steps.push(Step { calls, saved });
        }
        Ok(History {
            steps,
            budget: read.budget,
        })
    }
}
