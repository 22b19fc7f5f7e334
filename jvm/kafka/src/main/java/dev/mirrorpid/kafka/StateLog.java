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
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One partition of {@code __mirror_state}: a compacted Kafka log of the mapper's records, and
 * the latest mapper snapshot with the {@code __mirror_state} offset it covers.
 *
 * <p>A mirror writes the records a rewrite returned here, and confirms only after this append
 * returned ({@code docs/DESIGN.md}'s persistence protocol). A new leader restores the latest
 * {@link #storeSnapshot stored} snapshot and replays the records from its offset on ({@link
 * #recover}); without a snapshot it replays them all. The snapshot is mirrorpid's ({@link
 * PidMapper#snapshot()}), not Kafka's producer-state snapshot, which Kafka takes and rebuilds
 * by itself.
 */
public final class StateLog {
    private final CompactedPartition partition;
    private final Path snapshotFile;

    /**
     * Writes to {@code log} (configured with {@code cleanup.policy=compact}) as leader of {@code
     * leaderEpoch}, and keeps the latest snapshot in {@code snapshotFile} (replaced atomically),
     * where the next leader finds it.
     */
    public StateLog(UnifiedLog log, int leaderEpoch, Path snapshotFile) {
        this.partition = new CompactedPartition(log, leaderEpoch);
        this.snapshotFile = Objects.requireNonNull(snapshotFile, "snapshotFile");
    }

    /** The Kafka log behind this partition. */
    public UnifiedLog log() {
        return partition.log();
    }

    /**
     * Appends {@code records} (a tombstone's value is null) in one batch and returns once Kafka's
     * log holds them.
     */
    public void append(List<StateRecord> records) {
        List<CompactedPartition.Entry> entries = new ArrayList<>(records.size());
        for (StateRecord r : records) {
            entries.add(new CompactedPartition.Entry(r.key(), r.value()));
        }
        partition.append(entries);
    }

    /**
     * Stores {@code snapshot} as the latest, covering every record before the log end now: the
     * offset first, then the snapshot, written beside the file and moved over it.
     */
    public void storeSnapshot(byte[] snapshot) {
        ByteBuffer file = ByteBuffer.allocate(Long.BYTES + snapshot.length);
        file.putLong(log().logEndOffset()).put(snapshot);
        Path tmp = snapshotFile.resolveSibling(snapshotFile.getFileName() + ".tmp");
        try {
            Files.write(tmp, file.array());
            Files.move(tmp, snapshotFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The latest stored snapshot with the offset it covers up to; empty if none was stored. */
    private Optional<ByteBuffer> latest() {
        try {
            return Files.exists(snapshotFile) ? Optional.of(ByteBuffer.wrap(Files.readAllBytes(snapshotFile))) : Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every record from {@code from} to the log end, in log order (what a new leader replays). */
    public List<StateRecord> read(long from) {
        List<StateRecord> out = new ArrayList<>();
        for (CompactedPartition.Entry e : partition.read(from)) {
            out.add(new StateRecord(e.key(), e.value()));
        }
        return out;
    }

    /**
     * What a new leader does: a mapper restored from the latest snapshot (or {@code fresh} when
     * there is none), with every record written after the snapshot replayed into it.
     *
     * @throws CorruptStateException the snapshot file is too short to hold its offset
     * @throws dev.mirrorpid.MirrorPidException the module refused the snapshot or a record
     */
    public PidMapper recover(Function<byte[], PidMapper> restore, Supplier<PidMapper> fresh) {
        Optional<ByteBuffer> latest = latest();
        long from = 0;
        PidMapper mapper;
        if (latest.isPresent()) {
            ByteBuffer file = latest.get();
            if (file.remaining() < Long.BYTES) {
                throw new CorruptStateException("the snapshot file " + snapshotFile + " holds " + file.remaining()
                        + " bytes, fewer than the offset it starts with");
            }
            from = file.getLong();
            byte[] snapshot = new byte[file.remaining()];
            file.get(snapshot);
            mapper = restore.apply(snapshot);
        } else {
            mapper = fresh.get();
        }
        for (StateRecord r : read(from)) {
            mapper.loadRecord(r.key(), r.value());
        }
        return mapper;
    }
}
