//! A conversation with an agent, and where its current run stands: what
//! a host saves between turns, and what a paused or crashed run resumes
//! from.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use toolkit_core::response::Usage;
use toolkit_core::{RunState, ToolCall, ToolResult};

use crate::conversation::{Conversation, ConversationChanges, ReadConversationChanges};

/// The version of the JSON form [`Session`] is saved as.
pub const SESSION_VERSION: u32 = 1;

/// A conversation with an agent and where its current run stands.
///
/// Made by [`Agent::session`](crate::Agent::session) and advanced by
/// [`Agent::send`](crate::Agent::send) (a user message) and
/// [`Agent::resume`](crate::Agent::resume) (a paused run). It is plain
/// data: serialize it with serde (a JSON form documented in
/// `docs/round-trip.md`, "Sessions"), keep it anywhere, load it in another
/// process, and the conversation goes on where it was.
///
/// A run that waits for a person stops with its
/// [`pending`](Self::pending) calls; [`decide`](Self::decide) records the
/// decisions, and [`Agent::resume`](crate::Agent::resume) goes on.
///
/// The run's own values ([`RunState`]: the user, a database handle) are
/// not saved: give them again with [`set_state`](Self::set_state) after
/// loading.
#[derive(Clone, Serialize, Deserialize)]
pub struct Session {
    version: u32,
    id: String,
    pub(crate) conversation: Conversation,
    pub(crate) run: RunProgress,
    pub(crate) turn: Option<PendingTurn>,
    #[serde(skip)]
    pub(crate) state: RunState,
}

/// How far the current run has come.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RunProgress {
    /// Model turns taken in this run.
    pub(crate) steps: usize,
    /// Tokens over this run.
    pub(crate) usage: Usage,
    /// Consecutive failures, per tool.
    pub(crate) failures: BTreeMap<String, u32>,
    /// Calls made, per tool.
    pub(crate) uses: BTreeMap<String, u32>,
    /// The latest answer: the model's text, or a done tool's summary.
    pub(crate) answer: Option<String>,
    pub(crate) done: bool,
    pub(crate) success: Option<bool>,
    /// Whether the run has ended (a new message starts the next).
    pub(crate) ended: bool,
}

impl RunProgress {
    /// Takes back one use of `tool`, for a call run again after it may
    /// have run.
    pub(crate) fn uncount(&mut self, tool: &str) {
        if let Some(used) = self.uses.get_mut(tool) {
            *used = used.saturating_sub(1);
        }
    }
}

/// The calls of the model's latest turn, while they are being settled.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PendingTurn {
    pub(crate) step: usize,
    /// Whether the provider gave ids of its own to every call (Gemini may
    /// not; then results are matched by position).
    pub(crate) provider_ids: bool,
    pub(crate) calls: Vec<PendingCall>,
}

/// One call of the model's latest turn and where it stands.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The call as the model made it.
    pub call: ToolCall,
    /// Why its arguments cannot be used, if they cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed: Option<String>,
    /// Where it stands.
    pub status: CallStatus,
}

impl PendingCall {
    /// A call waiting for a decision: what an approval hook is given, for
    /// a host that tests its hook.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_agent::{CallStatus, PendingCall};
    /// use toolkit_core::ToolCall;
    ///
    /// let pending = PendingCall::new(ToolCall::new("c1", "book", json!({"day": "Sunday"})));
    /// assert!(matches!(pending.status, CallStatus::AwaitingApproval));
    /// ```
    pub fn new(call: ToolCall) -> Self {
        Self {
            call,
            malformed: None,
            status: CallStatus::AwaitingApproval,
        }
    }

    /// The same call, standing as `status`.
    pub fn with_status(mut self, status: CallStatus) -> Self {
        self.status = status;
        self
    }
}

/// Where one call of the latest turn stands.
///
/// A call is recorded as [`Started`](Self::Started) (and the session
/// saved) before a tool with side effects runs, and as
/// [`Finished`](Self::Finished) after. A session loaded with a call still
/// `Started` — the process died while it ran — has it as
/// [`MayHaveRun`](Self::MayHaveRun): it is never run again silently.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallStatus {
    /// Not yet looked at.
    New,
    /// Waiting for a person's decision: the tool needs approval.
    AwaitingApproval,
    /// It was started and no result was recorded: it may have run. A
    /// decision settles it: [`Decision::Approve`] runs it again (as it was
    /// run: edited by the host, if it was), [`Decision::Answered`] gives
    /// the result it had, [`Decision::Deny`] tells the model it was not
    /// confirmed.
    MayHaveRun {
        /// The call that was running.
        call: ToolCall,
    },
    /// Cleared to run, as given (perhaps edited by the host).
    Approved {
        /// The call to run.
        call: ToolCall,
    },
    /// Running (as recorded before it started).
    Started {
        /// The call being run.
        call: ToolCall,
    },
    /// Done: the result the model will see.
    Finished {
        /// The result.
        result: ToolResult,
    },
}

