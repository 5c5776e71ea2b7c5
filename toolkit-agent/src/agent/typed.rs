//! Runs that end in a typed value: the answer schema sent the provider's
//! way, or a final-answer tool; answers that do not fit go back to the
//! model with every problem, within a retry budget.

use std::future::IntoFuture;
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolkit_core::Registry;

use super::answer_policy::AnswerPolicy;
use super::outcome::{Outcome, RunError};
use super::run::Run;
use crate::answer::{AnswerError, AnswerSchema};
use crate::event::Events;
use crate::model::Model;

/// How a typed run asks the model for its answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerMode {
    /// The provider's own structured output (`response_format`,
    /// `text.format`, `output_config.format`, `responseJsonSchema`), sent
    /// with every request beside the tools; the model's final text is the
    /// answer. The default.
    #[default]
    Schema,
    /// A tool, `final_answer`, whose parameters are the schema, for models
    /// or servers that cannot take tools and a response schema at once.
    /// The model must call a tool at every step (tool choice `required`
    /// unless the host chose otherwise); calling this one ends the run.
    ///
    /// A run whose mode is left unset takes this one when its model says
    /// it cannot take both
    /// ([`Model::takes_tools_with_answer_schema`](crate::Model::takes_tools_with_answer_schema)).
    Tool,
}

/// What a typed run came to: the value, when the run ended with one, and
/// the outcome.
#[derive(Debug)]
#[non_exhaustive]
pub struct Typed<T> {
    /// The answer, read into `T`; `None` when the run stopped before
    /// answering (paused, a limit, a done tool other than the answer).
    pub value: Option<T>,
    /// How the run went.
    pub outcome: Outcome,
}

impl<'a, M: Model> Run<'a, M> {
    /// The run, ending in a value of `T`: the answer is asked for in `T`'s
    /// schema, read into `T`, and sent back with its problems when it does
    /// not fit (see [`TypedRun`]).
    ///
    /// ```no_run
    /// # async fn demo(agent: toolkit_agent::Agent<toolkit_agent::HttpModel>)
    /// # -> Result<(), toolkit_agent::RunError> {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct City {
    ///     name: String,
    ///     population: u64,
    /// }
    ///
    /// let typed = agent.run("The largest city of Japan?").answer::<City>().await?;
    /// if let Some(city) = typed.value {
    ///     println!("{} ({})", city.name, city.population);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn answer<T>(self) -> TypedRun<'a, M, T>
    where
        T: schemars::JsonSchema + serde::de::DeserializeOwned + Send + 'static,
    {
        TypedRun::new(self)
    }
}

/// A run about to start that ends in a value of `T`: awaited, it gives a
/// [`Typed`] outcome. Made by [`Run::answer`].
#[must_use = "a run does nothing until awaited"]
pub struct TypedRun<'a, M, T> {
    run: Run<'a, M>,
    // `None`: the host left it to the run, which asks the model.
    mode: Option<AnswerMode>,
    retries: u32,
    kind: PhantomData<fn() -> T>,
}

impl<'a, M: Model, T> TypedRun<'a, M, T>
where
    T: schemars::JsonSchema + DeserializeOwned + Send + 'static,
{
    pub(crate) fn new(run: Run<'a, M>) -> Self {
        Self {
            run,
            mode: None,
            retries: 2,
            kind: PhantomData,
        }
    }

    /// How the answer is asked for. Unset, it is the provider's structured
    /// output ([`AnswerMode::Schema`]), or the final-answer tool
    /// ([`AnswerMode::Tool`]) when the model cannot take tools and a
    /// response schema together
    /// ([`Model::takes_tools_with_answer_schema`](crate::Model::takes_tools_with_answer_schema)).
    /// Setting `Schema` for such a model, with tools to call, fails the
    /// run before any request, saying why.
    pub fn mode(mut self, mode: AnswerMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The mode the run uses: the host's, else the one the model can
    /// follow.
    fn chosen_mode(&self) -> Result<AnswerMode, RunError> {
        let agent = self.run.agent();
        let takes_both = agent.model.takes_tools_with_answer_schema();
        let has_tools = !agent.registry.tools().is_empty();
        match self.mode {
            None if !takes_both && has_tools => Ok(AnswerMode::Tool),
            None => Ok(AnswerMode::Schema),
            Some(AnswerMode::Schema) if !takes_both && has_tools => Err(RunError::SchemaWithTools),
            Some(mode) => Ok(mode),
        }
    }

    /// How many answers that do not fit are sent back to the model with
    /// their problems before the run fails with [`RunError::Output`]
    /// (default 2).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    fn plan(&self) -> Result<AnswerPolicy, RunError> {
        let schema = AnswerSchema::of::<T>().map_err(RunError::AnswerSchema)?;
        let tool = match self.chosen_mode()? {
            AnswerMode::Schema => None,
            AnswerMode::Tool => {
                let registry = Registry::builder()
                    .tool(schema.tool())
                    .build()
                    .map_err(RunError::AnswerTool)?;
                Some(Arc::new(registry))
            }
        };
        let reader = schema.clone();
        Ok(AnswerPolicy {
            schema,
            check: Box::new(move |text| {
                reader.read::<T>(text)?;
                // Read again as JSON: what fits `T` is JSON.
                reader.read::<Value>(text)
            }),
            tool,
            retries: self.retries,
            value: None,
        })
    }
}

impl<'a, M: Model, T> IntoFuture for TypedRun<'a, M, T>
where
    T: schemars::JsonSchema + DeserializeOwned + Send + 'static,
{
    type Output = Result<Typed<T>, RunError>;
    type IntoFuture = BoxFuture<'a, Result<Typed<T>, RunError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let plan = self.plan()?;
            let (outcome, value) = self.run.go_typed(plan).await?;
            Self::typed(outcome, value)
        })
    }
}

impl<'a, M: Model, T> TypedRun<'a, M, T>
where
    T: schemars::JsonSchema + DeserializeOwned + Send + 'static,
{
    /// The run, with its events as an async stream.
    pub fn events(self) -> (BoxFuture<'a, Result<Typed<T>, RunError>>, Events) {
        let (run, events) = self.run.with_events();
        let typed = Self {
            run,
            mode: self.mode,
            retries: self.retries,
            kind: PhantomData,
        };
        (typed.into_future(), events)
    }

    fn typed(outcome: Outcome, value: Option<Value>) -> Result<Typed<T>, RunError> {
        {
            let value = match value {
                Some(value) => Some(T::deserialize(&value).map_err(|error| {
                    RunError::output(&AnswerError::other(error.to_string()), value.to_string())
                })?),
                None => None,
            };
            Ok(Typed { value, outcome })
        }
    }
}
