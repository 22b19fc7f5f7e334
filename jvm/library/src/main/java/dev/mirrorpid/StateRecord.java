package dev.mirrorpid;

import java.util.Arrays;
import java.util.Objects;

/**
 * One {@code __mirror_state} record as the module writes it: Kafka key bytes and value bytes,
 * {@code null} for a tombstone ({@code docs/FORMAT.md}). Produce it to the compacted {@code
 * __mirror_state} topic as a record with this key and value, and wait for it to be acknowledged
 * ({@code acks=all}) before {@link PidMapper#confirm()}.
 */
public final class StateRecord {
    private final byte[] key;
    private final byte[] value;

    /** A record of {@code key} and {@code value} ({@code null}: a tombstone); both are copied. */
    public StateRecord(byte[] key, byte[] value) {
        this.key = Objects.requireNonNull(key, "key").clone();
        this.value = value == null ? null : value.clone();
    }

    /** The key's bytes (a copy). */
    public byte[] key() {
        return key.clone();
    }

    /** The value's bytes (a copy), or {@code null} for a tombstone. */
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    /** Whether this is a tombstone (no value). */
    public boolean isTombstone() {
        return value == null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StateRecord
                && Arrays.equals(key, ((StateRecord) o).key)
                && Arrays.equals(value, ((StateRecord) o).value);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return "StateRecord(key " + key.length + " bytes, "
                + (value == null ? "tombstone" : "value " + value.length + " bytes") + ")";
    }
}
