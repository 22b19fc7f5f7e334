package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/**
 * The JVM library against the native Rust core: {@code tests/fixtures/jvm-rewrites.json} was
 * written by {@code tests/jvm_fixture.rs} (a Rust test checks it is current), and every fetch
 * of it rewritten here, in a heap and in a direct buffer (and in one whose byte order is
 * little-endian, which must not change how a batch's fields are read or written), gives the
 * same bytes, records, flags and final snapshot, in each of Chicory's modes.
 */
class FixtureTest {
    @Test
    void everyFetchRewritesAsTheRustCoreRewroteIt() {
        everyFetch(Repo.MODULE, false, ByteOrder.BIG_ENDIAN);
        everyFetch(Repo.MODULE, true, ByteOrder.BIG_ENDIAN);
        everyFetch(Repo.MODULE, false, ByteOrder.LITTLE_ENDIAN);
        everyFetch(Repo.MODULE, true, ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void andSoInEveryModeOfChicory() {
        for (MirrorPid.Mode mode : MirrorPid.Mode.values()) {
            MirrorPid module = MirrorPid.load(mode);
            assertEquals(mode, module.mode());
            everyFetch(module, false, ByteOrder.BIG_ENDIAN);
        }
    }

    private static void everyFetch(MirrorPid module, boolean direct, ByteOrder order) {
        JsonNode fixture = Repo.json("tests/fixtures/jvm-rewrites.json");
        Uuid topic = Uuid.fromString(fixture.get("config").get("topicId").asText());
        try (PidMapper m = module.newMapper(MapperConfig.builder(topic, 0).build())) {
            for (JsonNode step : fixture.get("steps")) {
                byte[] input = Repo.hex(step.get("input").asText());
                ByteBuffer fetch = direct ? ByteBuffer.allocateDirect(input.length + 7) : ByteBuffer.allocate(input.length + 7);
                fetch.order(order);
                // At a non-zero position, with bytes around it the rewrite must not touch.
                fetch.put(new byte[] {1, 2, 3}).put(input).put(new byte[] {4, 5, 6, 7});
                fetch.position(3).limit(3 + input.length);
                RewriteResult r = m.rewrite(step.get("source").asText(), fetch, step.get("nowMs").asLong());
                assertEquals(3, fetch.position(), "position unchanged");
                byte[] out = new byte[input.length];
                fetch.duplicate().get(out);
                assertEquals(step.get("output").asText(), Repo.hex(out), step.toString());
                assertEquals(step.get("consumed").asInt(), r.consumed());
                assertEquals(step.get("snapshotRequired").asBoolean(), r.snapshotRequired());
                List<StateRecord> expected = new ArrayList<>();
                for (JsonNode rec : step.get("records")) {
                    JsonNode v = rec.get("value");
                    expected.add(new StateRecord(Repo.hex(rec.get("key").asText()), v.isNull() ? null : Repo.hex(v.asText())));
                }
                assertEquals(expected, r.records());
                byte[] around = new byte[7];
                fetch.clear();
                fetch.get(0, around, 0, 3);
                fetch.get(3 + input.length, around, 3, 4);
                assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7}, around);
                // Every new binding writes a record (durability "bindings"): as many to confirm.
                assertEquals(r.records().size(), m.confirm());
            }
            assertEquals(fixture.get("snapshot").asText(), Repo.hex(m.snapshot()));
        }
    }
}
