//! The form a model's final answer must take: a JSON Schema sent in each
//! provider's structured-output field, and the reading of the answer back
//! into a Rust type.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolkit_core::schema::{self, Dialect, SchemaError};
use toolkit_core::{CallContext, ToolDef, ToolResult};

/// The name of the tool [`AnswerSchema::tool`] makes.
pub const FINAL_ANSWER_TOOL: &str = "final_answer";

/// The JSON Schema a model's final answer must keep, and its name.
///
/// [`of`](Self::of) derives it from a Rust type through the pipeline tool
/// parameters go through ([`toolkit_core::schema`]): the canonical schema,
/// then its lowering for each provider.
/// [`Conversation::set_answer_schema`](crate::Conversation::set_answer_schema)
/// sends it in the provider's structured-output field:
///
/// | provider | field | schema sent |
/// |---|---|---|
/// | Chat Completions | `response_format: {type: json_schema, json_schema: {name, schema, strict}}` | strict lowering (`strict: true`), or the canonical schema (`strict: false`) when it has none |
/// | Responses | `text: {format: {type: json_schema, name, schema, strict}}` | the same |
/// | Anthropic | `output_config: {format: {type: json_schema, schema}}` | the same, without the bounds the API does not take (`minimum`, `maxLength`...: [`anthropic_output`](toolkit_core::schema::anthropic_output)) |
/// | Gemini | `generationConfig: {responseMimeType: application/json, responseJsonSchema}` | Gemini's JSON Schema lowering |
///
/// Strict lowering makes every field required, an optional one `null`
/// when absent; [`read`](Self::read) takes both forms. The bounds left out
/// for Anthropic are still checked by `read`, against the canonical
/// schema.
///
/// For a model that cannot take tools and a response schema in one
/// request, [`tool`](Self::tool) gives the same schema as a tool to call
/// with the answer.
///
/// ```
/// use serde::Deserialize;
/// use toolkit_agent::{AnswerSchema, Conversation};
/// use toolkit_core::Provider;
///
/// /// A city and how many people live there.
/// #[derive(Deserialize, schemars::JsonSchema, Debug, PartialEq)]
/// struct City {
///     name: String,
///     population: Option<u64>,
/// }
///
/// let schema = AnswerSchema::of::<City>()?;
/// let mut conversation = Conversation::new(Provider::OpenAi);
/// conversation.push_user("Which is the largest city of Japan?");
/// conversation.set_answer_schema(Some(schema.clone()));
/// let body = conversation.request();
/// assert_eq!(body["response_format"]["json_schema"]["name"], "City");
/// assert_eq!(body["response_format"]["json_schema"]["strict"], true);
///
/// let city: City = schema.read(r#"{"name": "Tokyo", "population": null}"#)?;
/// assert_eq!(city, City { name: "Tokyo".into(), population: None });
///
/// let wrong = schema.read::<City>(r#"{"name": 5, "people": 3}"#).unwrap_err();
/// assert_eq!(wrong.problems().len(), 2);
/// assert_eq!(wrong.problems()[0].pointer, "/name");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerSchema {
    name: String,
    canonical: Value,
    /// The strict-mode lowering, when the schema has one.
    strict: Option<Value>,
    /// Gemini's JSON Schema lowering, when the schema has one.
    gemini: Option<Value>,
}

impl AnswerSchema {
    /// The schema of `T`, named as schemars names the type (made a name
    /// every provider takes). `T` must be object-like (a struct, a map):
    /// providers want an object at the root.
    pub fn of<T: schemars::JsonSchema>() -> Result<Self, SchemaError> {
        let canonical = schema::canonical_of::<T>()?;
        let lower = |dialect| {
            schema::lower(&canonical, dialect)
                .ok()
                .map(|lowered| lowered.to_value())
        };
        Ok(Self {
            name: toolkit_core::name::portable(&T::schema_name()).into_owned(),
            strict: lower(Dialect::OpenAiStrict),
            gemini: lower(Dialect::GeminiJsonSchema),
            canonical: canonical.to_value(),
        })
    }

