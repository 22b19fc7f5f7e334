//! The module declares a maximum memory of 2 GiB (32,768 pages), so that
//! every address and length it returns fits a non-negative `i32`: a host
//! never reads a pointer as an error code (`docs/ABI.md`, "Memory").
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg=--max-memory=2147483648");
    }
}