impl CallStatus {
    /// Whether the call waits for the host's decision.
    pub fn awaits_decision(&self) -> bool {
        matches!(self, Self::AwaitingApproval | Self::MayHaveRun { .. })
    }
}

/// A decision about one call that waits for one: a call of a tool that
/// needs approval, or a call that [may have run](CallStatus::MayHaveRun).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as made (or, for a call that may have run, run it
    /// again).
    Approve,
    /// Do not run it; the model is told it was denied, and why.
    Deny(String),
    /// Run this call instead (same id; the arguments, or even the tool,
    /// changed by the host).
    Edit(ToolCall),
    /// Do not run it: this is its result (what a call that may have run
    /// did, as the host found out).
    Answered(ToolResult),
    /// Decide later: the run stops with the call pending, to be
    /// [decided](crate::Session::decide) and
    /// [resumed](crate::Agent::resume), in this process or another.
    Defer,
}

impl Decision {
    /// The status the decision gives a waiting call; `None` for
    /// [`Defer`](Self::Defer).
    pub(crate) fn settle(self, call: &ToolCall, may_have_run: bool) -> Option<CallStatus> {
        Some(match self {
            Decision::Approve => CallStatus::Approved { call: call.clone() },
            Decision::Edit(mut edited) => {
                edited.id = call.id.clone();
                CallStatus::Approved { call: edited }
            }
            Decision::Deny(reason) => {
                let message = if may_have_run {
                    format!(
                        "The call was interrupted and may or may not have taken effect; \
                         it was not run again ({reason}). Check before repeating it."
                    )
                } else {
                    format!(
                        "The call was not run: the user denied it ({reason}). \
                         Do not repeat it unchanged."
                    )
                };
                CallStatus::Finished {
                    result: ToolResult::error(message),
                }
            }
            Decision::Answered(result) => CallStatus::Finished { result },
            Decision::Defer => return None,
        })
    }
}

/// Why a decision could not be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecideError {
    /// No call of the latest turn has this id.
    UnknownCall(String),
    /// The call does not wait for a decision.
    NotPending(String),
    /// [`Decision::Defer`] decides nothing.
    Deferred,
}

impl fmt::Display for DecideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownCall(id) => write!(f, "no call of the latest turn has the id `{id}`"),
            Self::NotPending(id) => write!(f, "the call `{id}` does not wait for a decision"),
            Self::Deferred => f.write_str("deferring is not a decision"),
        }
    }
}

impl std::error::Error for DecideError {}

/// Why a loaded session cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// The JSON is not a session.
    Json(serde_json::Error),
    /// A session of a later form than this version reads.
    Version(u32),
    /// The id is not one a store can hold: 1 to 128 of `A-Z a-z 0-9 _ -`.
    Id(String),
    /// The session found under an id holds another.
    Misplaced {
        /// The id it was looked up by.
        wanted: String,
        /// The id it holds.
        found: String,
    },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // serde's error, the source, says where and why.
            Self::Json(_) => f.write_str("not a saved session"),
            Self::Version(version) => write!(
                f,
                "the session was saved in form {version}; this version reads form {SESSION_VERSION}"
            ),
            Self::Id(id) => write!(
                f,
                "`{id}` is not a session id: use 1 to 128 of `A-Z a-z 0-9 _ -`"
            ),
            Self::Misplaced { wanted, found } => write!(
                f,
                "the session stored as `{wanted}` is `{found}`: it was copied or renamed"
            ),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Json(error) => Some(error),
            _ => None,
        }
    }
}

impl Session {
    pub(crate) fn new(conversation: Conversation) -> Self {
        Self {
            version: SESSION_VERSION,
            id: new_id(),
            conversation,
            run: RunProgress {
                ended: true,
                ..RunProgress::default()
            },
            turn: None,
            state: RunState::new(),
        }
    }

