// A TypeScript project that installed the mirrorpid tarball: the README's
// example, type-checked against the package's own declarations (through
// its `exports`, as Node's ES-module resolution sees them).
import init, { PidMapper, decodePid, type MapResult, type PidInfo } from "mirrorpid";

await init();
const m: PidMapper = new PidMapper("bxw7Kp1OS3-KHC0-T1prfA", 0, { durability: "bindings" });
const r: MapResult = m.map("A", 5n, Date.now());
const mapped: bigint = r.mapped;
const salt: number | null = r.salt;
m.confirm();
const info: PidInfo = decodePid(mapped);
const region: number | null = info.region;
console.log(mapped, salt, region);
