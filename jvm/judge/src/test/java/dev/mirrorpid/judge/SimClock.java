package dev.mirrorpid.judge;

import java.util.function.Supplier;
import org.apache.kafka.common.utils.Time;

/**
 * Kafka's clock ({@link Time}) set by hand: a replayed scenario's logs take the scenario's time
 * for now, so that Kafka validates timestamps, and expires producers, as of the scenario's
 * events rather than of the day the test runs.
 */
final class SimClock implements Time {
    private long nowMs;

    SimClock(long startMs) {
        this.nowMs = startMs;
    }

    /** Moves the clock {@code ms} on. */
    void advance(long ms) {
        nowMs = Math.addExact(nowMs, ms);
    }

    @Override
    public long milliseconds() {
        return nowMs;
    }

    @Override
    public long nanoseconds() {
        return Math.multiplyExact(nowMs, 1_000_000L);
    }

    /** Sleeping is moving the clock on: nothing in a replay waits. */
    @Override
    public void sleep(long ms) {
        advance(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) {
            throw new IllegalStateException("a replay never waits on a condition");
        }
    }
}
