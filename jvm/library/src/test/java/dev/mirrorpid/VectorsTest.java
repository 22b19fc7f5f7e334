package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** The shared reference vectors ({@code tests/vectors/}) through the Java API. */
class VectorsTest {
    @Test
    void everyScenarioMapsStepByStep() {
        JsonNode doc = Repo.json("tests/vectors/mapping.json");
        int steps = 0;
        for (JsonNode s : doc.get("scenarios")) {
            try (PidMapper m = Repo.mapper()) {
                for (JsonNode step : s.get("steps")) {
                    MapResult r = m.map(step.get("source").asText(), Long.parseLong(step.get("pid").asText()), 1_000);
                    assertEquals(Long.parseLong(step.get("mapped").asText()), r.mapped(), s.get("name").asText());
                    JsonNode salt = step.get("salt");
                    assertEquals(salt.isNull() ? OptionalInt.empty() : OptionalInt.of(salt.asInt()), r.salt());
                    assertEquals(!step.get("collidingCluster").isNull() && salt.asInt() > 0, r.snapshotRequired());
                    m.confirm();
                    steps++;
                }
            }
        }
        assertEquals(true, steps > 10, steps + " steps");
    }

    /**
     * Every F vector: a record (written here from {@code docs/FORMAT.md}) binds the identity
     * with the vector's salt, and the mapper then maps it to the vector's value.
     */
    @Test
    void everyFVectorThroughARecordAndAMap() {
        JsonNode doc = Repo.json("tests/vectors/mapping.json");
        int checked = 0;
        for (JsonNode v : doc.get("f")) {
            long pid = Long.parseLong(v.get("pid").asText());
            long mapped = Long.parseLong(v.get("mapped").asText());
            try (PidMapper m = Repo.mapper()) {
                LoadResult r = m.loadRecord(key(Repo.TOPIC, 0, v.get("source").asText(), pid), value(v.get("salt").asInt()));
                if (pid < 0) {
                    continue;
                }
                assertEquals(LoadResult.Outcome.BOUND, r.outcome(), v.toString());
                assertEquals(mapped, m.map(v.get("source").asText(), pid, 1).mapped(), v.toString());
                checked++;
            } catch (MirrorPidException e) {
                // A PID no record can hold (a mirrored PID at a salt, out of range): F's own
                // answer must then be the same refusal.
                assertEquals(Code.InvalidRecordPid, e.code(), v.toString());
            }
        }
        assertEquals(true, checked > 100, checked + " vectors");
    }

    @Test
    void everyRecordVectorLoadsAsItsJsonSays() {
        JsonNode doc = Repo.json("tests/vectors/records.json");
        Uuid topic = Uuid.fromString(doc.get("topicIdBase64").asText());
        for (JsonNode r : doc.get("records")) {
            byte[] key = Repo.hex(r.get("keyHex").asText());
            byte[] value = r.get("valueHex").isNull() ? null : Repo.hex(r.get("valueHex").asText());
            int partition = r.get("json").get("key").get("partition").asInt();
            try (PidMapper m = Repo.MODULE.newMapper(MapperConfig.builder(topic, partition).build());
                    PidMapper other = Repo.MODULE.newMapper(MapperConfig.builder(topic, partition == 0 ? 1 : 0).build())) {
                LoadResult.Outcome want = value == null ? LoadResult.Outcome.DELETED : LoadResult.Outcome.BOUND;
                assertEquals(want, m.loadRecord(key, value).outcome(), r.toString());
                assertEquals(LoadResult.Outcome.SKIPPED, other.loadRecord(key, value).outcome());
                assertEquals(value == null ? 0 : 1, m.size());
            }
        }
    }

    static byte[] key(Uuid topic, int partition, String source, long pid) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] s = source.getBytes(StandardCharsets.UTF_8);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(2 + 16 + 4 + 2 + s.length + 8);
        b.putShort((short) 3).putLong(topic.getMostSignificantBits()).putLong(topic.getLeastSignificantBits())
                .putInt(partition).putShort((short) s.length).put(s).putLong(pid);
        out.writeBytes(b.array());
        return out.toByteArray();
    }

    static byte[] value(int salt) {
        // version 0 | salt int64 | compact string "" (length 0 + 1) | timestamp | no tagged fields
        return java.nio.ByteBuffer.allocate(2 + 8 + 1 + 8 + 1)
                .putShort((short) 0).putLong(salt).put((byte) 1).putLong(5).put((byte) 0).array();
    }
}
