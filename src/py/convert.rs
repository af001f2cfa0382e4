//! Python objects <-> `serde_json::Value`, strict and fast.
//!
//! Only JSON-shaped values cross: dict (str keys), list, tuple, str, int, float, bool, None.
//! Anything else (a set, bytes, an arbitrary object, NaN) is refused with its path, so a model's
//! arguments or a tool's result can never smuggle in something a provider cannot serialize.
//!
//! Why not pythonize (the design names it): measured on the execute path, it breaks the
//! execute-overhead budget (0.6 µs for the whole of `execute_tool` over the raw call).
//! `benches/bench_convert.py`, release build, both converters in one extension (commit
//! f57fc3c plus the timing function), the same run, best of 7 x 200,000 conversions each,
//! on a loaded 2-core VM (absolute figures are high; the ratios held over three runs):
//!
//! | arguments | way | hand-written | pythonize |
//! |---|---|---|---|
//! | dict of five scalars | Python -> Value | 0.85 µs | 2.00 µs (2.4x) |
//! | dict of five scalars | Value -> Python | 0.61 µs | 0.64 µs |
//! | nested dict/list | Python -> Value | 2.15 µs | 4.64 µs (2.2x) |
//! | nested dict/list | Value -> Python | 1.51 µs | 1.39 µs |
//!
//! Every call converts its arguments Python -> Value; with pythonize that step alone costs
//! 2.2x to 3.5x the hand-written one (+1.15 µs for five scalars here), more than the whole
//! budget, and it still would not give the path of a value that is not JSON, refuse NaN or
//! bound the nesting, which this module does in the same pass. The way back is a tie. So the
//! hand-written converter is the only one and pythonize is not a dependency.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Deeper nesting than this is refused rather than risking the native stack.
/// 128 levels keep conversion and validation well inside a 128 KB thread stack; real tool
/// arguments are a few levels deep.
const MAX_DEPTH: usize = 128;

/// Why a Python value is not JSON, and where.
#[derive(Debug)]
pub struct NotJson {
    pub path: String,
    pub reason: String,
}

impl NotJson {
    pub fn describe(&self) -> String {
        if self.path.is_empty() {
            self.reason.clone()
        } else {
            format!("{} at '{}'", self.reason, self.path)
        }
    }
}

pub fn py_to_value(obj: &Bound<'_, PyAny>) -> Result<Value, NotJson> {
    let mut path = Vec::new();
    to_value(obj, &mut path, 0)
}

fn fail(path: &[String], reason: String) -> NotJson {
    NotJson {
        path: path.join("."),
        reason,
    }
}

fn to_value(
    obj: &Bound<'_, PyAny>,
    path: &mut Vec<String>,
    depth: usize,
) -> Result<Value, NotJson> {
    if depth > MAX_DEPTH {
        return Err(fail(
            path,
            format!("nesting deeper than {MAX_DEPTH} levels"),
        ));
    }
    // Exact-type checks first: they are the common case and the cheapest.
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| {
                fail(
                    path,
                    "a string that is not valid UTF-8 (lone surrogate)".into(),
                )
            });
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return int_value(obj, path);
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return float_value(f.value(), path);
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) => s
                    .to_str()
                    .map_err(|_| fail(path, "a key that is not valid UTF-8".into()))?
                    .to_owned(),
                Err(_) => {
                    let ty = qualified_type_name(&k);
                    return Err(fail(
                        path,
                        format!("a dict key of type {ty} (JSON object keys are strings)"),
                    ));
                }
            };
            path.push(key.clone());
            let value = to_value(&v, path, depth + 1)?;
            path.pop();
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        let mut out = Vec::with_capacity(l.len());
        for (i, item) in l.iter().enumerate() {
            path.push(i.to_string());
            out.push(to_value(&item, path, depth + 1)?);
            path.pop();
        }
        return Ok(Value::Array(out));
    }
    // A NamedTuple is not cast here: it has field names, and the result conversion in Python
    // (agentmaker.tools.return_values) renders it as an object.
    if let Ok(t) = obj
        .cast::<PyTuple>()
        .ok()
        .filter(|t| t.is_exact_instance_of::<PyTuple>() || !t.hasattr("_fields").unwrap_or(false))
        .ok_or(())
    {
        let mut out = Vec::with_capacity(t.len());
        for (i, item) in t.iter().enumerate() {
            path.push(i.to_string());
            out.push(to_value(&item, path, depth + 1)?);
            path.pop();
        }
        return Ok(Value::Array(out));
    }
    // Subclasses (an IntEnum, a str subclass) are accepted by value; bool before int.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_value(obj, path);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return float_value(f.value(), path);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| fail(path, "a string that is not valid UTF-8".into()));
    }
    Err(fail(
        path,
        format!("a value of type {} (not JSON)", qualified_type_name(obj)),
    ))
}

fn int_value(obj: &Bound<'_, PyAny>, path: &[String]) -> Result<Value, NotJson> {
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Number(i.into()));
    }
    if let Ok(u) = obj.extract::<u64>() {
        return Ok(Value::Number(u.into()));
    }
    Err(fail(
        path,
        "an integer outside the 64-bit range JSON tools can exchange".into(),
    ))
}

