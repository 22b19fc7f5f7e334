// rewriteBatchesInPlace's fast path, added to the end of wasm-bindgen's
// glue by scripts/finish-glue.py, where `PidMapper` and `wasm` are the
// glue's own; its Rust half is src/js/fast.rs. The glue's method stays as
// the checked path, which takes every call the fast path does not
// (`inPlace` in src/js/builders.js) and words every error.
{
  const checked = PidMapper.prototype.rewriteBatchesInPlace;
  let builders = null;
  PidMapper.prototype.rewriteBatchesInPlace = function rewriteBatchesInPlace(sourceClusterId, bytes, nowMs, options) {
    if (!(this instanceof PidMapper)) return checked.call(this, sourceClusterId, bytes, nowMs, options);
    builders ??= mirrorpidBuilders(wasm.memory, PidMapper.__fastRoom);
    return builders.inPlace(this, checked, sourceClusterId, bytes, nowMs, options);
  };
}
// The builders of src/js/builders.js after the constants of
// src/js/layout.js, the same as the Rust side makes.
function mirrorpidBuilders() {
  /* src/js/builders.js */
}
