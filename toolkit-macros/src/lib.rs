//! The `#[tool]` attribute of [`toolkit-core`](https://docs.rs/toolkit-core).
//!
//! Depend on `toolkit-core`, which re-exports this macro as
//! `toolkit_core::tool` and documents it; the generated code names only
//! `toolkit_core`, so no other dependency is needed.

mod docs;
mod errors;
mod expand;
mod model;
mod name_rule;
mod options;
mod owned;

use proc_macro::TokenStream;

/// Turns a function into a tool. Documented on its re-export,
/// `toolkit_core::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = match syn::parse::<syn::ItemFn>(item) {
        Ok(item) => item,
        Err(error) => {
            let message = format!("#[tool] goes on a function: {error}");
            return syn::Error::new(error.span(), message)
                .to_compile_error()
                .into();
        }
    };
    let mut errors = errors::Errors::default();
    let tool = model::ToolFn::read(args.into(), item, &mut errors);
    match (errors.into_compile_errors(), tool) {
        (None, Some(tool)) => expand::expand(&tool).into(),
        // The function itself, stripped of what rustc would reject, beside
        // the errors: every message the author sees is about the tool.
        // The stub beside them keeps `tools![...]` uses quiet.
        (Some(errors), Some(tool)) => {
            // A method sits in an `impl`, where the stub's items cannot.
            let stub = (tool.item.sig.receiver().is_none()).then(|| expand::stub(&tool));
            let item = tool.item;
            quote::quote!(#errors #item #stub).into()
        }
        (Some(errors), None) => errors.into(),
        (None, None) => TokenStream::new(),
    }
}