    /// The session's id: what a [store](crate::SessionStore) keeps it
    /// under. Made unique in the process when the session is made.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Gives the session an id of the host's (a chat's id, say).
    pub fn set_id(&mut self, id: impl Into<String>) -> Result<(), SessionError> {
        let id = id.into();
        if !is_valid_id(&id) {
            return Err(SessionError::Id(id));
        }
        self.id = id;
        Ok(())
    }

    /// The transcript.
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// The transcript, to change before the next request (a setting, a
    /// message of the host's).
    pub fn conversation_mut(&mut self) -> &mut Conversation {
        &mut self.conversation
    }

    /// The run's own values, given to its tools' calls (not saved).
    pub fn set_state(&mut self, state: RunState) {
        self.state = state;
    }

    /// The run's own values.
    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// Whether the current run has ended: the next
    /// [`send`](crate::Agent::send) starts a new one. A paused run has not.
    pub fn is_ended(&self) -> bool {
        self.run.ended && self.turn.is_none()
    }

    /// The calls waiting for the host's decision, in call order.
    pub fn pending(&self) -> Vec<&PendingCall> {
        self.turn
            .iter()
            .flat_map(|turn| &turn.calls)
            .filter(|pending| pending.status.awaits_decision())
            .collect()
    }

    /// Every call of the latest turn, while they are being settled.
    pub fn calls(&self) -> &[PendingCall] {
        self.turn.as_ref().map_or(&[], |turn| &turn.calls)
    }

    /// Records the host's decision on a waiting call; the next
    /// [`resume`](crate::Agent::resume) acts on it.
    pub fn decide(&mut self, call_id: &str, decision: Decision) -> Result<(), DecideError> {
        let pending = self
            .turn
            .as_mut()
            .and_then(|turn| turn.calls.iter_mut().find(|p| p.call.id == call_id))
            .ok_or_else(|| DecideError::UnknownCall(call_id.to_owned()))?;
        if !pending.status.awaits_decision() {
            return Err(DecideError::NotPending(call_id.to_owned()));
        }
        let (call, may_have_run) = match &pending.status {
            CallStatus::MayHaveRun { call } => (call.clone(), true),
            _ => (pending.call.clone(), false),
        };
        let status = decision
            .settle(&call, may_have_run)
            .ok_or(DecideError::Deferred)?;
        let tool = call.name.clone();
        pending.status = status;
        // Running it again is not another use of the tool: the run counted
        // it when it started.
        if may_have_run && matches!(pending.status, CallStatus::Approved { .. }) {
            self.run.uncount(&tool);
        }
        Ok(())
    }

    /// The session as JSON (the documented form). Fails only for what
    /// JSON cannot hold: a file path of a result that is not UTF-8.
    pub fn to_json(&self) -> Result<String, SessionError> {
        serde_json::to_string(self).map_err(SessionError::Json)
    }

    /// A session from its JSON form. Calls recorded as started, without a
    /// result, come back as [`CallStatus::MayHaveRun`].
    pub fn from_json(json: &str) -> Result<Self, SessionError> {
        let mut session: Session = serde_json::from_str(json).map_err(SessionError::Json)?;
        if session.version > SESSION_VERSION {
            return Err(SessionError::Version(session.version));
        }
        if !is_valid_id(&session.id) {
            return Err(SessionError::Id(session.id));
        }
        session.loaded();
        Ok(session)
    }

