//! `#[tool(...)]` options, on the function and on its parameters.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr};

use crate::errors::{Errors, did_you_mean};

/// Options of the attribute on the function.
#[derive(Default)]
pub(crate) struct ToolOptions {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    /// `catalogue = false` keeps the tool out of the global catalogue, for
    /// tools a library ships that need setup before use.
    pub(crate) catalogue: Option<syn::LitBool>,
    /// A title for people (MCP's `title`).
    pub(crate) title: Option<LitStr>,
    /// The behaviour hints, each given as a flag (`read_only`) or with a
    /// value (`read_only = false`).
    pub(crate) hints: Hints,
    /// `needs_approval`: each call waits for a person's decision.
    pub(crate) needs_approval: Option<syn::LitBool>,
    /// `crate = path`: where `toolkit_core` is, for crates that re-export
    /// it under another name.
    pub(crate) krate: Option<syn::Path>,
}

/// MCP's tool annotations, as the attribute gives them.
#[derive(Default)]
pub(crate) struct Hints {
    pub(crate) read_only: Option<syn::LitBool>,
    pub(crate) destructive: Option<syn::LitBool>,
    pub(crate) idempotent: Option<syn::LitBool>,
    pub(crate) open_world: Option<syn::LitBool>,
}

const TOOL_OPTIONS: &[&str] = &[
    "name",
    "description",
    "catalogue",
    "title",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "needs_approval",
    "crate",
];

impl ToolOptions {
    pub(crate) fn parse(args: TokenStream, errors: &mut Errors) -> Self {
        let mut options = Self::default();
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("name") {
                set(&mut options.name, &meta, errors)
            } else if meta.path.is_ident("description") {
                set(&mut options.description, &meta, errors)
            } else if meta.path.is_ident("title") {
                set(&mut options.title, &meta, errors)
            } else if let Some(slot) = options.hints.slot(&meta) {
                flag(slot, &meta, errors)
            } else if meta.path.is_ident("needs_approval") {
                flag(&mut options.needs_approval, &meta, errors)
            } else if meta.path.is_ident("crate") {
                // `crate = path`, or `crate = "path"` as serde spells it.
                let value = meta.value()?;
                let path = if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse::<syn::Path>()?
                } else {
                    value.parse::<syn::Path>()?
                };
                if options.krate.replace(path).is_some() {
                    errors.at(&meta.path, "this option is given twice");
                }
                Ok(())
            } else if meta.path.is_ident("catalogue") {
                let value: syn::LitBool = meta.value()?.parse()?;
                if options.catalogue.replace(value).is_some() {
                    errors.at(&meta.path, "this option is given twice");
                }
                Ok(())
            } else {
                errors.push(unknown(&meta, TOOL_OPTIONS, "on a tool"));
                skip_value(&meta)
            }
        });
        let parsed = parser.parse2(args);
        errors.ok(parsed);
        options
    }
}

impl Hints {
    fn slot(&mut self, meta: &ParseNestedMeta<'_>) -> Option<&mut Option<syn::LitBool>> {
        let path = &meta.path;
        if path.is_ident("read_only") {
            Some(&mut self.read_only)
        } else if path.is_ident("destructive") {
            Some(&mut self.destructive)
        } else if path.is_ident("idempotent") {
            Some(&mut self.idempotent)
        } else if path.is_ident("open_world") {
            Some(&mut self.open_world)
        } else {
            None
        }
    }
}

/// A hint: `read_only` alone means `read_only = true`.
fn flag(
    slot: &mut Option<syn::LitBool>,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let value = if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse()?
    } else {
        syn::LitBool::new(true, meta.path.span())
    };
    if slot.replace(value).is_some() {
        errors.at(&meta.path, "this option is given twice");
    }
    Ok(())
}

/// What a parameter's `#[tool(...)]` says about it.
#[derive(Default)]
pub(crate) struct ParamOptions {
    pub(crate) state: Option<Span>,
    pub(crate) context: Option<Span>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) undocumented: Option<Span>,
}

const PARAM_OPTIONS: &[&str] = &["state", "context", "rename", "undocumented"];

impl ParamOptions {
    /// Reads and removes the `#[tool(...)]` attributes of a parameter.
    pub(crate) fn take(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> Self {
        let mut options = Self::default();
        attrs.retain(|attr| {
            // Parameters are fields of a struct the macro derives; rustc
            // would only say it does not know the attribute here.
            if attr.path().is_ident("serde") || attr.path().is_ident("schemars") {
                errors.at(
                    attr,
                    "`#[serde]` and `#[schemars]` are not read on a tool parameter: use \
                     `#[tool(rename = \"...\")]` to rename it, `Option<T>` to make it \
                     optional, or a struct of your own that derives `Deserialize` and \
                     `JsonSchema` for anything else",
                );
                return false;
            }
            if !attr.path().is_ident("tool") {
                return true;
            }
            let parsed = attr.parse_nested_meta(|meta| {
                let span = meta
                    .path
                    .get_ident()
                    .map_or_else(Span::call_site, |i| i.span());
                if meta.path.is_ident("state") {
                    options.state = Some(span);
                } else if meta.path.is_ident("context") {
                    options.context = Some(span);
                } else if meta.path.is_ident("undocumented") {
                    options.undocumented = Some(span);
                } else if meta.path.is_ident("rename") {
                    return set(&mut options.rename, &meta, errors);
                } else {
                    errors.push(unknown(&meta, PARAM_OPTIONS, "on a parameter"));
                    return skip_value(&meta);
                }
                Ok(())
            });
            errors.ok(parsed);
            false
        });
        options
    }
}

fn set(
    slot: &mut Option<LitStr>,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let value: LitStr = meta.value()?.parse()?;
    if slot.is_some() {
        errors.at(&meta.path, "this option is given twice");
    }
    *slot = Some(value);
    Ok(())
}

fn unknown(meta: &ParseNestedMeta<'_>, known: &[&'static str], place: &str) -> syn::Error {
    let word = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    let list = known
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let message = match did_you_mean(&word, known) {
        Some(close) => {
            format!("unknown option `{word}` {place}; did you mean `{close}`? (known: {list})")
        }
        None => format!("unknown option `{word}` {place} (known: {list})"),
    };
    syn::Error::new_spanned(&meta.path, message)
}

/// Consumes `= value` or `(...)` after an unknown option, so that parsing
/// goes on to report the next mistake too.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}
