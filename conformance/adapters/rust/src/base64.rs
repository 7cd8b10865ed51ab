//! Standard base64 (RFC 4648 §4, with padding), for the `X_base64` byte members of the adapter
//! protocol (PROTOCOL.md "Byte members").

fn sextet(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some((c - b'A') as u32),
        b'a'..=b'z' => Some((c - b'a' + 26) as u32),
        b'0'..=b'9' => Some((c - b'0' + 52) as u32),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes padded standard base64; `None` for anything else.
pub fn decode(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let groups = text.len() / 4;
    for (g, chunk) in text.chunks_exact(4).enumerate() {
        let last = g + 1 == groups;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | sextet(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn rfc4648_test_vectors() {
        for (enc, dec) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(decode(enc.as_bytes()).unwrap(), dec.as_bytes());
        }
        assert_eq!(decode(b"77u/").unwrap(), vec![0xEF, 0xBB, 0xBF]);
    }

    #[test]
    fn rejects_malformed() {
        for bad in ["Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!A=="] {
            assert!(decode(bad.as_bytes()).is_none(), "{bad}");
        }
    }
}