fn float_value(f: f64, path: &[String]) -> Result<Value, NotJson> {
    Number::from_f64(f).map(Value::Number).ok_or_else(|| {
        fail(
            path,
            format!("the float {f} (NaN and infinity are not JSON)"),
        )
    })
}

/// A Python int as an `i64`, one beyond its range saturated to the nearest end (a limit of
/// 10**30 means no practical limit).
pub(crate) fn saturating_i64(int: &Bound<'_, PyAny>) -> PyResult<i64> {
    match int.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) if int.gt(0)? => Ok(i64::MAX),
        Err(_) => Ok(i64::MIN),
    }
}

fn qualified_type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

pub fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => py_str(py, s).into_any(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| value_to_py(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(py_str(py, k), value_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A str, interned when it is one of the words every schema repeats.
fn py_str<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyString> {
    match schema_word(py, text) {
        Some(word) => word.clone(),
        None => PyString::new(py, text),
    }
}

/// Writes synthesized schemas straight into Python objects (see [`crate::schema::JsonSink`]).
pub struct PySink<'py>(pub Python<'py>);

impl<'py> crate::schema::JsonSink for PySink<'py> {
    type Out = Bound<'py, PyAny>;
    type Error = PyErr;

    fn string(&mut self, text: &str) -> PyResult<Self::Out> {
        Ok(py_str(self.0, text).into_any())
    }

    fn boolean(&mut self, value: bool) -> PyResult<Self::Out> {
        Ok(PyBool::new(self.0, value).to_owned().into_any())
    }

    fn value(&mut self, value: &Value) -> PyResult<Self::Out> {
        value_to_py(self.0, value)
    }

    fn array(&mut self, items: Vec<Self::Out>) -> PyResult<Self::Out> {
        Ok(PyList::new(self.0, items)?.into_any())
    }

    fn object(&mut self, entries: Vec<(&str, Self::Out)>) -> PyResult<Self::Out> {
        let dict = PyDict::new(self.0);
        for (key, value) in entries {
            dict.set_item(py_str(self.0, key), value)?;
        }
        Ok(dict.into_any())
    }
}

/// The words every rendered schema repeats (keywords, type names, the provider wrappers' keys)
/// as interned strings: converting them costs no allocation and no hashing, and a thousand
/// rendered tools share one copy of each.
fn schema_word<'py>(py: Python<'py>, word: &str) -> Option<&'py Bound<'py, PyString>> {
    Some(match word {
        "type" => pyo3::intern!(py, "type"),
        "description" => pyo3::intern!(py, "description"),
        "properties" => pyo3::intern!(py, "properties"),
        "required" => pyo3::intern!(py, "required"),
        "items" => pyo3::intern!(py, "items"),
        "default" => pyo3::intern!(py, "default"),
        "enum" => pyo3::intern!(py, "enum"),
        "anyOf" => pyo3::intern!(py, "anyOf"),
        "additionalProperties" => pyo3::intern!(py, "additionalProperties"),
        "$ref" => pyo3::intern!(py, "$ref"),
        "$defs" => pyo3::intern!(py, "$defs"),
        "format" => pyo3::intern!(py, "format"),
        "title" => pyo3::intern!(py, "title"),
        "nullable" => pyo3::intern!(py, "nullable"),
        "object" => pyo3::intern!(py, "object"),
        "string" => pyo3::intern!(py, "string"),
        "integer" => pyo3::intern!(py, "integer"),
        "number" => pyo3::intern!(py, "number"),
        "boolean" => pyo3::intern!(py, "boolean"),
        "array" => pyo3::intern!(py, "array"),
        "null" => pyo3::intern!(py, "null"),
        "function" => pyo3::intern!(py, "function"),
        "name" => pyo3::intern!(py, "name"),
        "parameters" => pyo3::intern!(py, "parameters"),
        "strict" => pyo3::intern!(py, "strict"),
        "input_schema" => pyo3::intern!(py, "input_schema"),
        _ => return None,
    })
}

/// Times this module's conversions for `benches/bench_convert.py`: `rounds` conversions of
/// `value` to a `serde_json::Value`, then `rounds` back, timed in Rust (no Python call in the
/// loop). Returns the mean nanoseconds of one conversion each way.
#[pyfunction]
pub fn _time_conversion(value: &Bound<'_, PyAny>, rounds: u32) -> PyResult<(f64, f64)> {
    use std::hint::black_box;
    use std::time::Instant;
    let py = value.py();
    let rounds = rounds.max(1);
    let json =
        py_to_value(value).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.describe()))?;
    let per = |start: Instant| start.elapsed().as_nanos() as f64 / f64::from(rounds);
    let start = Instant::now();
    for _ in 0..rounds {
        black_box(py_to_value(black_box(value)).ok());
    }
    let to_json = per(start);
    let start = Instant::now();
    for _ in 0..rounds {
        black_box(value_to_py(py, black_box(&json))?);
    }
    Ok((to_json, per(start)))
}

/// The class name as the model sees it in error texts: `__name__`, like the reference's
/// `{ExcType}`; a `__qualname__` would leak `func.<locals>.` paths of the host program.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}
