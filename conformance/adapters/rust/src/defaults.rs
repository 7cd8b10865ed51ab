//! The request fields this implementation sends with no configuration at all (the `defaults`
//! operation, which probes SPEC P5), and the instance key every LLM instance draws (K1).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;

use crate::json::{Value, WStr};
use crate::planner::{store_and_include, Endpoint};

/// K1: a new instance key: 32 lowercase hexadecimal digits drawn at random, so that independent
/// instances differ. The bytes come from the system's random source; where it cannot be read,
/// from the standard library's randomly seeded hasher.
pub fn draw_instance_key() -> WStr {
    let mut bytes = [0u8; 16];
    let from_system = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_ok();
    if !from_system {
        for (i, half) in bytes.chunks_mut(8).enumerate() {
            let mut h = RandomState::new().build_hasher();
            h.write_usize(i);
            half.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    WStr::from(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The request this implementation sends for `model` with no user configuration, to any target
/// provider (P5 and K1 hold for every one): the Responses endpoint, a model that returns
/// reasoning (P5's default), its `store` and `include` (P5) and a fresh instance key (K1, K2;
/// F12 sends it to every other target too). No desired effort is configured, so no `reasoning`
/// is sent.
pub fn default_request(model: &WStr) -> Value {
    let mut fields: Vec<(WStr, Value)> = vec![(WStr::from("model"), Value::String(model.clone()))];
    fields.extend(store_and_include(Endpoint::Responses, true).into_iter().map(|(k, v)| (WStr::from(k), v)));
    fields.push((WStr::from("prompt_cache_key"), Value::String(draw_instance_key())));
    Value::Object(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k1_instance_keys_are_32_lowercase_hex_digits_and_differ() {
        let a = draw_instance_key();
        let b = draw_instance_key();
        assert_eq!(a.as_bytes().len(), 32);
        assert!(a.as_bytes().iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        assert_ne!(a, b);
    }

    #[test]
    fn p5_the_default_request_stores_nothing_and_asks_for_the_ciphertext() {
        let r = default_request(&WStr::from("gpt-6-astra"));
        assert_eq!(r.get("store"), Some(&Value::Bool(false)));
        assert_eq!(r.get("include"), Some(&Value::Array(vec![Value::str("reasoning.encrypted_content")])));
        assert!(r.get("reasoning").is_none());
    }
}
