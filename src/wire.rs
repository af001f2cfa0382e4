//! Wire names: the provider-safe name each tool is rendered under when its real name breaks a
//! provider's function-name rule, and the way back from a model's call to the real name.
//!
//! A name that is already wire-safe ([`is_wire_safe`]) is its own wire name. Another name gets
//! [`wire_base`] (`math.factorial` -> `math_factorial`). When that base equals a real name in
//! the registry or the base of another unsafe name, every unsafe name with that base gets a
//! suffix `_` + the first 4 hex digits of the sha256 of its real name (more digits if still
//! taken), so the result does not depend on registration order. The map is computed once per
//! registry version.

use crate::sha256::sha256_hex;
use crate::tool::{is_wire_safe, wire_base};
use std::collections::{HashMap, HashSet};

/// The wire names of one registry version. Only unsafe names have an entry.
#[derive(Debug, Default, Clone)]
pub struct WireNames {
    to_wire: HashMap<String, String>,
    to_real: HashMap<String, String>,
}

impl WireNames {
    /// The map for the real names of a registry.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> WireNames {
        let names: Vec<&str> = names.into_iter().collect();
        let unsafe_names: Vec<&str> = names.iter().copied().filter(|n| !is_wire_safe(n)).collect();
        let mut out = WireNames::default();
        if unsafe_names.is_empty() {
            return out;
        }
        let real: HashSet<&str> = names.into_iter().collect();
        let bases: Vec<String> = unsafe_names.iter().map(|n| wire_base(n)).collect();
        let mut count: HashMap<&str, usize> = HashMap::new();
        for b in &bases {
            *count.entry(b.as_str()).or_default() += 1;
        }
        let mut taken: HashSet<String> = HashSet::new();
        let mut suffixed = Vec::new();
        for (name, base) in unsafe_names.iter().zip(&bases) {
            if count[base.as_str()] == 1 && !real.contains(base.as_str()) {
                taken.insert(base.clone());
                out.insert(name, base.clone());
            } else {
                suffixed.push((*name, base));
            }
        }
        for (name, base) in suffixed {
            let digest = sha256_hex(&[name.as_bytes()]);
            let wire = (4..=digest.len())
                .step_by(4)
                .map(|n| with_suffix(base, &digest[..n]))
                .find(|w| !real.contains(w.as_str()) && !taken.contains(w))
                .expect("a full sha256 suffix is unique");
            taken.insert(wire.clone());
            out.insert(name, wire);
        }
        out
    }

    fn insert(&mut self, real: &str, wire: String) {
        self.to_real.insert(wire.clone(), real.to_string());
        self.to_wire.insert(real.to_string(), wire);
    }

    /// The name to render `real` under.
    pub fn wire<'a>(&'a self, real: &'a str) -> &'a str {
        self.to_wire.get(real).map_or(real, String::as_str)
    }

    /// The real name whose wire name is `wire`, if it is one made here.
    pub fn real(&self, wire: &str) -> Option<&str> {
        self.to_real.get(wire).map(String::as_str)
    }
}

/// `base` cut so that `base_suffix` fits in 64 characters (`base` is ASCII).
fn with_suffix(base: &str, suffix: &str) -> String {
    let keep = base.len().min(64 - 1 - suffix.len());
    format!("{}_{suffix}", &base[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(names: &[&str]) -> WireNames {
        WireNames::new(names.iter().copied())
    }

    #[test]
    fn safe_names_are_unchanged_and_unsafe_ones_readable() {
        let w = map(&["calc", "math.factorial", "svc::get"]);
        assert_eq!(w.wire("calc"), "calc");
        assert_eq!(w.wire("math.factorial"), "math_factorial");
        assert_eq!(w.wire("svc::get"), "svc_get");
        assert_eq!(w.real("math_factorial"), Some("math.factorial"));
        assert_eq!(w.real("calc"), None);
    }

    #[test]
    fn collisions_get_a_stable_suffix_in_any_order() {
        let a = map(&["a.b", "a_b", "a:b"]);
        let b = map(&["a:b", "a.b", "a_b"]);
        assert_eq!(a.wire("a_b"), "a_b");
        let (x, y) = (a.wire("a.b").to_string(), a.wire("a:b").to_string());
        assert!(x.starts_with("a_b_") && x.len() == 8 && y.starts_with("a_b_") && x != y);
        assert_eq!((b.wire("a.b"), b.wire("a:b")), (x.as_str(), y.as_str()));
        let long = "x".repeat(70) + ".y";
        let c = map(&[&long, &"x".repeat(64)]);
        assert_eq!(c.wire(&long).len(), 64);
        assert!(is_wire_safe(c.wire(&long)));
    }
}
