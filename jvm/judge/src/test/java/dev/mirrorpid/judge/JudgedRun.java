package dev.mirrorpid.judge;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** One judged run: fresh clusters A and B, and a lane per strategy judged (all by default). */
final class JudgedRun implements AutoCloseable {
    final SourceCluster a;
    final SourceCluster b;
    final Map<Strategy, Lane> lanes = new EnumMap<>(Strategy.class);
    final File dir;
    private final Report report;

    JudgedRun(Report report, Strategy... strategies) throws Exception {
        this(report, true, strategies);
    }

    /** As above; mirrorpid's lane appends the copies it finds when not {@code dropCopies}. */
    JudgedRun(Report report, boolean dropCopies, Strategy... strategies) throws Exception {
        this.report = report;
        dir = Files.createTempDirectory("mirrorpid-judge").toFile();
        a = SourceCluster.start("A");
        try {
            b = SourceCluster.start("B");
        } catch (Exception e) {
            a.close();
            KafkaLogs.delete(dir);
            throw e;
        }
        for (Strategy s : strategies.length == 0 ? Strategy.values() : strategies) {
            lanes.put(s, new Lane(s, new File(dir, s.name()), dropCopies));
        }
    }

    void mirror(SourceCluster source) throws Exception {
        for (Lane lane : lanes.values()) {
            lane.mirror(source);
        }
    }

    Lane lane(Strategy s) {
        return lanes.get(s);
    }

    /** Judges every lane and reports it; returns each lane's oracle verdict (null: holds). */
    Map<Strategy, String> judge(String scenario) throws Exception {
        Map<String, List<Judged.Rec>> sources = Judged.readCommitted(List.of(a, b));
        Map<Strategy, String> verdicts = new EnumMap<>(Strategy.class);
        for (Lane lane : lanes.values()) {
            String verdict = Judged.oracle(sources, lane.destination.readCommitted());
            verdicts.put(lane.strategy, verdict);
            report.row(scenario, lane, Judged.producers(lane.destination.producers()),
                    lane.refusals, verdict);
        }
        return verdicts;
    }

    @Override
    public void close() throws IOException {
        for (Lane lane : lanes.values()) {
            lane.close();
        }
        a.close();
        b.close();
        KafkaLogs.delete(dir);
    }
}
