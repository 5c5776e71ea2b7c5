//! Calls into the page script in given documents: one ([`Session::call_in`]),
//! several at once ([`Session::call_all`]), and the tab's while the frames
//! its last map walked are walked again ([`Session::call_ahead`]).

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::error::CdpError;
use serde_json::{Value, json};

use super::{Channel, Doc};
use crate::browser::session::devtools::RawCommand;
use crate::browser::session::script::{
    Answer, WORLD_NAME, installing_call, is_context_gone, quick_call,
};
use crate::browser::session::{Fail, Session};
use crate::error::BrowserError;

/// How long a call into a frame's document keeps retrying while the frame
/// is between two documents.
const FRAME_RETRY: Duration = Duration::from_secs(2);

/// The answer of a frame walked ahead ([`Session::call_ahead`]).
pub(crate) enum Ahead {
    /// The page script's answer.
    Answered(Answer),
    /// No answer within the command time limit: the frame's process is
    /// stuck, and walking it again in the same map would wait as long.
    TimedOut,
    /// Any other failure (the frame's document went, no world yet).
    Failed,
}

impl Session {
    /// The context of the isolated world in `doc`, created when missing.
    pub(super) async fn world_in(&mut self, page: &Page, doc: &Doc) -> Result<i64, Fail> {
        let Some(frame) = &doc.frame else {
            return Ok(*self.world(page).await?.inner());
        };
        let key = (doc.channel.clone(), frame.clone());
        if let Some(id) = self.frames.worlds.get(&key) {
            return Ok(*id);
        }
        let params = json!({ "frameId": frame, "worldName": WORLD_NAME });
        let created = self
            .send(page, &doc.channel, "Page.createIsolatedWorld", params)
            .await?;
        let id = created["executionContextId"]
            .as_i64()
            .ok_or_else(|| Fail::Cdp(CdpError::msg("no execution context for the frame")))?;
        self.frames.worlds.insert(key, id);
        Ok(id)
    }

    /// Evaluates `expression` in the isolated world of `doc`, returning its
    /// value (or, with `by_value` false, a handle on it).
    pub(super) async fn evaluate_in_doc(
        &mut self,
        page: &Page,
        doc: &Doc,
        expression: &str,
        by_value: bool,
    ) -> Result<Value, Fail> {
        let context = self.world_in(page, doc).await?;
        let params = json!({
            "expression": expression,
            "contextId": context,
            "returnByValue": by_value,
            "awaitPromise": true,
        });
        let returned = self
            .send(page, &doc.channel, "Runtime.evaluate", params)
            .await?;
        if let Some(details) = returned.get("exceptionDetails") {
            let text = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("the page script failed");
            return Err(Fail::Cdp(CdpError::ChromeMessage(text.to_owned())));
        }
        Ok(returned["result"].clone())
    }

