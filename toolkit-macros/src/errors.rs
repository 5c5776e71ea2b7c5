//! Errors collected while reading a tool, reported together.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

/// Every mistake found in one annotated function, so that the author sees
/// them all in one compile rather than one per compile.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Records an error at `tokens`' span.
    pub(crate) fn at(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Records the error of a failed step, if it failed.
    pub(crate) fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }

    pub(crate) fn into_compile_errors(self) -> Option<TokenStream> {
        self.0.map(|error| error.to_compile_error())
    }
}

/// The closest of `candidates` to a misspelled `word`, if any is close: by
/// the rule of toolkit-core's "did you mean" for tool names (an edit
/// distance within a third of the longer word, at least 2).
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|&candidate| (strsim::osa_distance(word, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= (word.len().max(candidate.len()) / 3).max(2))
        .min()
        .map(|(_, candidate)| candidate)
}
