//! An annotated function, read and checked: the model the code is generated
//! from.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Pat, Safety, Type};

use crate::docs::DocLines;
use crate::errors::{Errors, did_you_mean};
use crate::options::{Hints, ParamOptions, ToolOptions};
use crate::{name_rule, owned};

/// A checked tool.
pub(crate) struct ToolFn {
    /// The function, its parameters' doc comments and options removed so
    /// that rustc accepts it.
    pub(crate) item: ItemFn,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) params: Vec<Param>,
    /// Whether the tool joins the global catalogue.
    pub(crate) in_catalogue: bool,
    pub(crate) title: Option<String>,
    pub(crate) hints: Hints,
    /// Whether each call waits for a person's decision.
    pub(crate) needs_approval: bool,
    /// The path generated code names `toolkit_core` by.
    pub(crate) krate: syn::Path,
}

pub(crate) struct Param {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) kind: ParamKind,
}

pub(crate) enum ParamKind {
    /// Filled in by the model: in the schema under `wire_name`.
    Visible {
        wire_name: String,
        renamed: bool,
        description: Option<String>,
    },
    /// Provided by the host's registry, by type.
    State,
    /// The per-call context.
    Context,
}

impl ToolFn {
    /// Reads the function, recording every mistake in `errors`. Returns the
    /// function with parameter attributes stripped even when there are
    /// mistakes, so that the errors reported are ours alone.
    pub(crate) fn read(args: TokenStream, mut item: ItemFn, errors: &mut Errors) -> Option<Self> {
        let options = ToolOptions::parse(args, errors);
        if let (Some(read_only), Some(destructive)) =
            (&options.hints.read_only, &options.hints.destructive)
            && read_only.value
            && destructive.value
        {
            errors.at(
                destructive,
                "a read-only tool cannot be destructive: remove `destructive`, or `read_only`",
            );
        }
        check_signature(&item, errors);
        // Reported above; left in, it would add rustc's own errors (C-variadic
        // definitions are unstable) to ours.
        item.sig.variadic = None;

        let docs = DocLines::of(&item.attrs);
        let argument_docs = docs.arguments();
        let mut params = Vec::new();
        for input in item.sig.inputs.iter_mut() {
            let FnArg::Typed(typed) = input else {
                continue; // reported by check_signature
            };
            let param_docs = DocLines::of(&typed.attrs);
            typed.attrs.retain(|attr| !attr.path().is_ident("doc"));
            let param_options = ParamOptions::take(&mut typed.attrs, errors);
            let ident = match &*typed.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                    pat.ident.clone()
                }
                other => {
                    errors.at(
                        other,
                        "a tool parameter needs a plain name, which becomes its name in the schema; destructure it inside the function instead",
                    );
                    continue;
                }
            };
            let own_doc = param_docs.text();
            let kind = param_kind(&ident, &typed.ty, param_options, own_doc, errors);
            params.push(Param {
                ident,
                ty: (*typed.ty).clone(),
                kind,
            });
        }

        attach_argument_docs(&mut params, argument_docs, errors);
        check_wire_names(&params, errors);
        check_described(&params, errors);

        let name = match &options.name {
            Some(lit) => {
                check_tool_name(&lit.value(), lit.span(), errors);
                lit.value()
            }
            None => {
                let name = unraw(&item.sig.ident);
                check_tool_name(&name, item.sig.ident.span(), errors);
                name
            }
        };
        let description = match &options.description {
            Some(lit) => lit.value().trim().to_owned(),
            None => docs.description(),
        };
        if description.is_empty() {
            let at: &dyn quote::ToTokens = match &options.description {
                Some(lit) => lit,
                None => &item.sig.ident,
            };
            errors.at(
                at,
                "a tool needs a description for the model: add a `///` doc comment to the function, or `#[tool(description = \"...\")]`",
            );
        }
        Some(Self {
            item,
            name,
            description,
            params,
            in_catalogue: options.catalogue.is_none_or(|value| value.value),
            title: options.title.map(|lit| lit.value()),
            hints: options.hints,
            needs_approval: options.needs_approval.is_some_and(|lit| lit.value),
            krate: options
                .krate
                .unwrap_or_else(|| syn::parse_quote!(::toolkit_core)),
        })
    }
}

