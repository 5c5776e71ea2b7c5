//! The code generated beside a tool function.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ReturnType, Type};

use crate::model::{ParamKind, ToolFn, lit};

pub(crate) fn expand(tool: &ToolFn) -> TokenStream {
    let item = &tool.item;
    let ident = &item.sig.ident;
    let name = &tool.name;
    let description = &tool.description;
    let krate = &tool.krate;
    let function = crate::model::unraw(ident);
    // serde and schemars take their crate's path as a string.
    let krate_text = quote!(#krate).to_string().replace(' ', "");
    let serde_path = format!("{krate_text}::__private_v1::serde");
    let hidden_items = hidden_type(tool);
    let hidden_path = hidden_path(tool);
    // A `#[cfg]` on the function applies to everything generated for it.
    let cfgs = cfgs(item);

    let visible: Vec<_> = tool
        .params
        .iter()
        .filter_map(|param| match &param.kind {
            ParamKind::Visible {
                wire_name,
                renamed,
                description,
            } => Some((param, wire_name, *renamed, description)),
            _ => None,
        })
        .collect();
    let present_path = format!("{krate_text}::__private_v1::present");
    let fields = visible.iter().map(|(param, wire_name, renamed, _)| {
        let field = &param.ident;
        let ty = &param.ty;
        let rename = renamed.then(|| quote!(#[serde(rename = #wire_name)]));
        // serde reads `null` as the outer `None`, the same as absent: a
        // present field is read as `Some`, so that `null` says "clear".
        let present = is_double_option(ty)
            .then(|| quote!(#[serde(default, deserialize_with = #present_path)]));
        quote!(#rename #present #field: #ty)
    });
    let field_schemas = visible.iter().map(|(param, wire_name, _, description)| {
        let ty = &param.ty;
        let doc = description.as_deref().unwrap_or_default();
        quote!(__tk::FieldSchema::of::<#ty>(#wire_name, #doc))
    });
    let field_idents: Vec<_> = visible.iter().map(|(param, ..)| &param.ident).collect();
    let wire_names: Vec<_> = visible
        .iter()
        .map(|(_, wire_name, ..)| *wire_name)
        .collect();

    let hidden = tool.params.iter().filter_map(|param| {
        let ident = &param.ident;
        let ty = &param.ty;
        match &param.kind {
            ParamKind::State => {
                let type_name = type_name(ty);
                Some(quote_spanned! {param.span()=>
                    let #ident: #ty = __tk::state::<#ty>(__site, #type_name)?;
                })
            }
            // Through a trait only `CallContext` implements, so that one of
            // another type is reported on its type, with the fix.
            ParamKind::Context => Some(quote_spanned! {param.span()=>
                let #ident: #ty = __tk::context::<#ty>(__site);
            }),
            ParamKind::Visible { .. } => None,
        }
    });
    let states = tool
        .params
        .iter()
        .filter(|param| matches!(param.kind, ParamKind::State))
        .map(|param| {
            let ty = &param.ty;
            let type_name = type_name(ty);
            quote!(#krate::StateNeed::__new(::core::any::TypeId::of::<#ty>, #type_name))
        });
    // A parameter type that cannot be read from JSON or has no schema is
    // reported on the type, with the fix, before the derives' own errors.
    let param_checks = visible.iter().map(|(param, ..)| {
        let ty = &param.ty;
        quote_spanned! {param.span()=>
            const _: () = __tk::assert_param::<#ty>();
        }
    });
    let call_args = tool.params.iter().map(|param| &param.ident);

    let return_span = match &item.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => item.sig.ident.span(),
    };
    // The three conversions of the hidden module, tried in order, then a
    // last resort that always applies and whose bound fails with the
    // message below: a return type that converts neither way is reported on
    // itself, not as a method that "exists but its trait bounds were not
    // satisfied". Declared here, not in the hidden module, so that rustc's
    // notes point at the signature rather than into the library. (Named
    // with `__`: a user type in the signature could be `ToolReturn`.)
    let last_resort = quote_spanned! {return_span=>
        #[diagnostic::on_unimplemented(
            message = "`{Self}` cannot be returned by a tool",
            label = "neither `IntoToolResult` nor `Serialize`",
            note = "a tool returns text, `()`, a `ToolResult` or another `toolkit_core::IntoToolResult` type, any `serde::Serialize` value (sent as JSON), or `Result<T, E>` of either with `E` an error or any `Display` type",
            note = "derive `serde::Serialize` for it, or implement `toolkit_core::IntoToolResult` for it"
        )]
        trait __ToolReturn {}
        impl __ToolReturn for #krate::ToolResult {}
        trait __ViaNothing<T>: ::core::marker::Sized {
            fn __into_tool_result(self) -> #krate::ToolResult
            where
                T: __ToolReturn,
            {
                ::core::unreachable!()
            }
        }
        impl<T> __ViaNothing<T> for __tk::Wrap<T> {}
    };
    let via = |value: TokenStream| {
        quote_spanned! {return_span=>
            {
                #[allow(unused_imports)]
                use __tk::{ViaIntoToolResult as _, ViaSerialize as _, ViaSerializeResult as _};
                (&&&__tk::Wrap::new(#value)).__into_tool_result()
            }
        }
    };
    // A `Result<T, E>` written out is taken apart here, so that each side
    // is checked on its own type: a `T` that converts neither way is
    // reported on `T`, an `E` without `Display` on `E`, rather than both as
    // "`Result<T, E>` cannot be returned".
    let convert = match result_parts(&item.sig.output) {
        Some((_, error)) => {
            let ok = via(quote!(__ok));
            let error_span = error.span();
            let err = quote_spanned! {error_span=>
                {
                    #[allow(unused_imports)]
                    use __tk::{ViaBoxedError as _, ViaDisplay as _};
                    (&&__tk::ErrorOf::<#error>::new(__error)).__error_result()
                }
            };
            quote! {
                match __value {
                    ::core::result::Result::Ok(__ok) => #ok,
                    ::core::result::Result::Err(__error) => #err,
                }
            }
        }
        None => via(quote!(__value)),
    };
    let start = if item.sig.asyncness.is_some() && never_awaits(&item.block) {
        // Its future ends at its first poll: run here, not boxed to be
        // polled later (docs/performance.md, "Allocations per call").
        quote! {
            __tk::Started::Ready(
                __tk::run_ready(#name, #ident(#(#call_args),*)).map(|__value| #convert)
            )
        }
    } else if item.sig.asyncness.is_some() {
        quote! {
            __tk::Started::Future(::std::boxed::Box::pin(async move {
                let __value = #ident(#(#call_args),*).await;
                ::core::result::Result::Ok(#convert)
            }))
        }
    } else {
        quote! {
            __tk::Started::Future(::std::boxed::Box::pin(__tk::run_blocking(#name, move || {
                let __value = #ident(#(#call_args),*);
                #convert
            })))
        }
    };
    let submit = tool.in_catalogue.then(|| {
        quote! {
            __tk::inventory::submit! {
                __tk::CatalogueEntry(&__DEFINITION)
            }
        }
    });
    let args_struct = format_ident!("__{}ToolArguments", name_for_ident(name));
    let args_name = args_struct.to_string();
    let title = match &tool.title {
        Some(title) => quote!(::core::option::Option::Some(#title)),
        None => quote!(::core::option::Option::None),
    };
    let hint = |value: &Option<syn::LitBool>, setter: &str| {
        let setter = format_ident!("{}", setter);
        value.as_ref().map(|value| quote!(.#setter(#value)))
    };
    let hints = &tool.hints;
    let setters = [
        hint(&hints.read_only, "read_only"),
        hint(&hints.destructive, "destructive"),
        hint(&hints.idempotent, "idempotent"),
        hint(&hints.open_world, "open_world"),
    ];
    let annotations = quote!(__tk::Annotations::new() #(#setters)*);
    let needs_approval = tool.needs_approval;
    let output_schema = output_schema(&item.sig.output);

    quote! {
        #item

        #hidden_items

        #(#cfgs)*
        const _: () = {
            use #krate::__private_v1 as __tk;

            #(#param_checks)*
            #last_resort

            #[derive(__tk::serde::Deserialize)]
            #[serde(crate = #serde_path, deny_unknown_fields)]
            #[allow(non_camel_case_types)]
            struct #args_struct {
                #(#fields,)*
            }

            // A table, not `#[derive(JsonSchema)]`: see `FieldSchema`.
            impl __tk::schemars::JsonSchema for #args_struct {
                fn schema_name() -> ::std::borrow::Cow<'static, str> {
                    ::std::borrow::Cow::Borrowed(#args_name)
                }

                fn json_schema(
                    generator: &mut __tk::schemars::SchemaGenerator,
                ) -> __tk::schemars::Schema {
                    __tk::object_schema(generator, &[#(#field_schemas),*])
                }
            }

            // Built once, through non-generic helpers: a closure per tool
            // would instantiate `OnceLock`'s code once per tool.
            fn __schema() -> &'static #krate::ToolSchema {
                static SCHEMA: ::std::sync::OnceLock<#krate::ToolSchema> =
                    ::std::sync::OnceLock::new();
                fn __make() -> #krate::ToolSchema {
                    __tk::schema_of::<#args_struct>(&[#(#wire_names),*])
                }
                __tk::once(&SCHEMA, __make)
            }

            fn __invoke(
                __arguments: #krate::Arguments<'_>,
                __site: &__tk::CallSite<'_>,
            ) -> ::core::result::Result<__tk::Started, #krate::CallError> {
                let #args_struct { #(#field_idents),* } =
                    __tk::parse_arguments::<#args_struct>(__arguments, #name, __schema)?;
                #(#hidden)*
                ::core::result::Result::Ok(#start)
            }

            fn __output_schema() -> ::core::option::Option<&'static #krate::OutputSchema> {
                static SCHEMA: ::std::sync::OnceLock<::core::option::Option<#krate::OutputSchema>> =
                    ::std::sync::OnceLock::new();
                fn __make() -> ::core::option::Option<#krate::OutputSchema> {
                    #[allow(unused_imports)]
                    use __tk::{OutputOfAny, OutputOfJson, OutputOfResult, OutputOfSerialize, OutputOfSerializeResult};
                    #output_schema
                }
                __tk::once(&SCHEMA, __make).as_ref()
            }

            static __STATIC: __tk::StaticDef = __tk::StaticDef {
                name: #name,
                title: #title,
                description: #description,
                annotations: #annotations,
                needs_approval: #needs_approval,
                module_path: ::core::module_path!(),
                function: #function,
                params: &[#(#wire_names),*],
                states: &[#(#states),*],
                schema: __schema,
                output_schema: __output_schema,
                invoke: __invoke,
            };
            static __DEFINITION: #krate::ToolDef = #krate::ToolDef::__static(&__STATIC);

            impl #krate::Tool for #hidden_path {
                fn definition() -> &'static #krate::ToolDef {
                    &__DEFINITION
                }
            }

            #submit
        };
    }
}

/// The type `tools![name]` and `<name as Tool>` name, beside the
/// function.
///
/// It is declared in a module of its own and brought beside the function
/// by a glob import, which an item of the same name (a user's `mod search`
/// next to `fn search`) shadows instead of clashing with: the tool is then
/// named through the module, `__toolkit_tool_search::search`.
pub(crate) fn hidden_type(tool: &ToolFn) -> TokenStream {
    let item = &tool.item;
    let vis = &item.vis;
    let ident = &item.sig.ident;
    let module = hidden_module(ident);
    let cfgs = cfgs(item);
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case)]
        #vis mod #module {
            // Hidden too, so that rustdoc links to the function by its name
            // stay unambiguous.
            #[doc(hidden)]
            #[allow(non_camel_case_types, dead_code)]
            pub struct #ident {}
        }
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #module::*;
    }
}

/// The hidden type's path from the function's module.
pub(crate) fn hidden_path(tool: &ToolFn) -> TokenStream {
    let ident = &tool.item.sig.ident;
    let module = hidden_module(ident);
    quote!(#module::#ident)
}

fn hidden_module(ident: &syn::Ident) -> syn::Ident {
    format_ident!(
        "__toolkit_tool_{}",
        ident.to_string().trim_start_matches("r#")
    )
}

/// The function's `#[cfg]`s, which apply to everything generated for it.
pub(crate) fn cfgs(item: &syn::ItemFn) -> Vec<&syn::Attribute> {
    item.attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .collect()
}

/// What stands in for a tool whose signature has mistakes: the hidden type
/// and its `Tool` impl, so that `tools![name]` adds no error of its own to
/// the ones reported on the function.
pub(crate) fn stub(tool: &ToolFn) -> TokenStream {
    let krate = &tool.krate;
    let hidden = hidden_type(tool);
    let hidden_path = hidden_path(tool);
    let cfgs = cfgs(&tool.item);
    quote! {
        #hidden
        #(#cfgs)*
        const _: () = {
            impl #krate::Tool for #hidden_path {
                fn definition() -> &'static #krate::ToolDef {
                    ::core::unreachable!("a tool with compile errors is never built")
                }
            }
        };
    }
}

/// The expression that picks the tool's output schema from its return
/// type; none for a type that cannot be named (`impl Trait`) or `()`.
fn output_schema(output: &ReturnType) -> TokenStream {
    let none = quote!(::core::option::Option::None);
    let ReturnType::Type(_, ty) = output else {
        return none;
    };
    if names_impl_trait(ty) {
        return none;
    }
    quote!((&&&&&__tk::OutputOf::<#ty>::NEW).__output())
}

/// Whether an async function's body can never wait: no `.await`, and no
/// macro call but std's own, which cannot hide one (any other macro may).
/// Such a body's future ends at its first poll.
fn never_awaits(body: &syn::Block) -> bool {
    const STD_MACROS: &[&str] = &[
        "assert",
        "assert_eq",
        "assert_ne",
        "concat",
        "debug_assert",
        "debug_assert_eq",
        "debug_assert_ne",
        "eprint",
        "eprintln",
        "format",
        "format_args",
        "matches",
        "panic",
        "print",
        "println",
        "stringify",
        "todo",
        "unimplemented",
        "unreachable",
        "vec",
        "write",
        "writeln",
    ];
    fn scan(tokens: TokenStream) -> bool {
        let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        trees.iter().enumerate().all(|(i, tree)| match tree {
            proc_macro2::TokenTree::Ident(ident) => ident != "await",
            proc_macro2::TokenTree::Group(group) => scan(group.stream()),
            // `name!(…)`: a macro call (a `!` after a keyword, `if !(…)`,
            // is taken for one too, which only costs the shortcut).
            proc_macro2::TokenTree::Punct(punct) if punct.as_char() == '!' => {
                match (i.checked_sub(1).map(|at| &trees[at]), trees.get(i + 1)) {
                    (
                        Some(proc_macro2::TokenTree::Ident(name)),
                        Some(proc_macro2::TokenTree::Group(_)),
                    ) => STD_MACROS.iter().any(|known| name == known),
                    _ => true,
                }
            }
            proc_macro2::TokenTree::Punct(_) | proc_macro2::TokenTree::Literal(_) => true,
        })
    }
    scan(quote!(#body))
}

/// The `T` and `E` of a return type written `Result<T, E>`.
fn result_parts(output: &ReturnType) -> Option<(&Type, &Type)> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = &**ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Result" || path.qself.is_some() {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|arg| match arg {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(error), None) if args.args.len() == 2 => Some((ok, error)),
        _ => None,
    }
}

/// Whether `ty` is written `Option<Option<T>>` (by any path to `Option`),
/// where absent, `null` and a value are three different arguments.
fn is_double_option(ty: &Type) -> bool {
    fn option_inner(ty: &Type) -> Option<&Type> {
        let Type::Path(path) = ty else {
            return None;
        };
        let last = path.path.segments.last()?;
        if path.qself.is_some() || last.ident != "Option" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        match args.args.first() {
            Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
            _ => None,
        }
    }
    option_inner(ty).and_then(option_inner).is_some()
}

/// Whether `ty` holds an `impl Trait`, which a turbofish cannot name.
fn names_impl_trait(ty: &Type) -> bool {
    fn holds_impl(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == "impl",
            proc_macro2::TokenTree::Group(group) => holds_impl(group.stream()),
            _ => false,
        })
    }
    holds_impl(quote!(#ty))
}

/// A type as written, as a literal for generated code.
fn type_name(ty: &Type) -> syn::LitStr {
    lit(&crate::owned::compact(ty), ty.span())
}

/// A tool name as part of an identifier (`-` is allowed in tool names).
fn name_for_ident(name: &str) -> String {
    name.replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::never_awaits;

    fn never(body: &str) -> bool {
        never_awaits(&syn::parse_str(body).expect("a block"))
    }

    #[test]
    fn a_body_never_waits_only_without_await_and_other_macros() {
        assert!(never("{ format!(\"{} hits\", n) }"));
        assert!(never("{ if a != b { std::vec![1] } else { Vec::new() } }"));
        assert!(never("{ let f = |x: u8| x + 1; f(2) }"));
        assert!(!never("{ other().await }"));
        assert!(!never("{ let x = async { other().await }; 1 }"));
        // A macro other than std's may hide an `.await`.
        assert!(!never("{ tokio::join!(a, b); 1 }"));
        assert!(!never("{ tracing::info!(\"x\"); 1 }"));
        // A keyword before `!(…)` is taken for a macro: no shortcut.
        assert!(!never("{ if !(a) { 1 } else { 2 } }"));
    }
}
