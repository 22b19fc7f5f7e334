package dev.mirrorpid;

/** What {@link PidMapper#loadRecord} did with one {@code __mirror_state} record. */
public final class LoadResult {
    /** The kinds of outcome. */
    public enum Outcome {
        /** A record of another topic or partition: nothing changed. */
        SKIPPED,
        /** The identity is bound with the record's salt. */
        BOUND,
        /** Bound, and other identities holding that slot were removed (the record is newer). */
        BOUND_EVICTING,
        /** A tombstone. */
        DELETED
    }

    private final Outcome outcome;
    private final boolean undeclared;

    LoadResult(Outcome outcome, boolean undeclared) {
        this.outcome = outcome;
        this.undeclared = undeclared;
    }

    /** The outcome. */
    public Outcome outcome() {
        return outcome;
    }

    /**
     * Whether the record binds a mirrored PID its source is not declared to carry (the config's
     * origins): loaded all the same, since a leader wrote it, but whoever can write {@code
     * __mirror_state} gets past the declaration, so count these and alert.
     */
    public boolean undeclared() {
        return undeclared;
    }

    @Override
    public String toString() {
        return outcome + (undeclared ? " (undeclared)" : "");
    }
}
