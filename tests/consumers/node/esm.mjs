// The same in an ES module, written as for the browser (await init()).
import assert from "node:assert";
import init, { PidMapper, decodePid } from "mirrorpid";

await init();
const m = new PidMapper("bxw7Kp1OS3-KHC0-T1prfA", 0, { durability: "bindings" });
const r = m.map("A", 5n, Date.now());
assert.equal(r.mapped, 8373639764095533061n);
m.confirm();
assert.equal(decodePid(r.mapped).region, 3421477);
console.log(`esm: A's 5 is ${r.mapped}`);
