//! Parameters are read from JSON, so they must own their data: finding a
//! borrow anywhere in a parameter's type, and the owned type to suggest.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::visit::Visit;
use syn::{GenericArgument, PathArguments, Type};

/// The first borrow in `ty` (a reference or a lifetime other than
/// `'static`), at any depth: `Vec<&str>` borrows as surely as `&str`.
/// Returned as tokens, so that an error spans the whole borrow.
pub(crate) fn first_borrow(ty: &Type) -> Option<TokenStream> {
    struct Finder(Option<TokenStream>);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            if self.0.is_none() {
                self.0 = Some(reference.to_token_stream());
            }
        }
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            if self.0.is_none() && lifetime.ident != "static" {
                self.0 = Some(lifetime.to_token_stream());
            }
        }
    }
    let mut finder = Finder(None);
    finder.visit_type(ty);
    finder.0
}

/// `ty` with every borrow replaced by what owns the same data: `&str` and
/// `Cow<'_, str>` by `String`, `&[T]` by `Vec<T>`, `&T` and `Cow<'_, T>`
/// by `T`. `None` when a borrow remains that has no owned counterpart we
/// know of (a user type with a lifetime parameter).
pub(crate) fn owned(ty: &Type) -> Option<Type> {
    let owned = own(ty);
    first_borrow(&owned).is_none().then_some(owned)
}

fn own(ty: &Type) -> Type {
    match ty {
        Type::Reference(reference) => own_target(&reference.elem),
        Type::Paren(paren) => own(&paren.elem),
        Type::Group(group) => own(&group.elem),
        Type::Array(array) => {
            let mut array = array.clone();
            *array.elem = own(&array.elem);
            Type::Array(array)
        }
        Type::Slice(slice) => {
            let elem = own(&slice.elem);
            syn::parse_quote!(Vec<#elem>)
        }
        Type::Tuple(tuple) => {
            let mut tuple = tuple.clone();
            for elem in tuple.elems.iter_mut() {
                *elem = own(elem);
            }
            Type::Tuple(tuple)
        }
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last();
            if let Some(segment) = last.filter(|segment| segment.ident == "Cow")
                && let PathArguments::AngleBracketed(args) = &segment.arguments
                && let Some(GenericArgument::Type(target)) = args
                    .args
                    .iter()
                    .find(|arg| matches!(arg, GenericArgument::Type(_)))
            {
                return own_target(target);
            }
            let mut path = path.clone();
            for segment in path.path.segments.iter_mut() {
                if let PathArguments::AngleBracketed(args) = &mut segment.arguments {
                    args.args = std::mem::take(&mut args.args)
                        .into_iter()
                        .filter(|arg| !matches!(arg, GenericArgument::Lifetime(_)))
                        .map(|arg| match arg {
                            GenericArgument::Type(inner) => GenericArgument::Type(own(&inner)),
                            other => other,
                        })
                        .collect();
                    if args.args.is_empty() {
                        segment.arguments = PathArguments::None;
                    }
                }
            }
            Type::Path(path)
        }
        other => other.clone(),
    }
}

/// What owns the data a borrow of `target` points at.
fn own_target(target: &Type) -> Type {
    match target {
        Type::Path(path) if path.path.is_ident("str") => syn::parse_quote!(String),
        Type::Slice(slice) => {
            let elem = own(&slice.elem);
            syn::parse_quote!(Vec<#elem>)
        }
        other => own(other),
    }
}

/// A type as written, without the spaces token printing puts in
/// (`HashMap<String, &str>`, not `HashMap < String , & str >`).
pub(crate) fn compact(ty: &impl ToTokens) -> String {
    let text = ty.to_token_stream().to_string();
    let mut compact = String::with_capacity(text.len());
    for piece in text.split(' ') {
        let joins = compact.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            && piece.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        if joins {
            compact.push(' ');
        }
        compact.push_str(piece);
        // The compiler prints `str,` where proc-macro2's fallback prints
        // `str ,`: either way, one space after a comma.
        if piece.ends_with(',') {
            compact.push(' ');
        }
    }
    compact
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggest(ty: &str) -> Option<String> {
        owned(&syn::parse_str(ty).unwrap()).map(|ty| compact(&ty))
    }

    #[test]
    fn borrows_become_what_owns_the_data() {
        assert_eq!(suggest("&str").as_deref(), Some("String"));
        assert_eq!(suggest("&'a [u8]").as_deref(), Some("Vec<u8>"));
        assert_eq!(suggest("Vec<&str>").as_deref(), Some("Vec<String>"));
        assert_eq!(
            suggest("HashMap<String, &[&str]>").as_deref(),
            Some("HashMap<String, Vec<String>>")
        );
        assert_eq!(
            suggest("Option<(&str, u32)>").as_deref(),
            Some("Option<(String, u32)>")
        );
        assert_eq!(suggest("Cow<'_, str>").as_deref(), Some("String"));
        assert_eq!(
            suggest("std::borrow::Cow<'a, [u8]>").as_deref(),
            Some("Vec<u8>")
        );
        // A user type's lifetime parameters are left out; a borrow inside a
        // trait object has no owned form we could name.
        assert_eq!(
            suggest("Wrapper<'a, &'a str>").as_deref(),
            Some("Wrapper<String>")
        );
        assert_eq!(suggest("&dyn Fn(&str)"), None);
    }

    #[test]
    fn borrows_are_found_at_any_depth() {
        let found = |ty: &str| first_borrow(&syn::parse_str(ty).unwrap()).map(|t| t.to_string());
        assert_eq!(found("Vec<Option<&str>>").as_deref(), Some("& str"));
        assert_eq!(found("Cow<'a, str>").as_deref(), Some("'a"));
        assert_eq!(found("&'static str").as_deref(), Some("& 'static str"));
        assert_eq!(found("Box<str>"), None);
        assert_eq!(found("Cow<'static, str>"), None);
    }
}
