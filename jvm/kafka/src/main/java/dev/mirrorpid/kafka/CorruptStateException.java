package dev.mirrorpid.kafka;

import org.apache.kafka.common.KafkaException;

/**
 * State the mirror stored that it cannot read back: a {@link PathLog} record that is truncated,
 * of an unknown version or out of range, or a {@link StateLog} snapshot file too short to hold
 * its offset. Nothing was taken from it; a new leader that meets one stops before mirroring, as
 * a leader that cannot read its own log does.
 */
public class CorruptStateException extends KafkaException {
    private static final long serialVersionUID = 1L;

    /** An exception saying what is wrong with the bytes. */
    public CorruptStateException(String message) {
        super(message);
    }
}