    /// Renames the schema (OpenAI sends the name to the model). A name no
    /// provider takes is made one ([`toolkit_core::name::portable`]).
    pub fn named(mut self, name: &str) -> Self {
        self.name = toolkit_core::name::portable(name).into_owned();
        self
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The canonical schema, which [`read`](Self::read) holds answers to.
    pub fn schema(&self) -> &Value {
        &self.canonical
    }

    /// Whether OpenAI's strict mode can take the schema (it is then sent
    /// with `strict: true`).
    pub fn is_strict(&self) -> bool {
        self.strict.is_some()
    }

    /// Reads a final answer into `T`: the text as JSON (inside a fenced
    /// code block too, as models write it), checked against the schema,
    /// then read by serde. Fails with every problem found, each with its
    /// place in the answer, in one [`AnswerError`]; its
    /// [`prompt`](AnswerError::prompt) says them to the model.
    pub fn read<T: DeserializeOwned>(&self, text: &str) -> Result<T, AnswerError> {
        let text = unfenced(text);
        let value: Value = serde_json::from_str(text)
            .map_err(|error| AnswerError::other(format!("the answer is not JSON: {error}")))?;
        let problems: Vec<AnswerProblem> = schema::violations_at(&self.canonical, &value)
            .into_iter()
            .map(|violation| AnswerProblem {
                said: violation.to_string(),
                pointer: violation.pointer,
                message: violation.message,
            })
            .collect();
        if !problems.is_empty() {
            return Err(AnswerError { problems });
        }
        T::deserialize(&value).map_err(|error| AnswerError::other(error.to_string()))
    }

    /// A tool named [`final_answer`](FINAL_ANSWER_TOOL) whose parameters are
    /// the schema, for models that cannot take tools and a response schema
    /// at once: the model calls it with its answer. The registry checks the
    /// arguments against the schema (a call that breaks it gets an error
    /// result listing each problem, for the model to try again); the result
    /// is the arguments as JSON text, marked
    /// [done](toolkit_core::ToolResult::with_done), ready for
    /// [`read`](Self::read).
    pub fn tool(&self) -> ToolDef {
        ToolDef::builder(FINAL_ANSWER_TOOL)
            .description(format!(
                "Give the final answer (a `{}`): call this once, when done, with the answer as the arguments.",
                self.name
            ))
            .input_schema(self.canonical.clone())
            .read_only(true)
            .handler(|arguments: Value, _call: CallContext| async move {
                ToolResult::text(arguments.to_string()).with_done(true)
            })
    }

    /// The schema as sent, and whether it is sent in strict mode: the
    /// strict lowering when there is one, else the canonical schema.
    pub(crate) fn sent(&self) -> (&Value, bool) {
        match &self.strict {
            Some(strict) => (strict, true),
            None => (&self.canonical, false),
        }
    }

    /// The schema as Gemini takes it: its JSON Schema lowering when there
    /// is one, else the canonical schema.
    pub(crate) fn gemini_schema(&self) -> &Value {
        self.gemini.as_ref().unwrap_or(&self.canonical)
    }
}

/// One thing wrong with a final answer: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnswerProblem {
    /// Where in the answer, as a JSON Pointer (RFC 6901): `/items/0/name`;
    /// empty for the whole answer (text that is not JSON, a type serde
    /// refused).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
    /// The problem as the model is told it, its place a path of the
    /// answer's names, such as `items[0].name`, as tool arguments' are.
    said: String,
}

impl fmt::Display for AnswerProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.pointer, self.message)
        }
    }
}

/// A final answer that does not keep its schema: every problem found.
///
/// Its message is for the host; [`prompt`](Self::prompt) is the one a
/// typed run sends the model to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerError {
    problems: Vec<AnswerProblem>,
}

impl AnswerError {
    /// One problem with the whole answer.
    pub(crate) fn other(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            problems: vec![AnswerProblem {
                pointer: String::new(),
                said: message.clone(),
                message,
            }],
        }
    }

    /// Each problem, with its place in the answer.
    pub fn problems(&self) -> &[AnswerProblem] {
        &self.problems
    }

    /// The message for the model: each problem, and what to do.
    pub fn prompt(&self) -> String {
        let mut prompt = match self.problems.as_slice() {
            [one] => format!("The answer does not fit its schema: {}.", one.said),
            many => {
                let mut prompt = format!(
                    "The answer does not fit its schema ({} problems):",
                    many.len()
                );
                for problem in many {
                    prompt.push_str(&format!("\n- {}", problem.said));
                }
                prompt
            }
        };
        prompt.push_str("\nAnswer again with JSON that keeps the schema.");
        prompt
    }
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the answer does not fit its schema")?;
        write_problems(f, &self.problems)
    }
}

/// The problems after the sentence that leads to them: one after a colon,
/// several as a list.
pub(crate) fn write_problems(
    f: &mut fmt::Formatter<'_>,
    problems: &[AnswerProblem],
) -> fmt::Result {
    match problems {
        [] => Ok(()),
        [one] => write!(f, ": {one}"),
        many => {
            write!(f, " ({} problems):", many.len())?;
            for problem in many {
                write!(f, "\n- {problem}")?;
            }
            Ok(())
        }
    }
}

impl std::error::Error for AnswerError {}

/// The text inside a Markdown code fence (```` ```json ````), or the text
/// as it is.
fn unfenced(text: &str) -> &str {
    let text = text.trim();
    let Some(inner) = text.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = inner.strip_suffix("```") else {
        return text;
    };
    // The language tag runs to the end of the first line.
    inner
        .split_once('\n')
        .map_or(inner, |(_, body)| body)
        .trim()
}
