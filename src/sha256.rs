//! SHA-256 as lowercase hex: the one form every digest of the crate takes (the approval digest
//! of a call, MCP tool fingerprints, the suffixes that keep wire and namespaced names unique).

use sha2::{Digest, Sha256};

/// SHA-256 of `parts` one after the other, as 64 lowercase hex digits.
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    let mut out = String::with_capacity(64);
    for byte in hasher.finalize() {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_in_lowercase_hex_whatever_the_parts() {
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(sha256_hex(&[]), empty);
        assert_eq!(sha256_hex(&[b""]), empty);
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(&[b"abc"]), abc);
        assert_eq!(sha256_hex(&[b"a", b"", b"bc"]), abc);
    }
}
