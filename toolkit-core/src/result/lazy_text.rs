//! Text computed on first use, at most once, then cached.

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
/// travel further.
#[derive(Clone)]
pub(crate) struct LazyText(Arc<Inner>);

struct Inner {
    supplier: Mutex<Option<Supplier>>,
    value: OnceLock<Computed>,
}

/// What the supplier produced: the text as a block (so the result can lend
/// a one-block slice), or the panic message.
pub(crate) enum Computed {
    Text([Block; 1]),
    Panicked(String),
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
        self.0.value.get_or_init(|| {
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
                        Computed::Panicked(crate::result::panic_message(payload.as_ref()))
                    }
                },
                None => Computed::Panicked("the text supplier was already consumed".into()),
            }
        })
    }

    /// The computed value if the supplier has already run.
    pub(crate) fn get(&self) -> Option<&Computed> {
        self.0.value.get()
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
