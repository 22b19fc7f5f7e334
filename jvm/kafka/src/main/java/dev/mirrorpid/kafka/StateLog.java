package dev.mirrorpid.kafka;

import dev.mirrorpid.PidMapper;
import dev.mirrorpid.StateRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.zip.CRC32C;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One partition of {@code __mirror_state}: a compacted Kafka log of the mapper's records, and
 * where the latest mapper snapshot is.
 *
 * <p>A mirror writes the records a rewrite returned here, and confirms only after this append
 * returned, which is once the records are committed ({@link Broker#awaitCommitted};
 * {@code docs/DESIGN.md}'s persistence protocol). A new leader replays the committed records
 * ({@link #recover}), from the latest snapshot on when it has it.
 *
 * <p><b>The snapshot is an optimisation, local to a broker.</b> It is kept in a file of the
 * broker that took it ({@link #storeSnapshot}), and {@code __mirror_state} holds a small record
 * that names it: the offset it covers, its length and its CRC-32C. The next leader of the
 * partition is usually another broker, which has no such file, or an older one; a leader uses
 * its file only when it is the one the latest such record names, and otherwise replays every
 * record, which gives the same mappings ({@link dev.mirrorpid.Durability#BINDINGS}: every binding
 * has its record). The snapshot is mirrorpid's ({@link PidMapper#snapshot()}), not Kafka's
 * producer-state snapshot, which Kafka takes and rebuilds by itself.
 */
public final class StateLog {
    /**
     * The key of the record that names the latest snapshot: apiKey -1, which no mapper record
     * has (theirs is 3, {@code docs/FORMAT.md}), then version 0. Its value is the {@code int64}
     * offset the snapshot covers, the {@code int32} length and the {@code int32} CRC-32C of the
     * snapshot's bytes.
     */
    private static final byte[] SNAPSHOT_KEY = {(byte) 0xff, (byte) 0xff, 0, 0};
    private static final int SNAPSHOT_VALUE_BYTES = Long.BYTES + 2 * Integer.BYTES;

    private final CompactedPartition partition;
    private final Path snapshotFile;

    /**
     * Writes to {@code log} (configured with {@code cleanup.policy=compact}), a partition of one
     * replica, as leader of {@code leaderEpoch}, on the system's clock, and keeps this broker's
     * snapshot in {@code snapshotFile}.
     */
    public StateLog(UnifiedLog log, int leaderEpoch, Path snapshotFile) {
        this(log, leaderEpoch, Broker.singleReplica(Time.SYSTEM), snapshotFile);
    }

    /**
     * Writes to {@code log} (configured with {@code cleanup.policy=compact}), which {@code
     * broker} leads in {@code leaderEpoch}, and keeps this broker's snapshot in {@code
     * snapshotFile} (replaced atomically).
     */
    public StateLog(UnifiedLog log, int leaderEpoch, Broker broker, Path snapshotFile) {
        this.partition = new CompactedPartition(log, leaderEpoch, broker);
        this.snapshotFile = Objects.requireNonNull(snapshotFile, "snapshotFile");
    }

    /** The Kafka log behind this partition. */
    private UnifiedLog log() {
        return partition.log();
    }

    /**
     * Appends {@code records} (a tombstone's value is null) in one batch and returns once they
     * are committed.
     *
     * @throws org.apache.kafka.common.KafkaException Kafka refused them, or they are not known
     *     to be committed: treat them as not written
     */
    public void append(List<StateRecord> records) {
        List<CompactedPartition.Entry> entries = new ArrayList<>(records.size());
        for (StateRecord r : records) {
            entries.add(new CompactedPartition.Entry(r.key(), r.value()));
        }
        partition.append(entries);
    }

    /**
     * Stores {@code snapshot} as the latest, covering every record before the log end now: this
     * broker's file first (the offset, then the snapshot, written beside the file and moved over
     * it), then the record that names it, returning once that is committed.
     */
    public void storeSnapshot(byte[] snapshot) {
        long covers = log().logEndOffset();
        ByteBuffer file = ByteBuffer.allocate(Long.BYTES + snapshot.length);
        file.putLong(covers).put(snapshot);
        Path tmp = snapshotFile.resolveSibling(snapshotFile.getFileName() + ".tmp");
        try {
            Files.write(tmp, file.array());
            Files.move(tmp, snapshotFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        partition.append(List.of(new CompactedPartition.Entry(SNAPSHOT_KEY.clone(), marker(covers, snapshot))));
    }

    /** The value of the record that names a snapshot of {@code snapshot} covering {@code covers}. */
    private static byte[] marker(long covers, byte[] snapshot) {
        CRC32C crc = new CRC32C();
        crc.update(snapshot);
        return ByteBuffer.allocate(SNAPSHOT_VALUE_BYTES).putLong(covers).putInt(snapshot.length)
                .putInt((int) crc.getValue()).array();
    }

    /** This broker's snapshot file with the offset it covers; empty if there is none. */
    private Optional<ByteBuffer> local() {
        try {
            return Files.exists(snapshotFile) ? Optional.of(ByteBuffer.wrap(Files.readAllBytes(snapshotFile))) : Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Every mapper record from {@code from} to the committed log end, in log order (what a new
     * leader replays); the records that name snapshots are left out.
     */
    List<StateRecord> read(long from) {
        return replayed(partition.read(from, partition.committedEnd())).records;
    }

    /** The mapper records of {@code entries}, and the value of the last record naming a snapshot. */
    private record Replayed(List<StateRecord> records, byte[] marker) {}

    private static Replayed replayed(List<CompactedPartition.Entry> entries) {
        List<StateRecord> out = new ArrayList<>(entries.size());
        byte[] marker = null;
        for (CompactedPartition.Entry e : entries) {
            if (Arrays.equals(e.key(), SNAPSHOT_KEY)) {
                marker = e.value();
            } else {
                out.add(new StateRecord(e.key(), e.value()));
            }
        }
        return new Replayed(out, marker);
    }

    /**
     * What a new leader does, once everything the log holds is committed: a mapper restored
     * from this broker's snapshot when it is the latest one stored, with the records written
     * after it replayed; otherwise {@code fresh} with every record replayed.
     *
     * @throws CorruptStateException this broker's snapshot file is too short to hold its offset
     * @throws dev.mirrorpid.MirrorPidException the module refused the snapshot or a record
     * @throws org.apache.kafka.common.KafkaException the log's end is not known to be committed
     */
    PidMapper recover(Function<byte[], PidMapper> restore, Supplier<PidMapper> fresh) {
        Optional<ByteBuffer> local = local();
        long covers = -1;
        byte[] snapshot = null;
        if (local.isPresent()) {
            ByteBuffer file = local.get();
            if (file.remaining() < Long.BYTES) {
                throw new CorruptStateException("the snapshot file " + snapshotFile + " holds " + file.remaining()
                        + " bytes, fewer than the offset it starts with");
            }
            covers = file.getLong();
            snapshot = new byte[file.remaining()];
            file.get(snapshot);
        }
        long end = partition.committedEnd();
        // The record naming this broker's snapshot comes after the offset it covers, and so
        // does any naming a newer one, which compaction keeps in its place: what lies beyond
        // that offset tells whether the snapshot is the latest.
        if (snapshot != null && covers >= 0) {
            Replayed after = replayed(partition.read(covers, end));
            if (after.marker != null && Arrays.equals(after.marker, marker(covers, snapshot))) {
                PidMapper mapper = restore.apply(snapshot);
                replay(mapper, after.records);
                return mapper;
            }
        }
        PidMapper mapper = fresh.get();
        replay(mapper, replayed(partition.read(0, end)).records);
        return mapper;
    }

    private static void replay(PidMapper mapper, List<StateRecord> records) {
        for (StateRecord r : records) {
            mapper.loadRecord(r.key(), r.value());
        }
    }
}
