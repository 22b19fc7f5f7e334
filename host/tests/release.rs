//! The broker module as a broker team receives it (`dist/release/`, written
//! by `scripts/build.sh`): copied alone into a temporary folder, the host
//! checks the manifest against the file (size, SHA-256, the `.sha256` line,
//! imports and exports) and the versions it expects (ABI 5, F v1), and only
//! then loads the module and maps a PID with it. A damaged byte, a wrong
//! size or a manifest for another ABI must stop it before loading.

use std::path::{Path, PathBuf};

use mirrorpid_host::BrokerModule;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The ABI this host speaks.
const ABI: i64 = mirrorpid_abi::ABI_VERSION as i64;

fn release_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/release")
}

/// What a host checks before it loads an artifact: the reason it refuses,
/// or the module's bytes.
fn checked(dir: &Path, manifest_name: &str) -> Result<Vec<u8>, String> {
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(dir.join(manifest_name)).map_err(|e| format!("{manifest_name}: {e}"))?,
    )
    .map_err(|e| format!("{manifest_name}: {e}"))?;
    let artifact = manifest["artifact"].as_str().ok_or("no artifact named")?;
    let bytes = std::fs::read(dir.join(artifact)).map_err(|e| format!("{artifact}: {e}"))?;
    if manifest["abiVersion"].as_i64() != Some(ABI) {
        return Err(format!(
            "ABI {} is not this host's {ABI}",
            manifest["abiVersion"]
        ));
    }
    if manifest["fVersion"].as_u64() != Some(u64::from(mirrorpid::pid::F_VERSION)) {
        return Err(format!(
            "F version {} is not v{}",
            manifest["fVersion"],
            mirrorpid::pid::F_VERSION
        ));
    }
    if manifest["size"].as_u64() != Some(bytes.len() as u64) {
        return Err(format!(
            "{artifact} is {} bytes, the manifest says {}",
            bytes.len(),
            manifest["size"]
        ));
    }
    let sha256: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if manifest["sha256"].as_str() != Some(sha256.as_str()) {
        return Err(format!(
            "{artifact}: SHA-256 {sha256} is not the manifest's"
        ));
    }
    let line = std::fs::read_to_string(dir.join(format!("{artifact}.sha256")))
        .map_err(|e| format!("{artifact}.sha256: {e}"))?;
    if line != format!("{sha256}  {artifact}\n") {
        return Err(format!("{artifact}.sha256 does not match"));
    }
    let mut imports = 0;
    let mut exports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        match payload.map_err(|e| e.to_string())? {
            wasmparser::Payload::ImportSection(s) => imports += s.count(),
            wasmparser::Payload::ExportSection(s) => {
                for e in s {
                    let e = e.map_err(|e| e.to_string())?;
                    if matches!(
                        e.kind,
                        wasmparser::ExternalKind::Func | wasmparser::ExternalKind::Memory
                    ) {
                        exports.push(e.name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    exports.sort();
    let listed: Vec<String> = manifest["exports"]
        .as_array()
        .ok_or("no exports listed")?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    if imports != 0 || exports != listed {
        return Err(format!(
            "{artifact}: imports {imports}, exports {exports:?}: not the manifest's"
        ));
    }
    Ok(bytes)
}

/// The release folder's files, alone in a fresh temporary folder.
fn copy_release(test: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("mirrorpid-release-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut manifest = None;
    for entry in std::fs::read_dir(release_dir()).expect("dist/release: run scripts/build.sh") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::copy(&path, dir.join(&name)).unwrap();
        if name.ends_with(".json") {
            manifest = Some(name);
        }
    }
    (dir, manifest.expect("a manifest in dist/release"))
}

#[test]
fn a_host_checks_the_manifest_and_checksum_then_loads_the_module() {
    let (dir, manifest) = copy_release("load");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        manifest,
        format!("mirrorpid_broker-{version}-abi{ABI}.json"),
        "named with version and ABI"
    );
    let bytes = checked(&dir, &manifest).unwrap_or_else(|e| panic!("refused: {e}"));
    assert_eq!(
        bytes,
        std::fs::read(mirrorpid_host::default_module_path()).unwrap(),
        "the module, byte for byte"
    );
    let module_path = dir.join(manifest.replace(".json", ".wasm"));
    let mut m = BrokerModule::load(&module_path).unwrap();
    assert_eq!(i64::from(m.abi_version()), ABI);
    let h = m
        .mapper_new(r#"{"topicId": "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c", "partition": 0}"#)
        .unwrap();
    let mapped = m.map(h, "east", 5, 1).unwrap();
    assert_eq!(
        mapped.mapped,
        mirrorpid::pid::map_pid("east", 5, 0).unwrap(),
        "F v1, as the native core"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_or_mismatched_artifact_is_refused_before_loading() {
    let (dir, manifest) = copy_release("damaged");
    let artifact = dir.join(manifest.replace(".json", ".wasm"));
    let good = std::fs::read(&artifact).unwrap();
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    std::fs::write(&artifact, &bad).unwrap();
    assert!(checked(&dir, &manifest).unwrap_err().contains("SHA-256"));
    bad.push(0);
    std::fs::write(&artifact, &bad).unwrap();
    assert!(checked(&dir, &manifest).unwrap_err().contains("bytes"));
    std::fs::write(&artifact, &good).unwrap();
    // A manifest for the next ABI.
    let text = std::fs::read_to_string(dir.join(&manifest)).unwrap();
    let (ours, next) = (
        format!("\"abiVersion\": {ABI}"),
        format!("\"abiVersion\": {}", ABI + 1),
    );
    assert!(text.contains(&ours), "{text}");
    std::fs::write(dir.join(&manifest), text.replace(&ours, &next)).unwrap();
    let refused = checked(&dir, &manifest).unwrap_err();
    assert!(refused.contains(&format!("ABI {}", ABI + 1)), "{refused}");
    std::fs::remove_dir_all(&dir).unwrap();
}
