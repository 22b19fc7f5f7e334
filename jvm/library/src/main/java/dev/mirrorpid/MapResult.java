package dev.mirrorpid;

import java.util.List;
import java.util.OptionalInt;

/** What {@link PidMapper#map} decided for one producer. */
public final class MapResult {
    private final long mapped;
    private final OptionalInt salt;
    private final List<StateRecord> records;
    private final boolean snapshotRequired;

    MapResult(long mapped, OptionalInt salt, List<StateRecord> records, boolean snapshotRequired) {
        this.mapped = mapped;
        this.salt = salt;
        this.records = List.copyOf(records);
        this.snapshotRequired = snapshotRequired;
    }

    /** The producer ID to write in the destination. */
    public long mapped() {
        return mapped;
    }

    /** The binding's salt (0 to 63); empty for a PID below 0, which maps to itself. */
    public OptionalInt salt() {
        return salt;
    }

    /** The binding's record while it is pending (none, or one): persist it, then confirm. */
    public List<StateRecord> records() {
        return records;
    }

    /** Whether the binding is a collision: take a producer-state snapshot. */
    public boolean snapshotRequired() {
        return snapshotRequired;
    }

    @Override
    public String toString() {
        return "MapResult(mapped " + mapped + ", salt " + salt + ", " + records.size() + " records)";
    }
}
