const memory = arguments[0]; // WASM memory: its views are kept, and remade after a grow
// The layouts and numbers it reads are the constants of src/js/layout.js,
// which precede this body and are generated from their Rust definitions.
// The fast path's entry points (src/js/fast.rs), given only to the glue's
// builders by src/js/fast.js, which takes them off PidMapper: `room(n)`
// makes room in WASM memory for n bytes and returns its address, kept while
// it is large enough; the others are called on a mapper.
const fast = arguments[1];
let room = 0,
  roomSize = 0;
const control = [null, "abort", "commit", "other"];
const EAGER = 8;
// Views of all of WASM memory, made again when a grow detaches the buffer
// (a detached buffer's views have length 0): no view is made per call.
let u8 = new Uint8Array(0),
  i32 = new Int32Array(0),
  data = new DataView(new ArrayBuffer(0));
function views() {
  if (u8.length === 0) {
    u8 = new Uint8Array(memory.buffer);
    i32 = new Int32Array(memory.buffer);
    data = new DataView(memory.buffer);
  }
}
// The intrinsic getters of a typed array (a subclass's own never run).
const typed = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (name) => Object.getOwnPropertyDescriptor(typed, name).get;
const bufferOf = getter("buffer"),
  offsetOf = getter("byteOffset"),
  lengthOf = getter("byteLength");
