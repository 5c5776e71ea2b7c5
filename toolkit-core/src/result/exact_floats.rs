//! A tool's output as JSON, floating-point numbers as written.
//!
//! `serde_json::to_value` widens an `f32` to the `f64` of exactly the same
//! value, whose shortest form is that value's binary noise: `3.9_f32`
//! becomes `3.9000000953674316`. Writing the `f32` as text first (`3.9`)
//! and reading that text as an `f64` gives the `f64` nearest to what the
//! programmer wrote, whose shortest form is again `3.9`, and which reads
//! back as the same `f32`. Everything else passes through to serde_json's
//! own serializer untouched.

use std::fmt;

use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};
use serde_json::Value;

use crate::number::widen;

/// `value` as JSON, as `serde_json::to_value` makes it but with every `f32`
/// in the shortest decimal form that reads back as the same `f32`.
pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, serde_json::Error> {
    value.serialize(Floats(serde_json::value::Serializer))
}

/// A serializer that hands every `f32` to `S` as the `f64` [`widen`] makes
/// of it, and wraps whatever `S` serializes next so that nested values get
/// the same treatment.
struct Floats<S>(S);

/// A value serialized through [`Floats`].
struct Nested<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Nested<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Floats(serializer))
    }
}

/// Forwards a method of `Serializer` unchanged.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        $(
            fn $method(self, $($arg: $ty),*) -> Result<$out, S::Error> {
                self.0.$method($($arg),*)
            }
        )*
    };
}

impl<S: Serializer> Serializer for Floats<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Floats<S::SerializeSeq>;
    type SerializeTuple = Floats<S::SerializeTuple>;
    type SerializeTupleStruct = Floats<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Floats<S::SerializeTupleVariant>;
    type SerializeMap = Floats<S::SerializeMap>;
    type SerializeStruct = Floats<S::SerializeStruct>;
    type SerializeStructVariant = Floats<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool) -> S::Ok;
        serialize_i8(v: i8) -> S::Ok;
        serialize_i16(v: i16) -> S::Ok;
        serialize_i32(v: i32) -> S::Ok;
        serialize_i64(v: i64) -> S::Ok;
        serialize_i128(v: i128) -> S::Ok;
        serialize_u8(v: u8) -> S::Ok;
        serialize_u16(v: u16) -> S::Ok;
        serialize_u32(v: u32) -> S::Ok;
        serialize_u64(v: u64) -> S::Ok;
        serialize_u128(v: u128) -> S::Ok;
        serialize_f64(v: f64) -> S::Ok;
        serialize_char(v: char) -> S::Ok;
        serialize_str(v: &str) -> S::Ok;
        serialize_bytes(v: &[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(name: &'static str) -> S::Ok;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> S::Ok;
    }

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        self.0.serialize_f64(widen(v))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Nested(value))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Nested(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Nested(value))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Floats)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Floats)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Floats)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Floats)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Floats)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(Floats)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(Floats)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.collect_str(value)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// Implements one of serde's compound serializers for `Floats`, each
/// element wrapped in [`Nested`].
macro_rules! compound {
    ($trait:ident, $element:ident $(, $key:ident)?) => {
        impl<S: $trait> $trait for Floats<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn $element<T: Serialize + ?Sized>(
                &mut self,
                $($key: &'static str,)?
                value: &T,
            ) -> Result<(), S::Error> {
                self.0.$element($($key,)? &Nested(value))
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        }
    };
}

compound!(SerializeSeq, serialize_element);
compound!(SerializeTuple, serialize_element);
compound!(SerializeTupleStruct, serialize_field);
compound!(SerializeTupleVariant, serialize_field);
compound!(SerializeStruct, serialize_field, key);
compound!(SerializeStructVariant, serialize_field, key);

impl<S: SerializeMap> SerializeMap for Floats<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        self.0.serialize_key(&Nested(key))
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        self.0.serialize_value(&Nested(value))
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_keeps_its_digits() {
        let value = to_value(&(3.9_f32, 0.1_f32, [1.5_f32], Some(-2.2e-7_f32))).unwrap();
        assert_eq!(value.to_string(), "[3.9,0.1,[1.5],-2.2e-7]");
    }

    #[test]
    fn every_f32_reads_back() {
        // A spread of bit patterns over every exponent.
        let mut bits: u32 = 1;
        for _ in 0..50_000 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let value = f32::from_bits(bits);
            if !value.is_finite() {
                continue;
            }
            let text = to_value(&value).unwrap().to_string();
            assert_eq!(text.parse::<f32>().unwrap(), value, "{text}");
            // The same number as the shortest form of the `f32` itself:
            // read as `f64`, no float noise hides behind the `f32`.
            let shortest: f64 = format!("{value:e}").parse().unwrap();
            assert_eq!(text.parse::<f64>().unwrap(), shortest, "{value}");
        }
    }

    #[test]
    fn the_rest_is_serde_json_s() {
        let value =
            serde_json::json!({"a": [1, -2, 3.5, u64::MAX, "x", null, true], "b": {"c": 1e300}});
        assert_eq!(to_value(&value).unwrap(), value);
        assert_eq!(to_value(&f32::NAN).unwrap(), Value::Null);
    }
}