fn check_signature(item: &ItemFn, errors: &mut Errors) {
    let sig = &item.sig;
    if !sig.generics.params.is_empty() {
        errors.at(
            &sig.generics,
            "a tool cannot be generic: it is called with JSON at run time, so every parameter needs a concrete type",
        );
    }
    if let Some(clause) = &sig.generics.where_clause {
        errors.at(
            clause,
            "a tool cannot have a `where` clause: use concrete types",
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        errors.at(
            token,
            "a tool cannot be `unsafe`: the model calls it with arbitrary arguments; make it safe and keep the unsafe code inside",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi,
            "a tool cannot be `extern`: write a Rust function that calls the foreign one",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(
            variadic,
            "a tool cannot be variadic: take a `Vec<T>` parameter instead",
        );
    }
    if let Some(receiver) = sig.receiver() {
        errors.at(
            receiver,
            "a tool is a free function, not a method: remove `self`, and pass what it held through a `#[tool(state)]` parameter",
        );
    }
}

fn param_kind(
    ident: &Ident,
    ty: &Type,
    options: ParamOptions,
    own_doc: String,
    errors: &mut Errors,
) -> ParamKind {
    check_owned(ty, options.context.is_some(), errors);
    match (options.state, options.context) {
        (Some(_), Some(context)) => {
            errors.push(syn::Error::new(
                context,
                "a parameter is either `state` or `context`, not both",
            ));
            ParamKind::State
        }
        (Some(_), None) | (None, Some(_)) => {
            if let Some(rename) = &options.rename {
                errors.at(
                    rename,
                    "only parameters the model fills in have a name in the schema; remove `rename`",
                );
            }
            if let Some(undocumented) = options.undocumented {
                errors.push(syn::Error::new(
                    undocumented,
                    "hidden parameters are not shown to the model and need no description; remove `undocumented`",
                ));
            }
            if options.state.is_some() {
                ParamKind::State
            } else {
                ParamKind::Context
            }
        }
        (None, None) => {
            let (wire_name, renamed) = match &options.rename {
                Some(lit) => (lit.value(), true),
                None => (unraw(ident), false),
            };
            let description = if own_doc.is_empty() {
                None
            } else {
                Some(own_doc)
            };
            // An explicit opt-out stands in for a description.
            let description = match (description, options.undocumented) {
                (None, Some(_)) => Some(String::new()),
                (description, _) => description,
            };
            ParamKind::Visible {
                wire_name,
                renamed,
                description,
            }
        }
    }
}

/// Parameters are deserialized from JSON, so they must own their data: a
/// borrow at any depth (`&str`, `Vec<&str>`, `Cow<'_, str>`) is reported
/// at the borrow, with the owned type to write instead.
fn check_owned(ty: &Type, is_context: bool, errors: &mut Errors) {
    if let Type::ImplTrait(impl_trait) = ty {
        errors.at(
            impl_trait,
            "a tool parameter needs a concrete type, not `impl Trait`: the macro must know the type to read it from JSON",
        );
        return;
    }
    let Some(at) = owned::first_borrow(ty) else {
        return;
    };
    let message = match (ty, owned::owned(ty)) {
        (Type::Reference(_), _) if is_context => {
            "take the context by value: `CallContext` is cheap to clone".to_owned()
        }
        (_, Some(owned)) => format!(
            "a tool parameter must own its data: use `{}` instead of `{}`",
            owned::compact(&owned),
            owned::compact(ty)
        ),
        (_, None) => format!(
            "a tool parameter must own its data: `{}` borrows; use a type without lifetimes",
            owned::compact(ty)
        ),
    };
    errors.at(at, message);
}

/// Gives each parameter its `# Arguments` entry; an entry naming no
/// parameter, or a parameter described twice, is a mistake.
fn attach_argument_docs(
    params: &mut [Param],
    entries: Vec<crate::docs::ArgumentDoc>,
    errors: &mut Errors,
) {
    for entry in entries {
        let found = params.iter_mut().find(|param| {
            unraw(&param.ident) == entry.name
                || matches!(&param.kind, ParamKind::Visible { wire_name, .. } if *wire_name == entry.name)
        });
        match found {
            Some(Param {
                kind: ParamKind::Visible { description, .. },
                ..
            }) => {
                if description.as_deref().is_some_and(|d| !d.is_empty()) {
                    errors.push(syn::Error::new(
                        entry.span,
                        format!("`{}` is described twice: by its own `///` comment and under `# Arguments`; keep one", entry.name),
                    ));
                }
                *description = Some(entry.text);
            }
            Some(_) => {} // hidden parameters may be documented for humans
            None => {
                let names: Vec<String> = params.iter().map(|p| unraw(&p.ident)).collect();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let hint = did_you_mean(&entry.name, &names)
                    .map(|close| format!("; did you mean `{close}`?"))
                    .unwrap_or_default();
                errors.push(syn::Error::new(
                    entry.span,
                    format!(
                        "`# Arguments` describes `{}`, which is not a parameter{hint}",
                        entry.name
                    ),
                ));
            }
        }
    }
}

fn check_wire_names(params: &[Param], errors: &mut Errors) {
    let mut seen: Vec<&str> = Vec::new();
    for param in params {
        let ParamKind::Visible { wire_name, .. } = &param.kind else {
            continue;
        };
        if seen.contains(&wire_name.as_str()) {
            errors.at(
                &param.ident,
                format!("two parameters are named `{wire_name}` in the schema; give one another name with `#[tool(rename = \"...\")]`"),
            );
        }
        seen.push(wire_name);
        let valid = wire_name.len() <= 64
            && wire_name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && wire_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            errors.at(
                &param.ident,
                format!("`{wire_name}` is not a portable parameter name: use letters, digits and `_`, starting with a letter or `_`, at most 64 characters"),
            );
        }
    }
}

fn check_described(params: &[Param], errors: &mut Errors) {
    for param in params {
        if let ParamKind::Visible {
            wire_name,
            description: None,
            ..
        } = &param.kind
        {
            errors.at(
                &param.ident,
                format!(
                    "the parameter `{wire_name}` has no description for the model: add a `///` comment above it or a ``* `{wire_name}` - ...`` line under `# Arguments`, or mark it `#[tool(undocumented)]`"
                ),
            );
        }
    }
}

/// The portable tool-name rule: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
fn check_tool_name(name: &str, span: Span, errors: &mut Errors) {
    if !name_rule::is_portable(name) {
        errors.push(syn::Error::new(
            span,
            format!(
                "`{name}` is not a valid tool name: every provider accepts `^[a-zA-Z_][a-zA-Z0-9_-]{{0,63}}$` (a letter or `_`, then letters, digits, `_` or `-`, at most 64 characters)"
            ),
        ));
    }
}

pub(crate) fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}

impl Param {
    pub(crate) fn span(&self) -> Span {
        self.ty.span()
    }
}

/// The literal of a string, spanned at `span`, for generated code.
pub(crate) fn lit(value: &str, span: Span) -> LitStr {
    LitStr::new(value, span)
}
