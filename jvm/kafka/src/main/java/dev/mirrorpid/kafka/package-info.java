/**
 * The mirror of one Kafka partition over {@code mirrorpid-jvm}, in Kafka's own storage types,
 * for the broker that leads the partition.
 *
 * <p>What it needs from the broker is a {@link dev.mirrorpid.kafka.Broker}: the destination's
 * high watermark, and {@code __mirror_state} and {@code __mirror_paths} appends that return once
 * committed. Kafka promises only what lies below a partition's high watermark; the kit builds
 * on nothing else. The life of a leader:
 *
 * <ol>
 *   <li><b>Become leader</b> with {@link dev.mirrorpid.kafka.MirrorLoop#lead}, once each of the
 *       three partitions has committed what its leader holds: the mapper replays the committed
 *       {@code __mirror_state} records (from this broker's snapshot when it is the latest, all
 *       of them otherwise), every path's checkpoint is read from the {@link
 *       dev.mirrorpid.kafka.PathLog}. Fetch each path from its checkpoint's {@link
 *       dev.mirrorpid.kafka.PathCheckpoint#nextOffset()}.
 *   <li><b>Mirror each fetch</b> with {@link dev.mirrorpid.kafka.MirrorLoop#mirror}: rewrite,
 *       persist and wait for the commit, confirm, drop copies ({@link
 *       dev.mirrorpid.kafka.Copies}), place, append; the next fetch starts at {@link
 *       dev.mirrorpid.kafka.MirrorLoop.Appended#nextSourceOffset()}.
 *   <li><b>Checkpoint</b> the paths once an interval, as far as the destination's high
 *       watermark: a checkpoint never names a batch the next leader could lack.
 *   <li><b>Every few minutes</b>, {@link dev.mirrorpid.kafka.MirrorLoop#expire} (idle bindings
 *       and positions, their tombstones persisted) and {@link
 *       dev.mirrorpid.kafka.MirrorLoop#snapshot} (an optimisation: a new leader without this
 *       broker's file replays every record, with the same mappings).
 *   <li><b>Stop leading</b>, or lead anew when any of the three leaders moves: close the loop's
 *       {@link dev.mirrorpid.kafka.MirrorLoop#mapper()}.
 * </ol>
 *
 * A crash of any of the three leaders at any point loses no committed record and shows none
 * twice from an idempotent or transactional producer: the next leader recovers from what was
 * committed, fetches each path again from its checkpoint and drops what the log already holds.
 * A batch without a producer ID cannot be told from its copy, so one appended and not yet
 * checkpointed is appended again (at-least-once). The README's "Mirroring into a Kafka
 * partition" has the same life as code, and what the trust declaration accepts.
 */
package dev.mirrorpid.kafka;
