// The PID and __mirror_state record decoders.
import { decodePid, decodeRecord, regionOwners } from "mirrorpid";
import { $, h } from "./dom.js";

function parseHex(text, what) {
  const clean = text.replace(/\s+/g, "").replace(/^0x/i, "");
  if (clean.length % 2 || /[^0-9a-f]/i.test(clean)) throw new Error(`${what}: not hex (odd length or a non-hex digit)`);
  return Uint8Array.from(clean.match(/../g) || [], (b) => parseInt(b, 16));
}

/** A PID's 64 bits in hex, as Kafka's tools and the CLI print them (-5: 0xff…fb). */
export function pidHex(pid) {
  return "0x" + BigInt.asUintN(64, pid).toString(16).padStart(16, "0");
}

/**
 * Which of `clusters` a mapped PID's region belongs to: a cluster's own
 * producers at each salt, and producers mirrored from it and re-salted by
 * a later hop (the package's `regionOwners`, as the CLI's `pid decode
 * --clusters` says it).
 */
export function originsOf(region, clusters) {
  return regionOwners(region, clusters.join("\n")).map(({ cluster, salt, via }) =>
    via === "local" ? `${cluster} (salt ${salt})` : `${cluster} (re-salted ${salt})`,
  );
}

/** Decodes the form's PID; `scenario()` names the clusters a region may belong to. */
export function decodePidForm(event, scenario) {
  event.preventDefault();
  const out = $("#pid-out");
  const text = event.target.pid.value.trim();
  try {
    if (!/^-?\d+$|^0x[0-9a-f]+$/i.test(text)) throw new Error("Enter a PID as a decimal integer or 0x-prefixed hex.");
    const info = decodePid(BigInt(text));
    const pid = BigInt(info.pid);
    const rows = [
      [
        "space",
        {
          noProducer: "no producer (pid < 0): passes untouched",
          local: "local PID of the source cluster: mapped by F",
          outOfRange: "local PID ≥ 2^40: PidOutOfRange",
          mirrored: "mapped by an upstream hop (bit 62 set)",
        }[info.space],
      ],
      ["decimal", info.pid],
      ["hex", pidHex(pid)],
    ];
    if (info.region !== null)
      rows.push(["region", "0x" + info.region.toString(16).padStart(6, "0") + ` (${info.region})`]);
    if (info.pid40 !== null) rows.push(["pid40", info.pid40]);
    if (info.space === "mirrored") {
      const clusters = (scenario?.()?.clusters ?? []).map((c) => c.id);
      const found = originsOf(info.region, clusters);
      rows.push([
        "origin",
        found.length
          ? found.join(", ")
          : clusters.length
            ? `none of this scenario's clusters (${clusters.join(", ")})`
            : "unknown: no clusters to compare with",
      ]);
    }
    out.replaceChildren(h("dl", {}, ...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
    out.classList.remove("bad");
  } catch (e) {
    out.textContent = String(e.message || e);
    out.classList.add("bad");
  }
}

export function decodeRecordForm(event) {
  event.preventDefault();
  const out = $("#record-out");
  try {
    const key = parseHex(event.target.key.value, "key");
    const valueText = event.target.value.value.trim();
    const value = valueText ? parseHex(valueText, "value") : null;
    out.textContent = JSON.stringify(decodeRecord(key, value), null, 2);
    out.classList.remove("bad");
  } catch (e) {
    out.textContent = String(e.message || e);
    out.classList.add("bad");
  }
}
