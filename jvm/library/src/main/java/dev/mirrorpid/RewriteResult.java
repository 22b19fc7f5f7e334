package dev.mirrorpid;

import java.util.List;

/**
 * What a rewrite did to one fetch. Persist {@link #records()} (all of them, {@code acks=all}),
 * then {@link PidMapper#confirm()}, then append the first {@link #consumed()} bytes: the
 * persistence protocol of {@code docs/ABI.md}.
 */
public final class RewriteResult {
    private final int consumed;
    private final List<StateRecord> records;
    private final boolean snapshotRequired;

    RewriteResult(int consumed, List<StateRecord> records, boolean snapshotRequired) {
        this.consumed = consumed;
        this.records = List.copyOf(records);
        this.snapshotRequired = snapshotRequired;
    }

    /** Bytes of complete entries from the buffer's position; the rest is a truncated tail. */
    public int consumed() {
        return consumed;
    }

    /** The {@code __mirror_state} records of every pending binding the fetch used, in order. */
    public List<StateRecord> records() {
        return records;
    }

    /** Whether one of them is a collision: take a producer-state snapshot. */
    public boolean snapshotRequired() {
        return snapshotRequired;
    }

    @Override
    public String toString() {
        return "RewriteResult(consumed " + consumed + ", " + records.size() + " records"
                + (snapshotRequired ? ", snapshot required)" : ")");
    }
}
