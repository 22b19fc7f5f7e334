/**
 * mirrorpid on the JVM: every producer mirrored into a Kafka partition gets a producer ID of
 * its own, so that producers of different source clusters never share one.
 *
 * <p>This is a thin, typed adapter over the mirrorpid broker module ({@code
 * mirrorpid_broker.wasm}, packaged in this jar) running on wasmtime through the jar's JNI library
 * where it loads, and on Chicory, a WebAssembly runtime in pure Java, elsewhere. Every fact (the mapping function, the batch format, the records, the snapshots)
 * comes from the module, so the JVM, Rust and WebAssembly front ends cannot disagree; {@code
 * docs/ABI.md} in the repository documents the module byte for byte.
 *
 * <p>The entry points: {@link dev.mirrorpid.MirrorPid} loads the module once; {@link
 * dev.mirrorpid.PidMapper}, one per destination partition, maps producers and rewrites fetched
 * batches in place, in the caller's {@code ByteBuffer} or {@code MemoryRecords}, copying only
 * each batch's header into the module. The mappers share a few module instances, so a
 * partition costs the few KiB its mapper holds.
 */
package dev.mirrorpid;
