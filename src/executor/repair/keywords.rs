//! The keywords of one schema node that coercion reads, found in one pass over the node. A node
//! has a handful of keys, so walking them once costs less than hashing each keyword to look it
//! up (which was the largest part of a coercion).

use serde_json::{Map, Value};

/// A node's `type`, as a set of the JSON types it names (unknown words name none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Types(u8);

impl Types {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 1 << 1;
    pub const INTEGER: u8 = 1 << 2;
    pub const NUMBER: u8 = 1 << 3;
    pub const STRING: u8 = 1 << 4;
    pub const ARRAY: u8 = 1 << 5;
    pub const OBJECT: u8 = 1 << 6;

    /// `type` as a word or a list of words; None for any other value.
    fn read(value: &Value) -> Option<Types> {
        match value {
            Value::String(word) => Some(Types(bit(word))),
            Value::Array(words) => Some(Types(
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .map(bit)
                    .fold(0, |a, b| a | b),
            )),
            _ => None,
        }
    }

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

fn bit(word: &str) -> u8 {
    match word {
        "null" => Types::NULL,
        "boolean" => Types::BOOLEAN,
        "integer" => Types::INTEGER,
        "number" => Types::NUMBER,
        "string" => Types::STRING,
        "array" => Types::ARRAY,
        "object" => Types::OBJECT,
        _ => 0,
    }
}

/// What coercion reads of one (resolved) schema node; each is None when the node has no such
/// keyword or its value has the wrong JSON type.
#[derive(Debug, Default)]
pub struct Keywords<'a> {
    pub types: Option<Types>,
    pub any_of: Option<&'a [Value]>,
    pub one_of: Option<&'a [Value]>,
    pub all_of: Option<&'a [Value]>,
    pub enum_values: Option<&'a [Value]>,
    pub properties: Option<&'a Map<String, Value>>,
    pub required: Option<&'a [Value]>,
    /// `items` when it is a schema object (a list of schemas is not walked).
    pub items: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    pub fn read(node: &'a Map<String, Value>) -> Self {
        let mut k = Keywords::default();
        let list = |v: &'a Value| v.as_array().map(Vec::as_slice);
        for (key, value) in node {
            match key.as_str() {
                "type" => k.types = Types::read(value),
                "anyOf" => k.any_of = list(value),
                "oneOf" => k.one_of = list(value),
                "allOf" => k.all_of = list(value),
                "enum" => k.enum_values = list(value),
                "properties" => k.properties = value.as_object(),
                "required" => k.required = list(value),
                "items" => k.items = Some(value).filter(|v| v.is_object()),
                _ => {}
            }
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_pass_reads_what_lookups_would() {
        let node = json!({
            "type": ["integer", "null", "bogus"], "enum": [1, 2], "required": ["a"],
            "properties": {"a": {}}, "items": [{}], "anyOf": [{}], "oneOf": "x", "allOf": [{}, {}]
        });
        let k = Keywords::read(node.as_object().unwrap());
        let types = k.types.unwrap();
        assert!(types.has(Types::INTEGER) && types.has(Types::NULL));
        assert!(!types.has(Types::NUMBER) && !types.has(Types::STRING));
        assert_eq!(k.enum_values.map(<[Value]>::len), Some(2));
        assert_eq!(k.required.map(<[Value]>::len), Some(1));
        assert!(k.properties.is_some_and(|p| p.contains_key("a")));
        assert!(k.items.is_none(), "a list of item schemas is not walked");
        assert_eq!((k.any_of.map(<[Value]>::len), k.one_of), (Some(1), None));
        assert_eq!(k.all_of.map(<[Value]>::len), Some(2));
        let bare_node = json!({"type": 7});
        let bare = Keywords::read(bare_node.as_object().unwrap());
        assert!(bare.types.is_none() && bare.properties.is_none());
    }
}
