package dev.mirrorpid;

import org.apache.kafka.common.KafkaException;

/**
 * A call the module refused: its {@link Code} and the module's message, which starts with the
 * code's name ({@code "BatchTooShort: batch at byte 245 declares length 48, below the header
 * size"}). A refused call changed nothing: not the mapper, not a byte of the caller's buffer.
 */
public class MirrorPidException extends KafkaException {
    private static final long serialVersionUID = 1L;

    /** The code; never null. */
    private final Code code;

    /** An exception for {@code code} with the module's {@code message}. */
    public MirrorPidException(Code code, String message) {
        super(message);
        this.code = java.util.Objects.requireNonNull(code, "code");
    }

    /** Which error of the module's table this is. */
    public Code code() {
        return code;
    }
}