    /// The undecoded answer of `method` of the page script in `doc`, as
    /// [`call_top`](Self::call_top) gives it for the tab's document:
    /// retried while the frame is between two documents.
    pub(super) async fn call_text(
        &mut self,
        page: &Page,
        doc: &Doc,
        method: &str,
        args: &Value,
    ) -> Result<String, Fail> {
        if doc.frame.is_none() {
            return self.call_top(page, method, args).await;
        }
        let quick = quick_call(method, args);
        let deadline = Instant::now() + FRAME_RETRY;
        loop {
            let attempt = async {
                match self.evaluate_in_doc(page, doc, &quick, true).await?["value"].take() {
                    Value::String(text) => Ok(text),
                    _ => match self
                        .evaluate_in_doc(page, doc, &installing_call(method, args), true)
                        .await?["value"]
                        .take()
                    {
                        Value::String(text) => Ok(text),
                        other => Err(Fail::Cdp(CdpError::msg(format!(
                            "the page script answered {other} instead of text"
                        )))),
                    },
                }
            };
            match attempt.await {
                Err(fail) if is_context_gone(&fail) && Instant::now() < deadline => {
                    if let Some(frame) = &doc.frame {
                        self.frames
                            .worlds
                            .remove(&(doc.channel.clone(), frame.clone()));
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// Calls the page script in several documents at once (frames in
    /// processes of their own run their walks in parallel): each call's
    /// answer, in the order of `calls`. Worlds are made ready one by one
    /// first; a document that lacks the script, or a call that fails, is
    /// tried again alone.
    pub(crate) async fn call_all(
        &mut self,
        page: &Page,
        calls: &[(Doc, &str, Value)],
    ) -> Vec<Answer> {
        let mut prepared = Vec::with_capacity(calls.len());
        for (doc, method, args) in calls {
            let world = self.world_in(page, doc).await;
            prepared.push(world.map(|context| self.quick_params(context, method, args)));
        }
        let this = &*self;
        let sends = calls
            .iter()
            .zip(&prepared)
            .map(|((doc, _, _), params)| async move {
                let params = params.as_ref().ok()?.clone();
                this.send_once(page, doc, params).await
            });
        let answers = futures_util::future::join_all(sends).await;
        let mut out = Vec::with_capacity(calls.len());
        for ((doc, method, args), answer) in calls.iter().zip(answers) {
            let text = match answer {
                Some(text) => Ok(text),
                None => {
                    let mut args = args.clone();
                    self.add_slack(&mut args);
                    self.call_text(page, doc, method, &args).await
                }
            };
            out.push(Answer::new(method, text));
        }
        out
    }

    /// The `Runtime.evaluate` parameters that call `method` of the page
    /// script in the world `context` (with the redactor's slack added to
    /// `args`), for a document that has the script.
    fn quick_params(&self, context: i64, method: &str, args: &Value) -> Value {
        let mut args = args.clone();
        self.add_slack(&mut args);
        json!({
            "expression": quick_call(method, &args),
            "contextId": context,
            "returnByValue": true,
            "awaitPromise": true,
        })
    }

    /// One `Runtime.evaluate` in `doc` whose answer is text, with no
    /// retry: `None` when it fails for any reason.
    async fn send_once(&self, page: &Page, doc: &Doc, params: Value) -> Option<String> {
        let limit = self.config.command_timeout;
        let answer = match &doc.channel {
            Channel::Tab => {
                let command = RawCommand {
                    method: "Runtime.evaluate",
                    params,
                };
                match tokio::time::timeout(limit, page.execute(command)).await {
                    Ok(Ok(response)) => response.result,
                    _ => return None,
                }
            }
            Channel::Remote(session) => {
                let link = self.frames.link.as_ref()?;
                let request = link.request(Some(session), "Runtime.evaluate", params, limit);
                request.await.ok()?
            }
        };
        match &answer["result"]["value"] {
            Value::String(text) if answer.get("exceptionDetails").is_none() => Some(text.clone()),
            _ => None,
        }
    }

    /// Calls `method` of the page script in the tab's document and, at the
    /// same time, in the frame documents of `ahead` (each with its own
    /// arguments): the tab's answer, retried as [`call`](Self::call)
    /// retries, and each frame's (no retry: the caller walks such a frame
    /// again the usual way if it still needs it).
    pub(crate) async fn call_ahead(
        &mut self,
        page: &Page,
        method: &str,
        args: &Value,
        ahead: &[(Doc, Value)],
    ) -> (Answer, Vec<Ahead>) {
        let mut args = args.clone();
        self.add_slack(&mut args);
        let world = match self.world(page).await {
            Ok(world) => Some(world),
            // The map fails with the tab's document; its frames do not
            // matter.
            Err(fail) if !is_context_gone(&fail) => {
                let frames = ahead.iter().map(|_| Ahead::Failed).collect();
                return (Answer::new(method, Err(fail)), frames);
            }
            Err(_) => None,
        };
        let prepared: Vec<Option<Value>> = ahead
            .iter()
            .map(|(doc, frame_args)| {
                let frame = doc.frame.as_ref()?;
                let context = self
                    .frames
                    .worlds
                    .get(&(doc.channel.clone(), frame.clone()))?;
                Some(self.quick_params(*context, method, frame_args))
            })
            .collect();
        let this = &*self;
        let quick = quick_call(method, &args);
        let tab = async {
            match world {
                Some(world) => Some(this.evaluate_in_context(page, Some(world), &quick).await),
                None => None,
            }
        };
        let limit = self.config.command_timeout;
        let frames = ahead
            .iter()
            .zip(prepared)
            .map(|((doc, _), params)| async move {
                let Some(params) = params else {
                    return Ahead::Failed;
                };
                let started = Instant::now();
                match this.send_once(page, doc, params).await {
                    Some(text) => Ahead::Answered(Answer::new(method, Ok(text))),
                    None if started.elapsed() >= limit => Ahead::TimedOut,
                    None => Ahead::Failed,
                }
            });
        let (tab, frames) = tokio::join!(tab, futures_util::future::join_all(frames));
        let tab = match tab {
            Some(Ok(Value::String(text))) => Ok(text),
            Some(Err(fail)) if !is_context_gone(&fail) => Err(fail),
            // No script in the document yet, the document went, or no
            // world: the usual call installs the script, creates the world
            // and retries.
            _ => self.call_top(page, method, &args).await,
        };
        (Answer::new(method, tab), frames)
    }

    /// Calls `method` of the page script in `doc` and decodes its answer:
    /// [`call`](Self::call) for a document chosen by the caller.
    pub(crate) async fn call_in<T: serde::de::DeserializeOwned>(
        &mut self,
        page: &Page,
        doc: &Doc,
        method: &str,
        args: &Value,
    ) -> Result<T, BrowserError> {
        let mut args = args.clone();
        self.add_slack(&mut args);
        let text = self.call_text(page, doc, method, &args).await;
        self.decode(Answer::new(method, text))
    }
}
