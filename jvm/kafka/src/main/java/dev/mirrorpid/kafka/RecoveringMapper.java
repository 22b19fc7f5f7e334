package dev.mirrorpid.kafka;

import dev.mirrorpid.ModuleTrappedException;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import dev.mirrorpid.StateRecord;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link MirrorLoop}'s mapper, recovered when its module instance fails under it ({@link
 * ModuleTrappedException}, which fails every mapper of that instance and no other): a new one is
 * recovered from the state log's committed records, as a new leader's is, so it maps every
 * producer as before, and the call is made again on it. A failed call changed nothing (the
 * caller's buffer included), so making it again is safe. A loop given its mapper cannot recover
 * one, and rethrows.
 */
final class RecoveringMapper {
    private PidMapper mapper;
    /** A mapper recovered from the state log, or null if the loop was given its mapper. */
    private final Supplier<PidMapper> recovery;

    RecoveringMapper(PidMapper mapper, Supplier<PidMapper> recovery) {
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.recovery = recovery;
    }

    /** The mapper now. */
    PidMapper get() {
        return mapper;
    }

    RewriteResult rewrite(String path, ByteBuffer buffer, long nowMs) {
        return recovering(m -> m.rewrite(path, buffer, nowMs));
    }

    /**
     * Confirms the pending bindings, their records committed; a mapper recovered instead holds
     * them confirmed already, from those records, and confirms none.
     */
    void confirm() {
        recovering(PidMapper::confirm);
    }

    /** Takes back the pending bindings; a recovered mapper has none to take back. */
    void abort() {
        recovering(PidMapper::abort);
    }

    byte[] snapshot() {
        return recovering(PidMapper::snapshot);
    }

    List<StateRecord> expire(long nowMs) {
        return recovering(m -> m.expire(nowMs));
    }

    /** {@code call} on the mapper, and once more on a recovered one if the instance failed. */
    private <T> T recovering(Function<PidMapper, T> call) {
        try {
            return call.apply(mapper);
        } catch (ModuleTrappedException e) {
            return call.apply(recovered(e));
        }
    }

    private PidMapper recovered(ModuleTrappedException e) {
        if (recovery == null) {
            throw e;
        }
        mapper.close();
        mapper = recovery.get();
        return mapper;
    }
}
