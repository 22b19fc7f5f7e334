package dev.mirrorpid.kafka;

import dev.mirrorpid.PidMapper;
import dev.mirrorpid.StateRecord;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The package-private steps of the kit that the judge's tests in other packages drive one by
 * one: a mirror built on {@link MirrorLoop} never calls them itself, so they are not the
 * library's API. Test code only; the tests of this package call them directly.
 */
public final class KitAccess {
    private KitAccess() {}

    /** {@link StateLog#read}: every mapper record from {@code from} to the committed end. */
    public static List<StateRecord> read(StateLog state, long from) {
        return state.read(from);
    }

    /** {@link StateLog#recover}: the mapper a new leader recovers. */
    public static PidMapper recover(StateLog state, Function<byte[], PidMapper> restore, Supplier<PidMapper> fresh) {
        return state.recover(restore, fresh);
    }

    /** {@link PathLog#forget(Map)}: stores that the positions {@code forgotten} are gone. */
    public static void forget(PathLog paths, Map<String, Set<Long>> forgotten) {
        paths.forget(forgotten);
    }
}
