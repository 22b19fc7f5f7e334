/**
 * The mirror of one Kafka partition over {@code mirrorpid-jvm}, in Kafka's own storage types,
 * for the broker that leads the partition.
 *
 * <p>The life of a leader:
 *
 * <ol>
 *   <li><b>Become leader</b> with {@link dev.mirrorpid.kafka.MirrorLoop#lead}: the mapper
 *       restored from the latest snapshot in the {@link dev.mirrorpid.kafka.StateLog} and the
 *       {@code __mirror_state} records after the offset stored with it replayed (all of them
 *       without a snapshot), every path's checkpoint read from the {@link
 *       dev.mirrorpid.kafka.PathLog}. Fetch each path from its checkpoint's {@link
 *       dev.mirrorpid.kafka.PathCheckpoint#nextOffset()}.
 *   <li><b>Mirror each fetch</b> with {@link dev.mirrorpid.kafka.MirrorLoop#mirror}: rewrite,
 *       persist, confirm, drop copies ({@link dev.mirrorpid.kafka.Copies}), place, append,
 *       checkpoint the path; the next fetch starts at {@link
 *       dev.mirrorpid.kafka.MirrorLoop.Appended#nextSourceOffset()}.
 *   <li><b>Every few minutes</b>, {@link dev.mirrorpid.kafka.MirrorLoop#expire} (idle bindings
 *       and positions, their tombstones persisted) and {@link
 *       dev.mirrorpid.kafka.MirrorLoop#snapshot} (mirrorpid's snapshot with the {@code
 *       __mirror_state} offset it covers, so a new leader's replay stays short; the loop also
 *       takes one whenever a rewrite asks).
 *   <li><b>Stop leading</b>: close the loop's {@link dev.mirrorpid.kafka.MirrorLoop#mapper()}.
 * </ol>
 *
 * A crash at any point is safe: the next leader recovers from what was durable, fetches each
 * path again from its checkpoint and drops what the log already holds. The README's "Mirroring
 * into a Kafka partition" has the same life as code, and what the trust declaration accepts.
 */
package dev.mirrorpid.kafka;
