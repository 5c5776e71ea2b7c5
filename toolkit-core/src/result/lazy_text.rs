//! Text computed on first use, at most once, then cached.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock};

use crate::Block;

type Supplier = Box<dyn FnOnce() -> String + Send>;

/// A text whose supplier runs when the text is first needed and never again.
///
/// Threads that ask at the same moment wait for the one running supplier
/// instead of running their own, so the supplier runs at most once per
/// process however the result is shared. Clones share the cache. A supplier
/// that panics leaves an error in place of the text; the panic does not
/// travel further. A supplier that reads its own text (through a clone of
/// the result it builds) reads an error rather than waiting for itself.
#[derive(Clone)]
pub(crate) struct LazyText(Arc<Inner>);

struct Inner {
    supplier: Mutex<Option<Supplier>>,
    value: OnceLock<Computed>,
}

/// What the supplier produced: the text as a block (so the result can lend
/// a one-block slice), or why there is none.
pub(crate) enum Computed {
    Text([Block; 1]),
    Panicked(Cow<'static, str>),
}

/// What a supplier reads of its own text while it runs. `OnceLock` would
/// wait for the running supplier, which is itself: a deadlock.
static READ_BY_ITS_SUPPLIER: Computed = Computed::Panicked(Cow::Borrowed(
    "the tool's lazy text was read by its own supplier while being computed",
));

thread_local! {
    /// The lazy texts whose suppliers run on this thread, innermost last
    /// (a supplier may read other lazy texts).
    static RUNNING: RefCell<Vec<*const Inner>> = const { RefCell::new(Vec::new()) };
}

/// Marks a lazy text as computed by this thread until dropped, panics
/// included.
struct Running(*const Inner);

impl Running {
    fn start(inner: &Inner) -> Self {
        let key: *const Inner = inner;
        RUNNING.with(|running| running.borrow_mut().push(key));
        Self(key)
    }

    fn is_running(inner: &Inner) -> bool {
        let key: *const Inner = inner;
        RUNNING.with(|running| running.borrow().contains(&key))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|running| {
            let mut running = running.borrow_mut();
            if let Some(at) = running.iter().rposition(|&key| key == self.0) {
                running.remove(at);
            }
        });
    }
}

impl LazyText {
    pub(crate) fn new(supplier: impl FnOnce() -> String + Send + 'static) -> Self {
        Self(Arc::new(Inner {
            supplier: Mutex::new(Some(Box::new(supplier))),
            value: OnceLock::new(),
        }))
    }

    /// The computed value, running the supplier if nobody has yet.
    pub(crate) fn force(&self) -> &Computed {
        if let Some(value) = self.get() {
            return value;
        }
        self.0.value.get_or_init(|| {
            let _running = Running::start(&self.0);
            // `get_or_init` runs this closure once; the lock only moves the
            // supplier out, and a poisoned lock still holds it.
            let supplier = self
                .0
                .supplier
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            match supplier {
                Some(supplier) => match catch_unwind(AssertUnwindSafe(supplier)) {
                    Ok(text) => Computed::Text([Block::text(text)]),
                    Err(payload) => {
                        Computed::Panicked(crate::result::panic_message(payload.as_ref()).into())
                    }
                },
                None => Computed::Panicked("the text supplier was already consumed".into()),
            }
        })
    }

    /// The computed value if the supplier has already run, or the error a
    /// supplier reads of its own text while it runs.
    pub(crate) fn get(&self) -> Option<&Computed> {
        match self.0.value.get() {
            Some(value) => Some(value),
            None if Running::is_running(&self.0) => Some(&READ_BY_ITS_SUPPLIER),
            None => None,
        }
    }
}

impl fmt::Debug for LazyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            None => f.write_str("LazyText(<not computed>)"),
            Some(Computed::Text([block])) => f.debug_tuple("LazyText").field(block).finish(),
            Some(Computed::Panicked(message)) => {
                f.debug_tuple("LazyText::Panicked").field(message).finish()
            }
        }
    }
}
