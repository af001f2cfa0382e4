//! Where a synthesized schema is written. The shape of a root schema (and of the OpenAI entry
//! around it) is defined once, against this trait; the core writes it as a `serde_json::Value`
//! and the binding straight into Python objects, so a first rendering of a thousand tools does
//! not build and drop a thousand intermediate values.

use serde_json::{Map, Value};

pub trait JsonSink {
    type Out;
    type Error;
    fn string(&mut self, text: &str) -> Result<Self::Out, Self::Error>;
    fn boolean(&mut self, value: bool) -> Result<Self::Out, Self::Error>;
    /// A value given whole (a parameter's default or its own schema).
    fn value(&mut self, value: &Value) -> Result<Self::Out, Self::Error>;
    fn array(&mut self, items: Vec<Self::Out>) -> Result<Self::Out, Self::Error>;
    fn object(&mut self, entries: Vec<(&str, Self::Out)>) -> Result<Self::Out, Self::Error>;
}

/// Writes `serde_json::Value`s.
pub struct ValueSink;

impl JsonSink for ValueSink {
    type Out = Value;
    type Error = std::convert::Infallible;

    fn string(&mut self, text: &str) -> Result<Value, Self::Error> {
        Ok(Value::String(text.to_string()))
    }

    fn boolean(&mut self, value: bool) -> Result<Value, Self::Error> {
        Ok(Value::Bool(value))
    }

    fn value(&mut self, value: &Value) -> Result<Value, Self::Error> {
        Ok(value.clone())
    }

    fn array(&mut self, items: Vec<Value>) -> Result<Value, Self::Error> {
        Ok(Value::Array(items))
    }

    fn object(&mut self, entries: Vec<(&str, Value)>) -> Result<Value, Self::Error> {
        let mut map = Map::with_capacity(entries.len());
        for (key, value) in entries {
            map.insert(key.to_string(), value);
        }
        Ok(Value::Object(map))
    }
}

/// Runs a writer against [`ValueSink`], which cannot fail.
pub fn to_value<F>(write: F) -> Value
where
    F: FnOnce(&mut ValueSink) -> Result<Value, std::convert::Infallible>,
{
    match write(&mut ValueSink) {
        Ok(value) => value,
        Err(never) => match never {},
    }
}
