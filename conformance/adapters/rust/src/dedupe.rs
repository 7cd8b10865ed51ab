//! Deduplication of replay items (SPEC §6, D1–D6).

use std::collections::HashSet;

use crate::json::{Value, WStr};
use crate::providers::ProviderNames;

/// D2/D3: what happens to one replay item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Keep,
    /// D2: an exact duplicate of an earlier item, dropped.
    DropDuplicate,
    /// D3: same provider and id as an earlier kept item, another ciphertext; kept.
    KeepConflict,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::Keep => "keep",
            Decision::DropDuplicate => "drop_duplicate",
            Decision::KeepConflict => "keep_conflict",
        }
    }
}

/// D3: the builder's conflict policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictPolicy {
    Keep,
    Reject,
}

/// D1: the id part of the identity. Replay items have string ids; any other value (possible
/// only in hand-made `dedupe` input) is keyed by its compact text, never confused with a string.
fn id_key(item: &Value) -> Vec<u8> {
    match item.get("id") {
        Some(Value::String(s)) => {
            let mut k = vec![b's'];
            k.extend_from_slice(s.as_bytes());
            k
        }
        Some(v) => {
            let mut k = vec![b'v'];
            k.extend_from_slice(&v.to_compact());
            k
        }
        None => vec![b'n'],
    }
}

/// D1: SHA-256 of the UTF-8 bytes of `encrypted_content`, lowercase hex (U1: lone surrogates as
/// U+FFFD). A non-string ciphertext (hand-made input only) hashes its compact text, tagged.
pub fn ciphertext_hash(item: &Value) -> String {
    match item.get("encrypted_content") {
        Some(Value::String(s)) => s.sha256_hex(),
        Some(v) => format!("json:{}", crate::sha256::hex_digest(&v.to_compact())),
        None => "absent".to_string(),
    }
}

/// Deduplication state over one request (D6: it depends only on the items in order).
#[derive(Default)]
pub struct Deduper {
    identities: HashSet<(WStr, Vec<u8>, String)>,
    kept_ids: HashSet<(WStr, Vec<u8>)>,
    /// T1 `replay_deduplicated_exact_count`.
    pub exact_count: u64,
    /// T1 `replay_id_ciphertext_conflict_count`.
    pub conflict_count: u64,
}

impl Deduper {
    pub fn new() -> Deduper {
        Deduper::default()
    }

    /// D1–D5: decides one item whose issuer is `provider`, in input order.
    pub fn decide(&mut self, provider: &WStr, item: &Value) -> Decision {
        let id = id_key(item);
        let identity = (provider.clone(), id.clone(), ciphertext_hash(item));
        // D2: the first of an identity is kept, every later one dropped.
        if self.identities.contains(&identity) {
            self.exact_count += 1;
            return Decision::DropDuplicate;
        }
        self.identities.insert(identity);
        // D3: same provider and id as an earlier kept item, another hash: kept and counted.
        // D4/D5 follow from the identity: other ids or other providers are distinct.
        if !self.kept_ids.insert((provider.clone(), id)) {
            self.conflict_count += 1;
            return Decision::KeepConflict;
        }
        Decision::Keep
    }
}

/// The `dedupe` operation: one decision per `(provider, item)` entry, in order, or the D3
/// rejection under `conflict_policy: "reject"`. D1: the identity's provider is the entry's
/// issuer, its provider name mapped by the registry of §18.2 (P4).
pub fn dedupe_entries(
    entries: &[(WStr, Value)],
    policy: ConflictPolicy,
) -> Result<(Vec<Decision>, u64, u64), &'static str> {
    let names = ProviderNames::registry_only();
    let mut d = Deduper::new();
    let mut out = Vec::with_capacity(entries.len());
    for (provider, item) in entries {
        let dec = d.decide(&names.issuer_of(provider), item);
        if dec == Decision::KeepConflict && policy == ConflictPolicy::Reject {
            return Err("dedupe_id_ciphertext_conflict");
        }
        out.push(dec);
    }
    Ok((out, d.exact_count, d.conflict_count))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, c: &str) -> Value {
        Value::obj(vec![
            ("type", Value::str("reasoning")),
            ("id", Value::str(id)),
            ("summary", Value::Array(vec![])),
            ("encrypted_content", Value::str(c)),
        ])
    }

    fn run(entries: &[(&str, Value)]) -> Vec<&'static str> {
        let e: Vec<(WStr, Value)> = entries.iter().map(|(p, v)| (WStr::from(*p), v.clone())).collect();
        dedupe_entries(&e, ConflictPolicy::Keep).unwrap().0.into_iter().map(Decision::name).collect()
    }

    #[test]
    fn d2_exact_duplicates_drop_later_ones() {
        let r = run(&[("openai", item("a", "x")), ("openai", item("a", "x")), ("openai", item("a", "x"))]);
        assert_eq!(r, ["keep", "drop_duplicate", "drop_duplicate"]);
    }

    #[test]
    fn d3_same_id_new_ciphertext_is_kept() {
        let r = run(&[("openai", item("a", "x")), ("openai", item("a", "y")), ("openai", item("a", "y"))]);
        assert_eq!(r, ["keep", "keep_conflict", "drop_duplicate"]);
        let e = vec![(WStr::from("openai"), item("a", "x")), (WStr::from("openai"), item("a", "y"))];
        assert_eq!(dedupe_entries(&e, ConflictPolicy::Reject), Err("dedupe_id_ciphertext_conflict"));
    }

    #[test]
    fn d4_d5_distinct_ids_and_providers() {
        assert_eq!(run(&[("openai", item("a", "x")), ("openai", item("b", "x"))]), ["keep", "keep"]);
        assert_eq!(run(&[("openai", item("a", "x")), ("xai", item("a", "x"))]), ["keep", "keep"]);
        assert_eq!(run(&[("openai", item("a", "x")), ("codex", item("a", "y"))]), ["keep", "keep"]);
    }

    #[test]
    fn d1_route_names_are_their_issuers() {
        let r = run(&[("responses", item("a", "x")), ("openai", item("a", "x")), ("codexresponses", item("a", "x"))]);
        assert_eq!(r, ["keep", "drop_duplicate", "keep"]);
    }

    #[test]
    fn u1_lone_surrogate_and_fffd_share_an_identity() {
        let mut s = WStr::from("x");
        s.push_cp(0xD800);
        let mut a = item("a", "");
        if let Value::Object(m) = &mut a {
            m[3].1 = Value::String(s);
        }
        assert_eq!(run(&[("openai", a), ("openai", item("a", "x\u{FFFD}"))]), ["keep", "drop_duplicate"]);
    }
}
