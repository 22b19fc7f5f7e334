package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;

/**
 * What the simulator predicts for the judge's scenarios ({@code tests/fixtures/judge-sim.json},
 * written by {@code tests/judge_fixture.rs} from {@code tests/fixtures/judge/*.json}): a test
 * that runs the twin scenario on real Kafka compares Kafka's producer state, refusals and lost
 * writes with it, so the simulator's model answers to Kafka.
 */
final class SimFixture {
    private static final JsonNode FIXTURE = load();

    private SimFixture() {}

    private static JsonNode load() {
        File f = new File(System.getProperty("mirrorpid.root", "../.."), "tests/fixtures/judge-sim.json");
        try {
            return new ObjectMapper().readTree(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String key(Strategy s) {
        switch (s) {
            case VERBATIM:
                return "verbatim";
            case NEGATED:
                return "kip";
            default:
                return "mirrorpid";
        }
    }

    static JsonNode at(String scenario, Strategy s, String cluster) {
        JsonNode n = FIXTURE.path(scenario).path(key(s)).path(cluster);
        if (n.isMissingNode()) {
            throw new IllegalArgumentException("the fixture has no " + scenario + "/" + key(s) + "/" + cluster);
        }
        return n;
    }

    /**
     * Asserts that Kafka's producer entries at {@code cluster} (epoch and last sequence, sorted)
     * are the simulator's, and so are the local writes Kafka dropped as duplicates and the
     * appends it refused there ({@code refusals}: the lane's, for this cluster only).
     */
    static void assertSame(String scenario, Strategy s, String cluster, List<ProducerState> kafka,
            List<String> refusals) {
        JsonNode n = at(scenario, s, cluster);
        List<List<Integer>> predicted = new ArrayList<>();
        for (JsonNode e : n.path("entries")) {
            predicted.add(List.of(e.get(0).asInt(), e.get(1).asInt()));
        }
        List<List<Integer>> seen = new ArrayList<>();
        for (ProducerState p : kafka) {
            seen.add(List.of(p.producerEpoch(), p.lastSequence()));
        }
        seen.sort((x, y) -> x.get(0).equals(y.get(0)) ? x.get(1) - y.get(1) : x.get(0) - y.get(0));
        String where = scenario + ", " + s + ", at " + cluster + ": ";
        assertEquals(predicted, seen, where + "Kafka's producer entries (epoch, last sequence) against the simulator's");
        long duplicates = refusals.stream().filter(r -> r.contains("duplicate")).count();
        assertEquals(n.path("lostAsDuplicate").asLong(), duplicates, where + "local writes dropped as duplicates");
        assertEquals(n.path("refused").path("total").asLong(), refusals.size() - duplicates, where + "refusals");
    }
}
