// One colour per region: a stable hue derived from the region's 22 bits, so
// a producer's mapped PID keeps its origin's colour all the way down a chain
// and a salted one (another region) changes colour. The drawing and the
// cluster-ID planner both colour with it.
import { decodePid } from "mirrorpid";

/** The hue (0 to 359) of a 22-bit region: a multiplicative hash, spread around the wheel. */
export function regionHue(region) {
  return Math.floor(((Math.imul(region, 0x9e3779b1) >>> 0) / 2 ** 32) * 360);
}

/** Background, text and edge colours of a region. */
export function regionColours(region) {
  const hue = regionHue(region);
  return {
    background: `hsl(${hue} 85% 92%)`,
    ink: `hsl(${hue} 70% 24%)`,
    edge: `hsl(${hue} 65% 45%)`,
  };
}

/**
 * How a PID is shown: `mapped` (coloured by its region), `local` (a PID as
 * a cluster allocated it, or -1 for none: grey) or `negative` (an
 * idempotent producer's PID rewritten below -1: producer state ignores it).
 */
export function pidStyle(pid) {
  const n = BigInt(pid);
  const { space, region } = decodePid(n);
  if (space === "mirrored") return { kind: "mapped", region, ...regionColours(region) };
  // -1 is "no producer" (not idempotent): nothing to track, nothing lost.
  if (n < -1n) return { kind: "negative", background: "#fdecea", ink: "#9b1c13", edge: "#d4483b" };
  return { kind: "local", background: "#eef0f4", ink: "#2b3342", edge: "#9aa3b2" };
}