// The element type's name ("Uint8Array" for one or a subclass's instance,
// whatever its prototype now says), undefined for anything else; and the
// intrinsic `set`, which reads a typed-array source by its slots alone.
const tagOf = getter(Symbol.toStringTag);
const setBytes = typed.set;
// A BigInt in the signed 64-bit range, or a safe integer as one; null for
// anything else.
function plainInt64(v) {
  if (typeof v === "bigint") return BigInt.asIntN(64, v) === v ? v : null;
  return Number.isSafeInteger(v) ? BigInt(v) : null;
}
// Bytes k to k + 3 of the batch at `at` of `bytes` from the batch at
// `from` of `memory8`: named one by one, which V8 copies faster than a
// loop over them.
function putWord(bytes, memory8, at, from, k) {
  bytes[at + k] = memory8[from + k];
  bytes[at + k + 1] = memory8[from + k + 1];
  bytes[at + k + 2] = memory8[from + k + 2];
  bytes[at + k + 3] = memory8[from + k + 3];
}
// The big-endian int32 at byte `at` of `bytes` (within its length).
function int32At(bytes, at) {
  return (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
}
// The number of header slots the fast path gathers `bytes` (`length`
// bytes) into: one an entry, as src/batch/headers.rs gathers them (an
// entry starts where the one before it ends by its batchLength; a window
// shorter than 12 bytes, or a negative batchLength, is the last): for
// `every` entry, or else 0 where the entries average fewer than
// WINDOWS_FROM bytes, which one copy of every byte serves better. Reads
// only the lengths, and no more of them than that average allows.
function slotsOf(bytes, length, every) {
  const most = every ? -1 : Math.floor(length / WINDOWS_FROM);
  let at = 0,
    n = 0;
  while (at < length) {
    if (n === most) return 0;
    n++;
    if (length - at < LOG_OVERHEAD) break;
    const batchLength = int32At(bytes, at + LENGTH_OFFSET);
    if (batchLength < 0) break;
    at += LOG_OVERHEAD + batchLength;
  }
  return n;
}
// Copies each entry's window of `bytes` (`length` bytes) into the slots
// from address `base`, and its length after it, as src/batch/headers.rs
// lays them out: `slots` of them at most, each entry's start found from
// the window copied before it, so that the slots agree with themselves
// whatever the array does meanwhile. Returns the number of slots filled.
function gather(bytes, length, base, slots) {
  let k = 0;
  for (let at = 0; k < slots && at < length;) {
    const slot = base + k * SLOT_BYTES;
    const n = length - at < WINDOW ? length - at : WINDOW;
    if (n === WINDOW) {
      // Four bytes at a time, big-endian as they are read.
      for (let i = 0; i < WINDOW; i += 4) data.setInt32(slot + i, int32At(bytes, at + i));
    } else {
      for (let i = 0; i < n; i++) u8[slot + i] = bytes[at + i];
    }
    data.setInt32(slot + SLOT_LEN_OFFSET, n);
    k++;
    if (n < LOG_OVERHEAD) break;
    const batchLength = data.getInt32(slot + LENGTH_OFFSET);
    if (batchLength < 0) break;
    at += LOG_OVERHEAD + batchLength;
  }
  return k;
}
// Writes into `bytes` what the rewrite whose numbers are at word `info` of
// `words` changed, from the copy of every byte at address `from` of
// `memory8`, or from the header slots there (`slotted`). A rewrite changes
// a batch's CRC and producer ID, nothing else: those of each changed batch
// are written back, at its write's offset (a PidWrite's, whose entry is
// the batch's slot), or, from a copy, all the bytes consumed where a
// changed batch comes every COPY_ALL_BELOW bytes or more often, which one
// copy serves for less.
const COPY_ALL_BELOW = 64;
function writeBack(bytes, memory8, words, info, from, slotted) {
  const consumed = words[info + INFO_CONSUMED] >>> 0,
    writes = words[info + INFO_WRITES] >>> 0,
    changed = words[info + INFO_CHANGED] >>> 0;
  if (!slotted && changed > 0 && changed * COPY_ALL_BELOW >= consumed) {
    setBytes.call(bytes, memory8.subarray(from, from + consumed));
    return;
  }
  for (let i = 0, w = writes >>> 2; i < changed; i++, w += WRITE_WORDS) {
    const at = words[w + WRITE_OFFSET] >>> 0;
    const batch = slotted ? from + (words[w + WRITE_ENTRY] >>> 0) * SLOT_BYTES : from + at;
    putWord(bytes, memory8, at, batch, CRC_OFFSET);
    putWord(bytes, memory8, at, batch, PRODUCER_ID_OFFSET);
    putWord(bytes, memory8, at, batch, PRODUCER_ID_OFFSET + 4);
  }
}
// The source each mapper's fast path last named (a mapper without one has
// none yet).
const lastSource = Symbol("mirrorpid: the fast path's last source");
// The options' keys and their bits, side by side: a key is found by
// comparing it with each, which costs V8 less than a keyed lookup in an
// object without a prototype.
const OPTION_KEYS = Object.keys(OPTION_BITS);
const OPTION_KEY_BITS = OPTION_KEYS.map((key) => OPTION_BITS[key]);
function optionBit(key) {
  for (let i = 0; i < OPTION_KEYS.length; i++) if (OPTION_KEYS[i] === key) return OPTION_KEY_BITS[i];
  return 0;
}
// The intrinsic own-key test, whatever an options object says of its own.
const hasOwn = Object.prototype.hasOwnProperty;
// The bits of `options` when the fast path can read them as the checked
// path would: null or undefined (the defaults), or an object whose
// prototype is Object.prototype with no own keys but the options', each a
// boolean; -1 for anything else, which the checked path reads and words
// the error of (a proxy or getter that throws included). The keys come
// from `for ... in`, which allocates nothing (Object.keys makes an array)
// but also lists keys inherited from a changed Object.prototype: those are
// passed over unread, as the checked path, which reads own keys only,
// passes over them (V8 answers the own-key test from the loop's key cache).
function fastFlags(options) {
  if (options == null) return OUTCOMES;
  try {
    if (typeof options !== "object" || Object.getPrototypeOf(options) !== Object.prototype) return -1;
    let flags = OUTCOMES;
    for (const key in options) {
      if (!hasOwn.call(options, key)) continue;
      const bit = optionBit(key);
      const value = options[key];
      if (bit === 0 || typeof value !== "boolean") return -1;
      flags = value ? flags | bit : flags & ~bit;
    }
    return flags;
  } catch {
    return -1;
  }
}
// The producer IDs of the last outcome built, each as its two words and
// its BigInt: a run of one producer's batches, and one producer's calls,
// make one BigInt of each instead of one a batch (a BigInt is immutable,
// so sharing one is not observable; making one is most of what an
// outcome costs).
let originalHigh = 0,
  originalLow = 0,
  originalPid = 0n,
  mappedHigh = 0,
  mappedLow = 0,
  mappedPid = 0n;
// The outcome of the batch noted at byte `b` of `view` (a DataView), as
// the rewrite noted it (src/batch/changes.rs, `Noted`): the batch's offset
// (a little-endian u32), the salt, the flags, then the base offset, the
// original and the mapped producer ID, big-endian.
function outcome(view, b) {
  const flags = view.getUint8(b + NOTED_FLAGS);
  const oHigh = view.getInt32(b + NOTED_ORIGINAL_PID),
    oLow = view.getInt32(b + NOTED_ORIGINAL_PID + 4),
    mHigh = view.getInt32(b + NOTED_MAPPED_PID),
    mLow = view.getInt32(b + NOTED_MAPPED_PID + 4);
  if (oHigh !== originalHigh || oLow !== originalLow) {
    originalHigh = oHigh;
    originalLow = oLow;
    originalPid = view.getBigInt64(b + NOTED_ORIGINAL_PID);
  }
  if (mHigh !== mappedHigh || mLow !== mappedLow) {
    mappedHigh = mHigh;
    mappedLow = mLow;
    mappedPid = view.getBigInt64(b + NOTED_MAPPED_PID);
  }
  return {
    offset: view.getUint32(b + NOTED_OFFSET, true),
    baseOffset: view.getBigInt64(b + NOTED_BASE_OFFSET),
    originalPid,
    mappedPid,
    salt: flags & NOTED_HAS_SALT ? view.getUint8(b + NOTED_SALT) : null,
    transactional: (flags & NOTED_TRANSACTIONAL) !== 0,
    control: control[(flags >> NOTED_MARKER_SHIFT) & 3],
  };
}
// The outcomes of `n` batches noted from byte `at` of `view`.
function outcomes(view, at, n) {
  if (n === 1) return [outcome(view, at)];
  const batches = new Array(n);
  for (let i = 0, b = at; i < n; i++, b += NOTED_BYTES) batches[i] = outcome(view, b);
  return batches;
}
// A RewriteResult of `n` batches whose outcomes are noted at address `at`.
function result(bytes, consumed, records, snapshotRequired, at, n) {
  if (records === undefined) records = [];
  if (n <= EAGER) {
    // A few batches (a fetch of one batch per partition is common): built
    // now, straight from WASM memory, cheaper than the copy and the lazy
    // property below.
    return { bytes, consumed, records, snapshotRequired, batches: outcomes(data, at, n) };
  }
  // The batch outcomes are built when first read: a caller that only
  // forwards the bytes and records pays for the copies, not 1000 objects.
  const noted = new DataView(memory.buffer.slice(at, at + NOTED_BYTES * n));
  const settle = (result, batches) => {
    Object.defineProperty(result, "batches", { value: batches, writable: true, enumerable: true, configurable: true });
    return batches;
  };
  return {
    bytes,
    consumed,
    records,
    snapshotRequired,
    get batches() {
      return settle(this, outcomes(noted, 0, n));
    },
    set batches(value) {
      settle(this, value);
    },
  };
}
return {
  int64(v) {
    const n = plainInt64(v);
    if (n === null) throw 0; // not a plain 64-bit integer: the caller says why
    return n;
  },
  same(a, b) {
    return a === b;
  },
  plainView(a) {
    const length = lengthOf.call(a); // throws unless a typed array
    return length === 0 ? null : new Uint8Array(bufferOf.call(a), offsetOf.call(a), length);
  },
  copyIn(view, to) {
    views();
    u8.set(view, to);
  },
  // The checked path's header windows (`view` a plain Uint8Array): how many
  // slots (slotsOf), the windows copied into the slots at `base` (returns
  // how many were filled), and the changed batches' bytes written back
  // from them once the rewrite whose numbers are at address `info` is
  // done.
  slotsOf(view, every) {
    return slotsOf(view, view.length, every);
  },
  gather(view, base, slots) {
    views();
    return gather(view, view.length, base, slots);
  },
  writeBack(view, info, base) {
    views();
    writeBack(view, u8, i32, info >>> 2, base, true);
  },
  mapResult(mapped, salt, collision, record, snapshotRequired) {
    return { mapped, salt: salt < 0 ? null : salt, collision, record, snapshotRequired };
  },
  rewriteResult(from, length, consumed, records, snapshotRequired, noted, n) {
    views();
    return result(u8.slice(from, from + length), consumed, records, snapshotRequired, noted, n);
  },
  rewriteResultInPlace(bytes, view, from, length, consumed, records, snapshotRequired, noted, n) {
    views();
    if (length > 0) view.set(u8.subarray(from, from + length));
    return result(bytes, consumed, records, snapshotRequired, noted, n);
  },
  // rewriteBatchesInPlace's fast path (src/js/fast.rs): the common call (a
  // string source, a plain 64-bit time, options fastFlags reads, a
  // Uint8Array) copied into the room, rewritten by calls that take
  // numbers, its changed bytes written back: the whole fetch, or each
  // batch's header window where the batches are large (slotsOf);
  // `checked` (the checked path, which also words every error) takes any
  // other.
  inPlace(mapper, checked, source, bytes, nowMs, options) {
    const length = tagOf.call(bytes) === "Uint8Array" ? lengthOf.call(bytes) : 0;
    const now = plainInt64(nowMs);
    const flags = typeof source === "string" && now !== null ? fastFlags(options) : -1;
    if (length === 0 || flags < 0) {
      return checked.call(mapper, source, bytes, nowMs, options);
    }
    // A strict CRC check needs the records: never the windows.
    const slots = (flags & STRICT) === 0 ? slotsOf(bytes, length, false) : 0;
    if (mapper[lastSource] !== source) {
      fast.source.call(mapper, source);
      mapper[lastSource] = source;
    }
    const need = slots > 0 ? slots * SLOT_BYTES : length;
    if (need > roomSize) {
      room = fast.room(need);
      roomSize = need;
    }
    const from = room;
    views();
    let done;
    if (slots > 0) {
      done = fast.rewriteHeaders.call(mapper, now, length, gather(bytes, length, from, slots), flags); // a freed mapper throws here
    } else {
      setBytes.call(u8, bytes, from);
      done = fast.rewrite.call(mapper, now, length, flags); // and here
    }
    if (done === 0) fast.error.call(mapper); // throws the rewrite's error
    const info = done >>> 2;
    views(); // memory may have grown
    let words = i32;
    const consumed = words[info + INFO_CONSUMED] >>> 0,
      snapshotRequired = words[info + INFO_SNAPSHOT_REQUIRED] !== 0;
    const n = words[info + INFO_BATCHES] >>> 0,
      noted = words[info + INFO_NOTED] >>> 0;
    let records;
    if (words[info + INFO_RECORDS] !== 0) {
      records = fast.records.call(mapper);
      views(); // and again while the records were made
      words = i32;
    }
    writeBack(bytes, u8, words, info, from, slots > 0);
    return result(bytes, consumed, records, snapshotRequired, noted, n);
  },
};
