//! Error chains as a host's reporter prints them (anyhow's `{:#}`, eyre):
//! each error's message, then its source's, and so on. An error that both
//! prints its cause and returns it from `source()` says one thing twice;
//! [`assert_no_repeats`] finds it.

use std::error::Error;

/// The longest chain walked: a source that leads back to itself would
/// otherwise never end.
const MAX_CHAIN: usize = 64;

/// Clauses shorter than this are not compared: short words (`HTTP 500`,
/// a file name) may rightly appear at two levels.
const MIN_CLAUSE_CHARS: usize = 16;

/// The message of `error` and of each of its sources, outermost first.
pub fn messages(error: &(dyn Error + 'static)) -> Vec<String> {
    let mut messages = Vec::new();
    let mut next: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(error) = next {
        if messages.len() == MAX_CHAIN {
            break;
        }
        messages.push(error.to_string());
        next = error.source();
    }
    messages
}

/// The clauses of a message: its parts between `: `, `; `, sentence ends
/// and line breaks, trimmed of list marks and end punctuation.
fn clauses(message: &str) -> Vec<String> {
    message
        .split(['\n', ';'])
        .flat_map(|line| line.split(": "))
        .flat_map(|part| part.split(". "))
        .map(|clause| {
            clause
                .trim()
                .trim_start_matches("- ")
                .trim_end_matches(['.', ':', ','])
                .trim()
                .to_owned()
        })
        .filter(|clause| clause.chars().count() >= MIN_CLAUSE_CHARS)
        .collect()
}

/// Why the chain of `error` repeats itself, if it does: an empty message,
/// a message that holds the next one's text, or one clause said by two
/// errors of the chain. (One message may say a clause twice: a list of
/// problems may end each with the same hint.)
pub fn repeated(error: &(dyn Error + 'static)) -> Option<String> {
    let messages = messages(error);
    if messages.len() == MAX_CHAIN {
        return Some(format!("the chain is {MAX_CHAIN} errors long or more"));
    }
    for (level, message) in messages.iter().enumerate() {
        if message.trim().is_empty() {
            return Some(format!("error {level} of the chain has no message"));
        }
    }
    for pair in messages.windows(2) {
        if pair[0].contains(pair[1].as_str()) {
            return Some(format!(
                "`{}` prints its source, `{}`, and returns it",
                pair[0], pair[1]
            ));
        }
    }
    let mut seen: Vec<(usize, String)> = Vec::new();
    for (level, message) in messages.iter().enumerate() {
        for clause in clauses(message) {
            if let Some((first, _)) = seen
                .iter()
                .find(|(earlier, said)| *earlier != level && *said == clause)
            {
                return Some(format!(
                    "`{clause}` is said at level {first} and again at level {level} of {messages:#?}"
                ));
            }
            seen.push((level, clause));
        }
    }
    None
}

/// Fails when the chain of `error` repeats itself (see [`repeated`]),
/// naming `what` the error stands for.
#[track_caller]
pub fn assert_no_repeats(what: &str, error: &(dyn Error + 'static)) {
    if let Some(why) = repeated(error) {
        panic!("{what}: {why}");
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    #[derive(Debug)]
    struct Leaf;

    impl fmt::Display for Leaf {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the disk is full of old logs")
        }
    }

    impl Error for Leaf {}

    /// A wrapper that prints its cause, and returns it when `returns`.
    #[derive(Debug)]
    struct Wrapper {
        prints: bool,
        returns: bool,
        leaf: Leaf,
    }

    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the session could not be saved")?;
            if self.prints {
                write!(f, ": {}", self.leaf)?;
            }
            Ok(())
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.returns.then_some(&self.leaf as &(dyn Error + 'static))
        }
    }

    fn wrapper(prints: bool, returns: bool) -> Wrapper {
        Wrapper {
            prints,
            returns,
            leaf: Leaf,
        }
    }

    #[test]
    fn a_cause_printed_and_returned_is_found() {
        assert!(repeated(&wrapper(true, true)).is_some());
    }

    #[test]
    fn a_cause_printed_or_returned_passes() {
        assert_eq!(repeated(&wrapper(true, false)), None);
        assert_eq!(repeated(&wrapper(false, true)), None);
        assert_eq!(messages(&wrapper(false, true)).len(), 2);
    }

    #[test]
    fn a_clause_said_twice_is_found() {
        #[derive(Debug)]
        struct Twice;
        impl fmt::Display for Twice {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("cannot write the record: the disk is full of old logs")
            }
        }
        impl Error for Twice {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&Leaf)
            }
        }
        assert!(repeated(&Twice).is_some());
    }
}
