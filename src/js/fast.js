// rewriteBatchesInPlace's fast path, added to the end of wasm-bindgen's
// glue by scripts/finish-glue.py, where `PidMapper` and `wasm` are the
// glue's own; its Rust half is src/js/fast.rs. The glue's method stays as
// the checked path, which takes every call the fast path does not
// (`inPlace` in src/js/builders.js) and words every error.
// The Rust half's entry points are taken off PidMapper here, so that no
// caller reaches them but this path.
{
  const proto = PidMapper.prototype;
  const checked = proto.rewriteBatchesInPlace;
  // Each entry point by the name the glue gives it, on the prototype or
  // (`room`, which needs no mapper) on the class.
  const names = {
    source: [proto, "__fastSource"],
    rewrite: [proto, "__fastRewrite"],
    rewriteHeaders: [proto, "__fastRewriteHeaders"],
    error: [proto, "__fastError"],
    records: [proto, "__fastRecords"],
    room: [PidMapper, "__fastRoom"],
  };
  const fast = {};
  for (const [key, [owner, name]] of Object.entries(names)) {
    if (typeof owner[name] !== "function") throw new Error(`mirrorpid: the glue has no fast entry point ${name}`);
    fast[key] = owner[name];
    delete owner[name];
  }
  let builders = null;
  proto.rewriteBatchesInPlace = function rewriteBatchesInPlace(sourceClusterId, bytes, nowMs, options) {
    if (!(this instanceof PidMapper)) return checked.call(this, sourceClusterId, bytes, nowMs, options);
    builders ??= mirrorpidBuilders(wasm.memory, fast);
    return builders.inPlace(this, checked, sourceClusterId, bytes, nowMs, options);
  };
}
// The builders of src/js/builders.js after the constants of
// src/js/layout.js, the same as the Rust side makes.
function mirrorpidBuilders() {
  /* src/js/builders.js */
}
