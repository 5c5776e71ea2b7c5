//! A call's log messages, sent to the client as `notifications/message`
//! when they are at least as severe as the level it asked for: with
//! `logging/setLevel` for its session (2025-11-25), or in each request's
//! `_meta` (2026-07-28).
//!
//! Logging is deprecated by SEP-2577 (rmcp marks its types so) but part of
//! both revisions served.
#![allow(deprecated)]

use std::sync::{Mutex, PoisonError};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;
use toolkit_core::{LogLevel, LogMessage, LogSink};

use super::forward::Forwarder;

/// The level a session's client set with `logging/setLevel`; unset until
/// it does.
#[derive(Debug, Default)]
pub(crate) struct SessionLevel(Mutex<Option<LogLevel>>);

impl SessionLevel {
    pub(crate) fn set(&self, level: LogLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    pub(crate) fn get(&self) -> Option<LogLevel> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub(crate) fn from_rmcp(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

fn to_rmcp(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// Forwards one call's log messages at or above `least`, in order, from the
/// tool's task (where logging must not wait) to the client, named for the
/// tool (`logger`). Most tools never log: the forwarding task starts at the
/// first message (`forward.rs`), so that a call without messages pays for
/// none.
pub(crate) struct Logger {
    sink: LogSink,
    forwarder: Forwarder<LogMessage>,
}

impl Logger {
    pub(crate) fn new(least: LogLevel, tool: String, peer: Peer<RoleServer>) -> Self {
        let forwarder = Forwarder::new(move |receiver| forward(tool, peer, receiver));
        let into = forwarder.clone();
        let sink = LogSink::new(move |message| {
            if message.level >= least {
                into.send(message);
            }
        });
        Self { sink, forwarder }
    }

    pub(crate) fn sink(&self) -> &LogSink {
        &self.sink
    }

    /// Sends the messages logged so far and stops: later messages (from a
    /// tool that kept its context past its call) go nowhere.
    pub(crate) async fn finish(self) {
        self.forwarder.finish().await;
    }
}

async fn forward(
    tool: String,
    peer: Peer<RoleServer>,
    mut receiver: mpsc::UnboundedReceiver<LogMessage>,
) {
    while let Some(message) = receiver.recv().await {
        let params = LoggingMessageNotificationParam::new(
            to_rmcp(message.level),
            Value::String(message.message),
        )
        .with_logger(tool.clone());
        if peer.notify_logging_message(params).await.is_err() {
            return;
        }
    }
}