    /// What changed since the session was last saved through the agent's
    /// journal: what a [store](crate::SessionStore) appends, in place of
    /// the whole session, in
    /// [`save_changes`](crate::SessionStore::save_changes).
    ///
    /// Taking it costs what the changes are, not what the session is: the
    /// transcript's items and steps are counted from the last save, and
    /// only those after it are written, with the small parts (where the
    /// run stands, the pending calls, the settings) whole.
    pub fn changes(&self) -> SessionChanges<'_> {
        SessionChanges {
            session: self,
            base: self.conversation.tracker.base,
            mark: new_mark(),
        }
    }

    /// Applies changes [taken](Self::changes) from this session as it
    /// was saved, and [written](SessionChanges::to_json) since: what a
    /// store that keeps a journal does when it loads, record after record.
    ///
    /// As with [`from_json`](Self::from_json), calls the record has as
    /// started, without a result, come back as
    /// [`CallStatus::MayHaveRun`]. Fails, leaving the session as it was
    /// or partly changed, for a record that does not follow it (items or
    /// steps it does not have): the store's journal is broken.
    pub fn apply_changes(&mut self, record: &str) -> Result<(), SessionError> {
        let read: ReadChanges = serde_json::from_str(record).map_err(SessionError::Json)?;
        if read.version > SESSION_VERSION {
            return Err(SessionError::Version(read.version));
        }
        if !is_valid_id(&read.id) {
            return Err(SessionError::Id(read.id));
        }
        self.conversation
            .apply(read.conversation)
            .map_err(|problem| SessionError::Json(serde::de::Error::custom(problem)))?;
        self.version = read.version;
        self.id = read.id;
        self.run = read.run;
        self.turn = read.turn;
        self.loaded();
        Ok(())
    }

    /// Counts changes from here: the store holds the session as it is, as
    /// saved under `mark`.
    pub(crate) fn mark_saved(&mut self, mark: u64) {
        self.conversation.mark_saved(mark);
    }

    /// What loading does to a run cut short: a call that was running may
    /// have run.
    pub(crate) fn loaded(&mut self) {
        for pending in self.turn.iter_mut().flat_map(|turn| &mut turn.calls) {
            if let CallStatus::Started { call } = &pending.status {
                pending.status = CallStatus::MayHaveRun { call: call.clone() };
            }
        }
    }
}

/// What changed in a [`Session`] since it was last saved: made by
/// [`Session::changes`], given to
/// [`SessionStore::save_changes`](crate::SessionStore::save_changes).
///
/// A store that keeps a journal appends [`to_json`](Self::to_json) when
/// [`base`](Self::base) is the mark of the last thing it stored for this
/// session, and stores the whole [`session`](Self::session) otherwise.
/// Loading, it reads the whole session and applies the records after it
/// in order with [`Session::apply_changes`].
#[derive(Debug, Clone)]
pub struct SessionChanges<'a> {
    session: &'a Session,
    base: Option<u64>,
    mark: u64,
}

impl<'a> SessionChanges<'a> {
    /// The session, as it is now.
    pub fn session(&self) -> &'a Session {
        self.session
    }

    /// The mark of the save these changes follow: `None` when the session
    /// was never saved through the journal in this process (made here, or
    /// loaded without one), and must be stored whole.
    pub fn base(&self) -> Option<u64> {
        self.base
    }

    /// The mark the session has once these changes are stored: the
    /// [`base`](Self::base) of the next. Unique to this save, across
    /// processes.
    pub fn mark(&self) -> u64 {
        self.mark
    }

    /// The changes as JSON, to append after what was stored at
    /// [`base`](Self::base) (with no base, the whole session, in a form
    /// [`Session::apply_changes`] reads): `{"version", "id", "run",
    /// "turn", "conversation": {"items_from", "steps_from",
    /// "conversation"}}`, the conversation in its own form with only its
    /// items from `items_from` on and its history's steps after
    /// `steps_from`.
    pub fn to_json(&self) -> Result<String, SessionError> {
        let session = self.session;
        WrittenChanges {
            version: session.version,
            id: &session.id,
            run: &session.run,
            turn: &session.turn,
            conversation: ConversationChanges::of(&session.conversation, self.base.is_none()),
        }
        .to_json()
    }
}

#[derive(Serialize)]
struct WrittenChanges<'a> {
    version: u32,
    id: &'a str,
    run: &'a RunProgress,
    turn: &'a Option<PendingTurn>,
    conversation: ConversationChanges<'a>,
}

impl WrittenChanges<'_> {
    fn to_json(&self) -> Result<String, SessionError> {
        serde_json::to_string(self).map_err(SessionError::Json)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadChanges {
    version: u32,
    id: String,
    run: RunProgress,
    turn: Option<PendingTurn>,
    conversation: ReadConversationChanges,
}

/// A mark no other save has, in this process or another: the clock, the
/// process id and a counter, mixed (no random source needed).
pub(crate) fn new_mark() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    mix(nanos ^ mix(u64::from(std::process::id()) << 32 ^ count))
}

/// SplitMix64's finalizer: nearby inputs give unrelated outputs.
pub(crate) fn mix(mut value: u64) -> u64 {
    value = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("steps", &self.run.steps)
            .field("ended", &self.run.ended)
            .field("pending", &self.pending().len())
            .finish_non_exhaustive()
    }
}

pub(crate) fn is_valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An id unique in this process and, by its clock and process id, across
/// processes: no random source needed.
fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("s{nanos:x}-{:x}-{count:x}", std::process::id())
}
