//! Provider names and issuers (SPEC P4 and the provider-name registry of §18.2).
//!
//! Histories and requests name providers by the names their routes write; whether an item may
//! be sent is decided on issuers. The registry is read from its published data file,
//! `schema/provider-names.v1.json` (§18.2: "The table is published as data"), compiled into the
//! binary, so this implementation cannot hold another copy of it.

use crate::json::{parse_value, ParseOptions, Value, WStr};

/// §18.2 as data: the registry's one source, embedded at build time.
const REGISTRY_JSON: &str = include_str!("../../../../schema/provider-names.v1.json");

/// The issuer of requests when the caller names none (PROTOCOL `plan`: `target_provider`
/// defaults to `"openai"`; `validate`: `provider` defaults to `"openai"`).
pub const DEFAULT_PROVIDER: &str = "openai";

/// P4: the provider-name registry of §18.2 extended by the caller's provider-name mapping.
#[derive(Clone, Debug)]
pub struct ProviderNames {
    /// The caller's mapping (name → issuer), whose entry replaces the registry's (P4).
    caller: Vec<(WStr, WStr)>,
    /// §18.2's rows (name → issuer).
    registry: Vec<(WStr, WStr)>,
}

impl ProviderNames {
    /// P4: the registry alone (no caller mapping), as the `dedupe` operation uses it (D1).
    pub fn registry_only() -> ProviderNames {
        ProviderNames { caller: Vec::new(), registry: registry_rows() }
    }

    /// P4: the registry extended by the caller's mapping (an object, name → issuer, each a
    /// non-empty string). `Err` names what is wrong with a mapping that is not one.
    pub fn with_mapping(mapping: Option<&Value>) -> Result<ProviderNames, String> {
        let mut names = ProviderNames::registry_only();
        let members = match mapping {
            None | Some(Value::Null) => return Ok(names),
            Some(Value::Object(m)) => m,
            Some(_) => return Err("provider_names is not an object".into()),
        };
        for (name, issuer) in members {
            match issuer {
                Value::String(i) if !name.is_empty() && !i.is_empty() => {
                    names.caller.push((name.clone(), i.clone()));
                }
                _ => {
                    return Err(format!("provider_names.{name:?} is not a non-empty name mapped to a non-empty issuer"))
                }
            }
        }
        Ok(names)
    }

    /// P4: the issuer of a provider name: the caller's entry when it lists the name (a repeated
    /// name counts by its last entry), else the registry's, else the name itself. The issuer so
    /// found is not mapped again.
    pub fn issuer_of(&self, name: &WStr) -> WStr {
        let lookup = |table: &[(WStr, WStr)]| table.iter().rev().find(|(n, _)| n == name).map(|(_, i)| i.clone());
        lookup(&self.caller).or_else(|| lookup(&self.registry)).unwrap_or_else(|| name.clone())
    }
}

/// §18.2's rows, in order, from the embedded data file.
fn registry_rows() -> Vec<(WStr, WStr)> {
    // The data file is part of the build; a file that does not hold the registry's shape is a
    // build defect that the unit tests catch, so it yields no row rather than a panic.
    let Ok((data, _)) = parse_value(REGISTRY_JSON.as_bytes(), ParseOptions::STRICT) else { return Vec::new() };
    let rows = data.get("names").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    rows.iter()
        .filter_map(|row| match (row.get("name"), row.get("issuer")) {
            (Some(Value::String(n)), Some(Value::String(i))) => Some((n.clone(), i.clone())),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issuer(names: &ProviderNames, name: &str) -> String {
        names.issuer_of(&WStr::from(name)).to_string_lossy()
    }

    #[test]
    fn registry_holds_the_rows_of_section_18_2() {
        let rows: Vec<(String, String)> =
            registry_rows().iter().map(|(n, i)| (n.to_string_lossy(), i.to_string_lossy())).collect();
        let expected = [
            ("openai", "openai"),
            ("codex", "codex"),
            ("xai", "xai"),
            ("responses", "openai"),
            ("codexresponses", "codex"),
            ("openai-codex", "codex"),
            ("openai.responses", "openai"),
        ];
        assert_eq!(rows, expected.map(|(n, i)| (n.to_string(), i.to_string())));
    }

    #[test]
    fn p4_a_listed_name_maps_to_its_issuer_and_an_unlisted_one_to_itself() {
        let names = ProviderNames::registry_only();
        assert_eq!(issuer(&names, "responses"), "openai");
        assert_eq!(issuer(&names, "codexresponses"), "codex");
        assert_eq!(issuer(&names, "azure"), "azure");
        // Exact strings: no case folding.
        assert_eq!(issuer(&names, "Responses"), "Responses");
    }

    #[test]
    fn p4_the_caller_mapping_replaces_the_registry_and_is_applied_once() {
        let (m, _) = parse_value(br#"{"responses":"azure","gateway":"responses"}"#, ParseOptions::STRICT).unwrap();
        let names = ProviderNames::with_mapping(Some(&m)).unwrap();
        assert_eq!(issuer(&names, "responses"), "azure");
        assert_eq!(issuer(&names, "gateway"), "responses");
        assert_eq!(issuer(&names, "codexresponses"), "codex");
    }

    #[test]
    fn p4_a_mapping_that_is_not_one_is_refused() {
        for bad in [r#"[]"#, r#"{"a":""}"#, r#"{"":"x"}"#, r#"{"a":1}"#] {
            let (m, _) = parse_value(bad.as_bytes(), ParseOptions::STRICT).unwrap();
            assert!(ProviderNames::with_mapping(Some(&m)).is_err(), "{bad}");
        }
        assert!(ProviderNames::with_mapping(Some(&Value::Null)).is_ok());
    }
}
