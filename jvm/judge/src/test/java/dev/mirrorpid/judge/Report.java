package dev.mirrorpid.judge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The judge's findings for {@code docs/KAFKA.md}: one row per scenario and strategy, written as
 * JSON to {@code target/judge/<topology>.json}; {@code scripts/kafka-doc.py} renders the
 * tables from them.
 */
final class Report {
    private final String topology;
    private final List<Map<String, Object>> rows = new ArrayList<>();

    Report(String topology) {
        this.topology = topology;
    }

    synchronized void row(String scenario, Lane lane, String producers, List<String> refusals, String oracle) {
        row(scenario, lane.label(), lane, producers, refusals, oracle);
    }

    /** As above, under the name {@code strategy} rather than the lane's. */
    synchronized void row(String scenario, String strategy, Lane lane, String producers, List<String> refusals,
            String oracle) {
        add(scenario, strategy, producers, refusals, lane.copies, "oracle", oracle == null ? "holds" : oracle);
    }

    /** A judged run's row, from what a lane left rather than the lane. */
    synchronized void judged(String scenario, String strategy, String producers, List<String> refusals, int copies,
            String oracle) {
        add(scenario, strategy, producers, refusals, copies, "oracle", oracle == null ? "holds" : oracle);
    }

    /** A replayed preset's row: its last column is whether the simulator predicted Kafka's state. */
    synchronized void row(String scenario, String strategy, String producers, List<String> refusals, int copies,
            String simulator) {
        add(scenario, strategy, producers, refusals, copies, "simulator", simulator);
    }

    private void add(String scenario, String strategy, String producers, List<String> refusals, int copies,
            String lastKey, String last) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("scenario", scenario);
        row.put("strategy", strategy);
        row.put("producers", producers);
        row.put("refused", refusals.isEmpty() ? "none" : String.join("; ", refusals));
        row.put("copies", copies);
        row.put(lastKey, last);
        rows.add(row);
    }

    synchronized void write() throws IOException {
        File dir = new File("target/judge");
        if (!dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot make " + dir);
        }
        rows.sort((x, y) -> ((String) x.get("scenario")).compareTo((String) y.get("scenario")));
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(new File(dir, topology + ".json"), rows);
    }
}
