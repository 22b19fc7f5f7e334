package dev.mirrorpid;

/**
 * The module's error codes ({@code docs/ABI.md}, "Error codes"): a failed call returns {@code
 * -value}, and its message starts with the name. A test compares this table with the ABI's.
 */
public enum Code {
    /** A local PID in [2^40, 2^62): too large to map. */
    PidOutOfRange(1),
    /** All 64 salts of an identity land on other producers' slots. */
    SlotSpaceExhausted(2),
    /** Record bytes end before a complete value. */
    Truncated(3),
    /** A __mirror_state key whose apiKey is not 3. */
    UnknownApiKey(4),
    /** A record value, snapshot format or F version this build does not know. */
    UnknownVersion(5),
    /** Bytes after a complete record key or value. */
    TrailingBytes(6),
    /** A string field that is not UTF-8. */
    InvalidUtf8(7),
    /** A negative (null) length or an oversized varint. */
    InvalidLength(8),
    /** A salt outside 0 to 63 (in a record, or given to F). */
    InvalidSalt(9),
    /** A record's OriginalPid is not a mappable producer ID. */
    InvalidRecordPid(10),
    /** TopicId text that is neither base64url nor 8-4-4-4-12 hex. */
    InvalidTopicId(11),
    /** Bytes shorter than the snapshot magic, or with another magic. */
    ForeignSnapshot(12),
    /** A snapshot that is truncated, fails its checksum, or does not hold together. */
    CorruptSnapshot(13),
    /** A batch whose magic is not 0, 1 or 2. */
    UnknownMagic(14),
    /** A batchLength below 49 (v2) or 14 (magic 0 and 1). */
    BatchTooShort(15),
    /** A batch that runs past the end of a buffer declared complete. */
    BatchOverrun(16),
    /** Strict mode: a batch whose stored CRC is wrong. */
    CrcMismatch(17),
    /** A control batch without a readable marker. */
    MalformedControlBatch(18),
    /** A config, option or JSON document that cannot be used, or an empty source cluster ID. */
    InvalidInput(19),
    /** Expiry or a record load while bindings await confirm. */
    Unconfirmed(20),
    /** A mirrored PID whose region is none of its source's declared origins. */
    UndeclaredOrigin(21),
    /** A new binding or source cluster would pass a capacity limit of the mapper config. */
    CapacityExceeded(22),
    /** No mapper has this handle (never made, or freed). */
    BadHandle(100),
    /** A (pointer, length) not inside one live mp_alloc block. */
    BadPointer(101),
    /** A negative length, mp_alloc(0), unknown flag bits, or text that is not UTF-8. */
    BadArgument(102),
    /** Memory ran out (the module's, or the process's) before a call could finish. */
    OutOfMemory(103);

    private final int value;

    Code(int value) {
        this.value = value;
    }

    /** The code's number: the module returns {@code -value()}. */
    public int value() {
        return value;
    }

    /** The code a failed call's status {@code -value} names, or {@code null} if none does. */
    public static Code ofStatus(int status) {
        for (Code c : values()) {
            if (c.value == -status) {
                return c;
            }
        }
        return null;
    }
}
