package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every playground preset, replayed batch for batch into Kafka's own logs ({@link PresetRun}),
 * must leave at every cluster, under every strategy, what the simulator predicts there ({@code
 * tests/fixtures/judge-sim.json}, {@code preset/<name>}): Kafka's producer entries (epoch and
 * last sequence), the appends it refused by kind, the local writes it took for duplicates, and
 * the copies by a second path that mirrorpid's host dropped.
 * So the page's counts are Kafka's.
 */
class PresetTest {
    private static final Report REPORT = new Report("presets");

    @TestFactory
    Stream<DynamicTest> everyPresetLeavesKafkaWhereTheSimulatorSays() throws IOException {
        return scenarios("www/presets").map(f -> DynamicTest.dynamicTest(f.getName(), () -> replay(f, "preset/", true)));
    }

    /**
     * The twins of the real-cluster tests ({@code tests/fixtures/judge/}), replayed the same way:
     * the replay and the real clusters must agree with the simulator alike.
     */
    @TestFactory
    Stream<DynamicTest> theJudgesTwinsReplayAsTheSimulatorSays() throws IOException {
        return scenarios("tests/fixtures/judge").map(f -> DynamicTest.dynamicTest(f.getName(), () -> replay(f, "", false)));
    }

    private static Stream<File> scenarios(String under) throws IOException {
        File dir = new File(System.getProperty("mirrorpid.root", "../.."), under);
        File[] files = dir.listFiles((d, n) -> n.endsWith(".json") && !n.equals("index.json"));
        if (files == null || files.length == 0) {
            throw new IOException("no scenarios in " + dir);
        }
        Arrays.sort(files);
        return Arrays.stream(files);
    }

    private static void replay(File file, String prefix, boolean report) throws IOException {
        String name = file.getName().replace(".json", "");
        JsonNode scenario = new ObjectMapper().readTree(file);
        try (PresetRun run = new PresetRun(scenario)) {
            run.run(scenario);
            for (Strategy s : Strategy.values()) {
                Map<String, String> predicted = new TreeMap<>();
                for (String c : run.clusters()) {
                    predicted.put(c, PresetRun.describe(SimFixture.at(prefix + name, s, c)));
                }
                Map<String, String> kafka = run.verdict(s);
                List<String> refused = new ArrayList<>();
                int copies = 0;
                for (int c = 0; c < run.clusters().size(); c++) {
                    Lane lane = run.lane(s, c);
                    for (String r : lane.refusals) {
                        refused.add("at " + run.clusters().get(c) + ": " + r);
                    }
                    copies += lane.copies;
                }
                if (report) {
                    REPORT.row(name, s.label(), entries(run, s), refused, copies,
                            predicted.equals(kafka) ? "agrees" : "DISAGREES");
                }
                assertEquals(predicted, kafka, name + ", " + s + ": the simulator's prediction against Kafka's logs");
            }
        }
    }

    /** Kafka's producer entries, cluster by cluster (counted, for a topology of many clusters). */
    private static String entries(PresetRun run, Strategy s) {
        List<String> out = new ArrayList<>();
        int total = 0;
        for (int c = 0; c < run.clusters().size(); c++) {
            List<org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState> at =
                    run.lane(s, c).destination.producers();
            total += at.size();
            if (!at.isEmpty()) {
                List<String> e = new ArrayList<>();
                for (var p : at) {
                    e.add(p.producerEpoch() + "/" + p.lastSequence() + (p.currentTxnStartOffset() >= 0 ? " open txn" : ""));
                }
                out.add("at " + run.clusters().get(c) + ": " + String.join(", ", e));
            }
        }
        if (run.clusters().size() > 6) {
            return total + " entries over " + out.size() + " clusters";
        }
        return out.isEmpty() ? "none" : String.join(" / ", out);
    }

    @AfterAll
    static void write() throws IOException {
        REPORT.write();
    }
}
