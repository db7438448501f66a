//! The metadata of a GGUF model file (llama.cpp's format), read from its
//! header: enough to know how many bytes one token of context takes in the
//! KV cache. Only the header is read, never the tensors.

use std::io::{BufReader, Read};
use std::path::Path;

/// The numbers the KV cache's size follows from.
#[derive(Debug, Clone, PartialEq)]
pub struct KvShape {
    /// `<arch>.block_count`.
    pub layers: u64,
    /// `<arch>.attention.head_count_kv` (or `head_count` without GQA).
    pub kv_heads: u64,
    /// `<arch>.attention.key_length` (or embedding ÷ heads).
    pub key_length: u64,
    /// `<arch>.attention.value_length` (or embedding ÷ heads).
    pub value_length: u64,
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(r: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

fn read_string(r: &mut impl Read) -> std::io::Result<String> {
    let len = read_u64(r)?;
    if len > 1 << 20 {
        return Err(bad("a metadata string is longer than 1 MiB"));
    }
    let mut b = vec![0u8; len as usize];
    r.read_exact(&mut b)?;
    Ok(String::from_utf8_lossy(&b).into_owned())
}

/// Bytes of one scalar of a GGUF value type; None for strings and arrays.
fn scalar_size(ty: u32) -> Option<u64> {
    match ty {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// A value: integers as u64 (what the shape needs), others skipped.
/// Arrays nest at most a few levels in any real file.
fn read_value(r: &mut impl Read, ty: u32, depth: u32) -> std::io::Result<Option<u64>> {
    match ty {
        8 => read_string(r).map(|_| None),
        9 if depth >= 4 => Err(bad("metadata arrays nested too deep")),
        9 => {
            let inner = read_u32(r)?;
            let n = read_u64(r)?;
            match scalar_size(inner) {
                Some(size) => {
                    std::io::copy(&mut r.take(n.saturating_mul(size)), &mut std::io::sink())?;
                }
                None => {
                    for _ in 0..n {
                        read_value(r, inner, depth + 1)?;
                    }
                }
            }
            Ok(None)
        }
        _ => {
            let size = scalar_size(ty).ok_or_else(|| bad("unknown metadata value type"))?;
            let mut b = [0u8; 8];
            r.read_exact(&mut b[..size as usize])?;
            let v = u64::from_le_bytes(b);
            // Only unsigned and signed integers are shapes; floats and bools are not.
            Ok(matches!(ty, 0 | 1 | 2 | 3 | 4 | 5 | 10 | 11).then_some(v))
        }
    }
}

/// Read the KV shape from a GGUF file's header.
pub fn kv_shape(path: &Path) -> Result<KvShape, String> {
    // The path comes from the server: only a regular file is read.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = BufReader::new(file);
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic).map_err(err)?;
    if &magic != b"GGUF" {
        return Err(format!("{} is not a GGUF file", path.display()));
    }
    let version = read_u32(&mut r).map_err(err)?;
    if version < 2 {
        return Err(format!("{}: GGUF version {version} is too old", path.display()));
    }
    let _tensors = read_u64(&mut r).map_err(err)?;
    let kvs = read_u64(&mut r).map_err(err)?;
    let mut ints = std::collections::BTreeMap::new();
    let mut arch = String::new();
    for _ in 0..kvs.min(100_000) {
        let key = read_string(&mut r).map_err(err)?;
        let ty = read_u32(&mut r).map_err(err)?;
        if key == "general.architecture" && ty == 8 {
            arch = read_string(&mut r).map_err(err)?;
            continue;
        }
        if let Some(v) = read_value(&mut r, ty, 0).map_err(err)? {
            ints.insert(key, v);
        }
    }
    let get = |k: &str| ints.get(&format!("{arch}.{k}")).copied();
    let missing = |k: &str| format!("{}: no {arch}.{k} in the metadata", path.display());
    let layers = get("block_count").ok_or_else(|| missing("block_count"))?;
    let heads = get("attention.head_count").ok_or_else(|| missing("attention.head_count"))?;
    let kv_heads = get("attention.head_count_kv").unwrap_or(heads);
    let per_head = get("embedding_length").map(|e| e / heads.max(1));
    let key_length = get("attention.key_length").or(per_head).ok_or_else(|| missing("attention.key_length"))?;
    let value_length = get("attention.value_length").or(per_head).ok_or_else(|| missing("attention.value_length"))?;
    Ok(KvShape { layers, kv_heads, key_length, value_length })
}

/// Bytes per element of a llama.cpp KV cache type (`--cache-type-k`).
pub fn cache_type_bytes(ty: &str) -> Option<f64> {
    Some(match ty {
        "f32" => 4.0,
        "f16" | "bf16" => 2.0,
        "q8_0" => 34.0 / 32.0,
        "q5_1" => 24.0 / 32.0,
        "q5_0" => 22.0 / 32.0,
        "q4_1" => 20.0 / 32.0,
        "q4_0" | "iq4_nl" => 18.0 / 32.0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(out: &mut Vec<u8>, key: &str, ty: u32, value: &[u8]) {
        out.extend((key.len() as u64).to_le_bytes());
        out.extend(key.as_bytes());
        out.extend(ty.to_le_bytes());
        out.extend(value);
    }

    #[test]
    fn the_shape_comes_from_the_header() {
        let mut f = b"GGUF".to_vec();
        f.extend(3u32.to_le_bytes());
        f.extend(0u64.to_le_bytes());
        f.extend(6u64.to_le_bytes());
        let mut s = Vec::new();
        s.extend(5u64.to_le_bytes());
        s.extend(b"llama");
        kv(&mut f, "general.architecture", 8, &s);
        // An array of strings to skip, as tokenizers hold.
        let mut arr = 8u32.to_le_bytes().to_vec();
        arr.extend(2u64.to_le_bytes());
        for t in ["<s>", "a"] {
            arr.extend((t.len() as u64).to_le_bytes());
            arr.extend(t.as_bytes());
        }
        kv(&mut f, "tokenizer.ggml.tokens", 9, &arr);
        kv(&mut f, "llama.block_count", 4, &30u32.to_le_bytes());
        kv(&mut f, "llama.attention.head_count", 4, &9u32.to_le_bytes());
        kv(&mut f, "llama.attention.head_count_kv", 4, &3u32.to_le_bytes());
        kv(&mut f, "llama.embedding_length", 4, &576u32.to_le_bytes());
        let dir = std::env::temp_dir().join(format!("gguf-test-{}", std::process::id()));
        std::fs::write(&dir, &f).unwrap();
        let shape = kv_shape(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(shape, KvShape { layers: 30, kv_heads: 3, key_length: 64, value_length: 64 });
        assert_eq!(cache_type_bytes("f16"), Some(2.0));
        assert!(kv_shape(Path::new("/nonexistent.gguf")).is_err());
    }
}
