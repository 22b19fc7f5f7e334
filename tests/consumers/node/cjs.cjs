// A Node project that installed the mirrorpid tarball, in CommonJS: the
// README's example (no init() under require).
const assert = require("node:assert");
const { PidMapper, decodePid, mapPid } = require("mirrorpid");

const m = new PidMapper("bxw7Kp1OS3-KHC0-T1prfA", 0, { durability: "bindings" });
const r = m.map("A", 5n, Date.now());
assert.equal(r.mapped, 8373639764095533061n);
assert.equal(r.salt, 0);
assert.ok(r.record.key instanceof Uint8Array);
m.confirm();
const copy = PidMapper.restore(m.snapshot());
assert.equal(copy.map("A", 5n, Date.now()).mapped, r.mapped, "restored, it maps the same");
assert.equal(decodePid(r.mapped).pid40, 5n);
assert.equal(mapPid("A", 5n, 0), r.mapped);
assert.throws(() => m.map("A", 1n << 40n, 0), { message: /^PidOutOfRange: / });
console.log(`cjs: A's 5 is ${r.mapped}`);
