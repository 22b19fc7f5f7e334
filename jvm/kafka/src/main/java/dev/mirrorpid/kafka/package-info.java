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
 * checkpointed is appended again (at-least-once). A {@link dev.mirrorpid.MirrorPidException}
 * changed nothing; a refused or uncommitted append ({@code KafkaException}) appended nothing of
 * the fetch, and the fetch served again maps the same. The README's "Mirroring into a Kafka
 * partition" has the same life as code.
 *
 * <p>{@code __mirror_state} and {@code __mirror_paths} are partitions of two compacted topics
 * ({@code cleanup.policy=compact}), replicated like the destination; protect both with ACLs as
 * you protect it ({@code docs/DESIGN.md}: whoever writes {@code __mirror_state} gets past the
 * trust model).
 *
 * <h2>Copies</h2>
 *
 * Kafka does not deduplicate a follower's appends, so a batch that arrives twice (by two paths of
 * a diamond or a mesh, or again after a crash) would be written twice, and a second COMMIT or
 * ABORT would close whatever transaction its PID has open, perhaps a later one. mirrorpid maps
 * every copy of a producer's batch to one PID with one epoch and sequences, so every path carries
 * one stream per producer, as far as it got. A <b>data batch</b> is a copy when Kafka's entry
 * for its PID is past it (a higher epoch, or the same epoch and a last sequence at or beyond the
 * batch's). A <b>marker</b> is new only when the destination has a transaction open for its PID
 * that ends at the very data batch its own path carried last: a marker from a path that is
 * behind, from a path that never carried the transaction's data, or with no transaction open, is
 * a copy. What a path carried includes the batches dropped as its copies, and each path's
 * positions are in its checkpoint, so a new leader judges a lagging path's late marker as the old
 * one would have ({@code docs/KAFKA.md}, "Copies by two paths").
 *
 * <h2>Snapshots</h2>
 *
 * An optimisation: mirrorpid's ({@link dev.mirrorpid.PidMapper#snapshot()}), not Kafka's
 * producer-state snapshot, kept in a file of the broker that took it, with a small {@code
 * __mirror_state} record naming it. A new leader uses its own file only when it is the one that
 * record names, and otherwise replays every record, which maps the same. A snapshot every few
 * minutes or few thousand records keeps the replay short. The loop needs {@code bindings}
 * durability (the default) and refuses {@code collisions} with Kafka's {@code
 * InvalidConfigurationException}: a salt-0 binding without a record could go, on a leader
 * without the snapshot, to another source's producer, whose committed batches would then be
 * dropped as copies.
 *
 * <h2>Expiry and tombstones</h2>
 *
 * {@link dev.mirrorpid.kafka.MirrorLoop#expire} drops the bindings idle for the config's {@code
 * producerExpirationMs} (set it to the topic's {@code producer.id.expiration.ms}, one day by
 * default) and writes their tombstones to {@code __mirror_state}, where compaction removes the
 * records; it forgets the positions of PIDs Kafka no longer holds and no path carried for {@link
 * dev.mirrorpid.kafka.Copies#DEFAULT_HORIZON_MS}, with tombstones in the path log. A producer
 * that comes back maps to the PID it had (the same slot of F, unless a collision moved it).
 *
 * <h2>The trust declaration</h2>
 *
 * The config's origins ({@code docs/DESIGN.md}) name, per direct source, the origin clusters it
 * may carry. With them, a source's own producers (local PIDs, below 2^40) always map, and a
 * mirrored PID whose region none of its declared origins can have is refused: the whole fetch
 * fails with {@code UndeclaredOrigin} and changes nothing, while other sources flow. A direct
 * source the declaration does not name is trusted with no origin. Declare a source that carries
 * only its own producers with an empty list ({@code .origin(EAST)}); a source that mirrors
 * others with them ({@code .origin(C, A, B)}). Without a declaration every claim is believed.
 *
 * <h2>Two-way mirroring</h2>
 *
 * It needs the mirror's own cycle check: never carry a batch back into a cluster it came through
 * (MirrorMaker 2's topic naming, or a provenance header). With the pair's declaration, a batch
 * that comes back anyway is refused, loudly.
 *
 * <p>The tests in {@code jvm/judge} feed these classes real Kafka 4.4 broker processes and judge
 * every topology (fan-in, chains, diamonds, two regions, paths lagging across leader changes and
 * crashes, partitions of three replicas whose leaders die at the worst moments) with Kafka's own
 * {@code UnifiedLog} and producer state; {@code docs/KAFKA.md} has what Kafka did with each
 * strategy's batches.
 */
package dev.mirrorpid.kafka;
